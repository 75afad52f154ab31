"""Property tests: any manifest-shaped input is accepted or refused with exit 2 — never a traceback."""

from __future__ import annotations

import tempfile
from pathlib import Path

import jsonschema
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carrytool.errors import ManifestError
from carrytool.manifest.load import load_manifest
from carrytool.manifest.schema import manifest_schema
from tests.conftest import Cli

KEYS = ["version", "upstream", "fork", "identity", "policy", "entries", "asserts", "url", "branch", "pr_ref",
        "pr", "carry", "commit", "patch", "head", "supersedes", "owns", "excludes", "paths", "on_conflict",
        "enabled", "file", "in", "calls", "times", "min", "max", "order", "matches", "guarded_by", "name",
        "precompiled", "entry", "why", "not_calls", "title", "on_missing", "x"]
# st.text()'s own alphabet, characters(codec="utf-8"), is every character but the surrogates (category Cs);
# named by category, Hypothesis need not test all 1.1 million characters against the codec in a fresh
# checkout (several seconds; cached in .hypothesis/ only for the next run).
TEXT = st.characters(exclude_categories=("Cs",))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**12), st.floats(allow_nan=True),
                    st.sampled_from(["main", "-x", "..", "a/../b", "/abs", "refs/pull/{number}/head", "{number}",
                                     "abc1234", "ext::sh", "1a2b3c4d", "Worker.wake_up", "(", "**/*.cu", ""]),
                    st.text(TEXT, max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)), max_leaves=25)


SCHEMA = manifest_schema()


def base_document(draw_entries: list, draw_asserts: list, top: dict) -> dict:
    doc = {"version": 1, "upstream": {"url": "../up"}, "fork": {"branch": "dev"},
           "entries": draw_entries, "asserts": draw_asserts}
    doc.update(top)
    return doc


# 150 manifests a run, drawn anew on each run (CI's two passes: 300); the slowest single test of the suite at 300
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=st.lists(st.one_of(values, st.fixed_dictionaries({"pr": values}),
                                  st.fixed_dictionaries({"carry": values, "commit": values})), max_size=4),
       asserts=st.lists(st.one_of(values, st.fixed_dictionaries({"file": values, "calls": values})), max_size=3),
       top=st.dictionaries(st.sampled_from(KEYS), values, max_size=3))
def test_generated_manifests_load_or_fail_cleanly(entries: list, asserts: list, top: dict) -> None:
    text = yaml.safe_dump(base_document(entries, asserts, top), allow_unicode=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.yaml"
        path.write_text(text)
        try:
            manifest = load_manifest(path)
        except ManifestError as exc:
            assert exc.exit_code == 2 and str(exc)
            return
    # accepted: then the document is one the published schema accepts too, and nothing was lost on the way
    document = yaml.safe_load(text)
    jsonschema.validate(document, SCHEMA)
    assert [e.id for e in manifest.entries] == [
        f"pr/{e['pr']}" if "pr" in e else f"carry/{e['carry']}" for e in document["entries"]]
    assert len(manifest.asserts) == len(document["asserts"])
    assert manifest.upstream.url == document["upstream"]["url"] and manifest.fork.branch == document["fork"]["branch"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_fail_cleanly(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.yaml"
        path.write_bytes(data)
        try:
            load_manifest(path)
        except ManifestError as exc:
            assert exc.exit_code == 2


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), values, max_size=4))
def test_check_command_never_shows_a_traceback(top: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.yaml"
        path.write_text(yaml.safe_dump(base_document([], [], top)))
        result = Cli()("check", "-m", str(path))
        assert "Traceback" not in result.stderr
        try:
            load_manifest(path)
        except ManifestError as exc:
            assert result.exit_code == 2 and str(path) in result.stderr and exc.message in result.stderr
        else:
            assert result.exit_code == 0 and result.stdout.startswith(f"{path}: ok (")
