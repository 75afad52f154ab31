"""Manifests parsed before, kept by their text (pipeline.keptyaml): the next sync of the same manifest reads
what the parse gave, with every line and raw text, without importing PyYAML; a changed text, a corrupt or
forged file, a manifest with an error, are parsed again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from carrytool.errors import ManifestError
from carrytool.manifest import yamlload
from carrytool.manifest.load import load_manifest
from carrytool.pipeline import keptyaml
from carrytool.pipeline.keptyaml import KeptYaml, decode, encode
from tests.conftest import Cli, Small
from tests.manifest.test_yaml_loaders import ROOT, TRICKY, _shape

VERSION = (2, 39, 5)


def _text(source: str, tmp_path: Path) -> str:
    if source == "tricky":
        return TRICKY
    if source == "demo":
        from carrytool.demo.scenario import build

        return build(tmp_path / "demo").manifest.read_text()
    return (ROOT / source).read_text()


@pytest.mark.parametrize("source", ["tricky", "carries/vllm-intarweb.yaml", "demo"])
def test_a_kept_document_reads_back_as_the_parse_gave_it(source: str, tmp_path: Path) -> None:
    text = _text(source, tmp_path)
    parsed = yamlload.load_yaml(text, "m.yaml")
    raw = json.loads(json.dumps(encode(parsed)))        # as the file holds it
    assert _shape(decode(raw)) == _shape(parsed)
    # and through the keeper, on disk: a second keeper (the next run) finds it
    first = KeptYaml(tmp_path / "cache", VERSION)
    assert first.find(text) is None
    assert _shape(yamlload.load_yaml(text, "m.yaml", first)) == _shape(parsed)
    first.save()
    second = KeptYaml(tmp_path / "cache", VERSION)
    found = second.find(text)
    assert found is not None and _shape(found) == _shape(parsed)
    assert second.find(text) is not found           # new objects each time: a caller may change them
    assert second.find(text + "# another text\n") is None


@pytest.mark.parametrize("value", [float("inf"), float("nan"), b"bytes", {1, 2}])
def test_values_json_would_not_give_back_are_not_kept(value: object) -> None:
    doc = yamlload.load_yaml("a: 1\nb: [x]\n", "m.yaml")
    doc["b"].append(value)
    doc["b"].item_lines.append(3)
    doc["b"].raw.append(None)
    assert encode(doc) is None
    assert encode(yamlload.load_yaml("a: 1\nb: [x]\n", "m.yaml")) is not None


@pytest.mark.parametrize("raw", [
    None, [], "x", {"m": "nope", "l": 1}, {"m": [["a", 1, "two", None]], "l": 1},
    {"m": [["a", 1, 1, None], ["a", 2, 2, None]], "l": 1},          # a key twice
    {"m": [["a", {"s": [1], "l": 1, "i": [], "r": [None]}, 1, None]], "l": 1},   # lines missing
    {"m": [["a", [1, 2], 1, None]], "l": 1},                         # a bare list is no kept sequence
    {"s": [], "l": 1, "i": [], "r": []},                             # a sequence is no manifest
    {"m": [["a", 1, True, None]], "l": 1},                           # a bool is no line
])
def test_a_kept_entry_of_the_wrong_shape_is_not_a_document(raw: object) -> None:
    assert decode(raw) is None


def test_a_corrupt_or_forged_file_is_parsed_again(tmp_path: Path) -> None:
    text = "version: 1\nentries: [{pr: 1}]\n"
    keeper = KeptYaml(tmp_path, VERSION)
    yamlload.load_yaml(text, "m.yaml", keeper)
    keeper.save()
    [path] = tmp_path.glob("yaml-git2.39.5.json")
    for bad in ("{", '{"yaml": []}', json.dumps({"yaml": {k: {"m": 1} for k in json.loads(path.read_text())["yaml"]}})):
        path.write_text(bad)
        again = KeptYaml(tmp_path, VERSION)
        assert again.find(text) is None
        assert yamlload.load_yaml(text, "m.yaml", again) == {"version": 1, "entries": [{"pr": 1}]}


def test_a_manifest_with_an_error_is_never_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("version: 1\nentries: [{pr: 1}\n")
    keeper = KeptYaml(tmp_path / "cache", VERSION)
    for _ in range(2):
        with pytest.raises(ManifestError, match="not valid YAML"):
            load_manifest(path, keeper)
    keeper.save()
    assert not (tmp_path / "cache").exists()


CLEAN = "version: 1\nupstream:\n  url: https://example.invalid/up.git\n  branch: main\nentries: []\n"


def _with_url(url: str) -> str:
    return f"version: 1\nupstream:\n  url: {url}\n  branch: main\nfork:\n  branch: b\nentries: []\n"


def _cache_text(folder: Path) -> str:
    return "".join(p.read_text() for p in folder.iterdir()) if folder.exists() else ""


@pytest.mark.parametrize("url", ["https://user:s3cret@example.invalid/up.git", "https://s3cret@example.invalid/up.git",
                                 "https://example.invalid/up.git?access_token=s3cret",
                                 '"https://user:s3cret\\x40example.invalid/up.git"'])
def test_a_manifest_holding_a_credential_is_never_written_to_the_cache(url: str, tmp_path: Path) -> None:
    """A token in a URL of the manifest stays where the user put it: the parse is not copied into the git dir's
    cache, where it would outlive the token's removal from the manifest (credentials as gitlayer.urls.redact
    reads them; in the values too: `\\x40` is `@` in a double-quoted YAML string, h269's review)."""
    kept = KeptYaml(tmp_path / "cache", VERSION)
    parsed = yamlload.load_yaml(_with_url(url), "m.yaml", kept)
    assert "s3cret" in parsed["upstream"]["url"]
    kept.save()
    assert "s3cret" not in _cache_text(tmp_path / "cache")
    assert KeptYaml(tmp_path / "cache", VERSION).find(_with_url(url)) is None
    assert yamlload.load_yaml(CLEAN, "m.yaml", kept) is not None     # a text without one is kept
    kept.save()
    assert KeptYaml(tmp_path / "cache", VERSION).find(CLEAN) is not None


def test_an_earlier_carrytool_s_documents_go_at_the_next_write_unread(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Files an earlier carrytool wrote (no mark: it kept credentials) hold no answer and are rewritten whole at
    the next write; a file of another git version without the mark goes then (after a git upgrade nothing would
    rewrite it). No document of theirs is read or searched for credentials (h269's review: 95 ms a write)."""
    folder = tmp_path / "cache"
    folder.mkdir()
    old = {"yaml": {"k" * 40: encode(yamlload.load_yaml(_with_url("https://u:s3cret@h.invalid/x"), "m.yaml"))}}
    (folder / "yaml-git2.39.5.json").write_text(json.dumps(old))
    (folder / "yaml-git2.30.0.json").write_text(json.dumps(old))          # another git's, never written again
    (folder / "merges-git2.30.0.json").write_text(json.dumps({"merges": {}}))     # not ours to judge
    calls: list[str] = []
    real = keptyaml._credential
    monkeypatch.setattr(keptyaml, "_credential", lambda text: calls.append(text) or real(text))
    kept = KeptYaml(folder, VERSION)
    assert kept.find(_with_url("https://u:s3cret@h.invalid/x")) is None
    yamlload.load_yaml(CLEAN, "m.yaml", kept)
    kept.save()
    assert len(calls) == 1                  # the document kept, nothing of the old file
    assert "s3cret" not in _cache_text(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["merges-git2.30.0.json", "yaml-git2.39.5.json"]
    assert KeptYaml(folder, VERSION).find(CLEAN) is not None
    # a marked file of another git version stays
    other = KeptYaml(folder, (2, 47, 3))
    yamlload.load_yaml(CLEAN, "m.yaml", other)
    other.save()
    kept = KeptYaml(folder, VERSION)
    yamlload.load_yaml(CLEAN + "# again\n", "m.yaml", kept)
    kept.save()
    assert sorted(p.name for p in folder.iterdir()) == ["merges-git2.30.0.json", "yaml-git2.39.5.json",
                                                         "yaml-git2.47.3.json"]


def test_without_pyyaml_found_nothing_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keptyaml, "_pyyaml", lambda: None)
    keeper = KeptYaml(tmp_path, VERSION)
    yamlload.load_yaml("a: 1\n", "m.yaml", keeper)
    keeper.save()
    assert list(tmp_path.iterdir()) == []


def test_pyyaml_changed_is_another_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "a: 1\n"
    keeper = KeptYaml(tmp_path, VERSION)
    yamlload.load_yaml(text, "m.yaml", keeper)
    keeper.save()
    assert KeptYaml(tmp_path, VERSION).find(text) == {"a": 1}
    found = keptyaml._pyyaml()
    assert found is not None
    monkeypatch.setattr(keptyaml, "_pyyaml", lambda: [*found, "another PyYAML"])
    assert KeptYaml(tmp_path, VERSION).find(text) is None


def _sync_modules(small: Small, *args: str) -> tuple[dict, list[str]]:
    """`carrytool sync` in a process of its own: its report, and which of PyYAML's modules it imported."""
    code = ("import sys\nfrom carrytool.__main__ import main\nsys.argv = ['carrytool', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m == 'yaml' or m.startswith('yaml.')), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code, "sync", "-m", str(small.manifest_path), "--repo",
                           str(small.work.path), "--format", "json", *args], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), json.loads(done.stderr.strip().splitlines()[-1].replace("'", '"'))


def test_the_next_sync_of_the_same_manifest_imports_no_yaml(small: Small) -> None:
    small.pr(1, {"b.py": "x = 1\ny = 20\nz = 3\n"})
    small.manifest([{"pr": 1}])
    dry, modules = _sync_modules(small, "--dry-run")
    assert "yaml" in modules
    assert not (small.work.path / "carrytool" / "cache").exists() or \
        not list((small.work.path / "carrytool" / "cache").glob("yaml-git*"))      # a dry run writes nothing
    first, modules = _sync_modules(small)
    assert "yaml" in modules
    assert list((small.work.path / "carrytool" / "cache").glob("yaml-git*.json"))
    second, modules = _sync_modules(small)
    assert modules == []
    assert second["result"]["sha"] == first["result"]["sha"] == dry["result"]["sha"]
    assert [s["status"] for s in second["entries"]] == [s["status"] for s in first["entries"]] == ["applied"]
    # the manifest changed: parsed again, and its change is what sync composes
    small.pr(2, {"docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    third, modules = _sync_modules(small)
    assert "yaml" in modules
    assert [s["id"] for s in third["entries"]] == ["pr/1", "pr/2"]


def test_a_bad_manifest_is_still_named_before_a_bad_repository(cli: Cli, tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("version: 1\nentries: [\n")
    result = cli("sync", "-m", manifest, "--repo", tmp_path / "nowhere")
    assert result.exit_code == 2 and "not valid YAML" in result.stderr and "nowhere" not in result.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    result = cli("sync", "-m", manifest, "--repo", plain)
    assert result.exit_code == 2 and "not valid YAML" in result.stderr and "not a git repository" not in result.stderr
    manifest.write_text("version: 1\nupstream: {url: ../up, branch: main}\nfork: {branch: dev}\nentries: []\n")
    result = cli("sync", "-m", manifest, "--repo", plain)
    assert result.exit_code != 0 and "not a git repository" in result.stderr
