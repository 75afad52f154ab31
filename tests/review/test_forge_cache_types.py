"""The forge cache (`<git-dir>/carrytool/forge-cache.json`) holding JSON of the wrong types, as a hand edit or a
forge's odd answer leaves it: `status --offline` read a cached answer that is not an object, a PR whose `head` is
a string, a `merge_commit_sha` or `head.sha` that is a number, a labels page that is not a list, a `next` page
that is not a URL, and ended in a traceback (TypeError, AttributeError: exit 70; h246). Each is read as the
forge saying nothing of that field."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli
from tests.fakeforge import FakeForge
from tests.review.test_status import Forge, _status, forge  # noqa: F401  (the fixture)


def _pr(doc: dict, what: str) -> dict:
    return doc[next(k for k in doc if k.endswith(f"/{what}"))]


EDITS = {
    "an answer not an object": lambda d: d.update({next(k for k in d if k.endswith("/pulls/1")): 7}),
    "a head that is a string": lambda d: _pr(d, "pulls/1")["body"].update(head="x"),
    "a base that is a list": lambda d: _pr(d, "pulls/1")["body"].update(base=[1]),
    "a head sha that is a number": lambda d: _pr(d, "pulls/1")["body"]["head"].update(sha=7),
    "a merge commit that is a number": lambda d: _pr(d, "pulls/1")["body"].update(merge_commit_sha=7),
    "a labels page not a list": lambda d: d[next(k for k in d if "issues/1/labels" in k)].update(body=7),
    "a next page not a URL": lambda d: d[next(k for k in d if "issues/1/labels" in k)].update(next=7),
}


@pytest.mark.parametrize("edit", EDITS)
def test_a_cached_answer_of_the_wrong_type_is_no_traceback(cli: Cli, forge: Forge, edit: str) -> None:  # noqa: F811
    with FakeForge() as fake:
        forge.github(fake)
        assert _status(cli, forge, fake.url).exit_code == 0
        url = fake.url
    cache = forge.work.path / "carrytool" / "forge-cache.json"
    doc = json.loads(cache.read_text())
    EDITS[edit](doc)
    cache.write_text(json.dumps(doc))
    code, out = cli.json("status", "-m", forge.manifest, "--repo", forge.work.path, "--api-url", url, "--offline")
    assert code == 0, out
    assert {e["id"] for e in out["entries"]} >= {"pr/1", "pr/2"}, out
