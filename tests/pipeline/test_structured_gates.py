"""Structured merge (issue 19): every gate sends a resolution back to the conflict git reported, exactly as
without the policy (the same report but for the sentence, and the record, saying why; the same SHAs), and
a resolution gives the same SHA on git 2.39 and 2.47."""

from __future__ import annotations

import os

import pytest

from tests.conftest import SECOND_GIT, Small
from tests.pipeline.test_structured_sync import BASE, POLICY, WITH_A, WITH_B

NEW_GIT = SECOND_GIT    # a newer git (2.47), when this machine has it
GITS = ["system"] + (["2.47"] if NEW_GIT else [])


def _env(which: str) -> dict[str, str] | None:
    return None if which == "system" else {"PATH": f"{NEW_GIT}:{os.environ['PATH']}"}


def _prs(small: Small, base: str, one: str, two: str) -> None:
    small.up.commit({"m.py": base}, "m", parent=small.base, ref="refs/heads/main")
    main = small.up.rev("refs/heads/main")
    small.pr(1, {"m.py": one}, parent=main)
    small.pr(2, {"m.py": two}, parent=main)


def _both(cli, small: Small, **extra) -> tuple[tuple[int, dict], tuple[int, dict]]:  # noqa: ANN001
    """The dry-run report without the policy, then with it."""
    runs = []
    for policy in ({}, {"policy": POLICY}):
        manifest = small.manifest([{"pr": 1}, {"pr": 2}], **policy, **extra)
        runs.append(cli.json("sync", "-m", manifest, "--repo", small.work.path, "--dry-run"))
    return runs[0], runs[1]


def _same_but_the_detail(plain: dict, structured: dict, why: str | None) -> None:
    """STRUCTURED is PLAIN but for `; its structured resolution was rejected: WHY` (None: the rule refused
    it, and each conflict says why in its record and its detail: helper-128)."""
    entry = structured["entries"][1]
    for conflict in entry["conflicts"]:
        refusal = conflict.pop("structured", None)
        assert (refusal is not None) == (why is None), conflict
        if refusal is not None:
            entry["detail"] = entry["detail"].replace(f"; the structured merge refused: {refusal['why']}", "", 1)
    if why is not None:
        suffix = f"; its structured resolution was rejected: {why}"
        assert entry["detail"].endswith(suffix)
        entry["detail"] = entry["detail"].removesuffix(suffix)
    assert structured["entries"] == plain["entries"]
    assert structured["result"] == plain["result"]
    assert structured["warnings"] == plain["warnings"]


CASES = [
    # (name, base, pr/1, pr/2, why the rule refuses: None when it refuses before the landing/assert checks)
    ("edit-edit", "def f():\n    return 1\n", "def f():\n    return 2\n", "def f():\n    return 3\n", None),
    ("shadows", BASE, WITH_A, BASE + "\n    def alpha(self):\n        return 'b'\n", None),
    ("shadows-import", "import os\n\nX = 1\n", "import os\nfrom a import pformat\n\nX = 1\n",
     "import os\nfrom b import pformat\n\nX = 1\n", None),
    # the PR's own line `from m import a, b, d` is not in the merged import: its hunk does not land
    ("landing", "from m import a, b\n", "from m import a, b, c\n", "from m import a, b, d\n", "a hunk did not land"),
]


@pytest.mark.parametrize(("name", "base", "one", "two", "why"), CASES, ids=[c[0] for c in CASES])
def test_a_refused_resolution_is_the_conflict_it_was_without_the_policy(cli, small: Small, name: str, base: str,
                                                                         one: str, two: str, why: str | None) -> None:
    _prs(small, base, one, two)
    (code, plain), (code2, structured) = _both(cli, small)
    assert code == code2 == 3 and plain["entries"][1]["status"] == "conflict"
    _same_but_the_detail(plain, structured, why)


def test_an_insertion_that_breaks_an_assert_is_the_conflict_it_was(cli, small: Small) -> None:
    _prs(small, BASE, WITH_A, WITH_B)
    asserts = [{"file": "m.py", "absent": "def beta"}]   # holds on either PR alone
    (code, plain), (code2, structured) = _both(cli, small, asserts=asserts)
    assert code == code2 == 3
    _same_but_the_detail(plain, structured, "an assert failed on it")
    assert structured["asserts"] == plain["asserts"]


@pytest.mark.parametrize("git", GITS)
def test_the_same_resolution_and_sha_on_each_git(cli, small: Small, git: str) -> None:
    _prs(small, BASE, WITH_A, WITH_B)
    manifest = small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY)
    code, report = cli.json("sync", "-m", manifest, "--repo", small.work.path, env=_env(git))
    assert code == 0, report
    assert report["entries"][1]["structured"] == [{"file": "m.py", "lines": [7, 12], "kind": "methods"}]
    assert report["result"]["sha"] == "9ef5b0b5a328a296d6a8e48b862999594ac1fa68"   # git 2.39 and 2.47 alike



HELPER = "\n\ndef helper():\n    return 0\n"
G = "\n\ndef g():\n    return helper()\n"
H = "\n\ndef h():\n    return helper() + 1\n"
TOP = "import os\n\n\ndef f():\n    pass\n"
SHARED = [
    # (name, pr/1 inserts, pr/2 inserts, the result's insertion): each PR's insertion stays whole, once
    ("contains", HELPER + G, HELPER, HELPER + G),
    ("contained", HELPER, HELPER + H, HELPER + H),
    ("overlap", G + HELPER, HELPER + H, G + HELPER + H),
]


@pytest.mark.parametrize(("name", "one", "two", "want"), SHARED, ids=[c[0] for c in SHARED])
def test_a_definition_both_inserted_identically_is_kept_once(cli, small: Small, name: str, one: str, two: str,
                                                             want: str) -> None:
    _prs(small, TOP, TOP + one, TOP + two)
    manifest = small.manifest([{"pr": 1}, {"pr": 2}], policy=POLICY)
    code, report = cli.json("sync", "-m", manifest, "--repo", small.work.path)
    assert code == 0, report["entries"][1]["detail"]
    assert small.work.show("refs/heads/dev", "m.py") + "\n" == TOP + want
    assert [h["kind"] for h in report["entries"][1]["structured"]] == ["functions"]


def test_the_same_definition_where_no_order_keeps_both_insertions_whole_stays_a_conflict(cli, small: Small) -> None:
    _prs(small, TOP, TOP + HELPER + G, TOP + HELPER + H)     # one copy would split a PR's hunk: it cannot land
    (code, plain), (code2, structured) = _both(cli, small)
    assert code == code2 == 3
    _same_but_the_detail(plain, structured, None)
