"""A hunk's recorded resolution replayed after upstream changed the lines at it (helper-162).

A hunk is keyed by its two sides only: once upstream merges one of the two PRs, the conflict of the other
with upstream has the same key, and the resolution was replayed over upstream's lines without a word (exit 0),
dropping the merged PR's line (upstream's now) or keeping a line upstream had replaced. The fold now stops on
such a hunk; a change of upstream's lines inside a conflict changes its key, and the fold stops as on a new
conflict (pinned here too).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from carrytool.union.recorded_upstream import HunkUpstream
from carrytool.union.upstream_hunks import around_hunks, judge, upstream_of_resolution
from tests.conftest import Cli
from tests.gitrepo import Repo
from tests.union.fold_scenario import PATCH_UNION, TwoPrs

F = "def f(x):\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n"
PR1 = F.replace("a = 1", "a = one(x)")
PR2 = F.replace("a = 1", "a = two(x)").replace("b = 2", "b = 2 * x").replace("c = 3", "c = 3 * x")
# the maintainer's resolution: pr/2's `a` (pr/1's dropped), upstream's `b` kept, pr/2's `c` over upstream's
TAKEN = "    a = two(x)\n    b = 2\n    c = 3 * x\n"
HUNK = re.compile(r"<<<<<<< [^\n]*\n.*?>>>>>>> [^\n]*\n", re.S)


def _resolve(path: Path, lines: str) -> None:
    text = path.read_text()
    assert len(HUNK.findall(text)) == 1, text
    path.write_text(HUNK.sub(lambda _m: lines, text))


def _folded(root: Path, cli: Cli, resolution: str = TAKEN, pr1: str = PR1, pr2: str = PR2,
            base: str = F) -> tuple[TwoPrs, list[str], Path]:
    """pr/1 and pr/2 conflict in f; the maintainer resolves the hunk as RESOLUTION and the union is folded."""
    prs = TwoPrs(root, {"m.py": base}, {"m.py": pr1}, {"m.py": pr2})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve(prs.scratch / "m.py", resolution)
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    return prs, args, prs.manifest.parent / "unions" / "u.patch"


def _merge_upstream(prs: TwoPrs, pr: int, *, keep: bool = False) -> None:
    """Upstream merges pr/PR (--no-ff); the manifest drops it from supersedes unless KEEP."""
    head = prs.pr1 if pr == 1 else prs.pr2
    prs.up.commit({}, f"Merge pr/{pr}", parent=head, parents=[prs.base, head], ref="refs/heads/main")
    if not keep:
        other = 2 if pr == 1 else 1
        prs.manifest.write_text(PATCH_UNION.replace("supersedes: [1, 2]", f"supersedes: [{other}]"))


@pytest.mark.parametrize("keep", [False, True], ids=["dropped-from-supersedes", "still-superseded"])
def test_a_resolution_dropping_a_merged_prs_line_stops_the_fold(cli: Cli, tmp_path: Path, keep: bool) -> None:
    prs, args, patch = _folded(tmp_path, cli)
    _merge_upstream(prs, 1, keep=keep)
    _code, status = cli.json("union", "status", "u", *args)
    [asked] = status[0]["refold"]["needs_resolution"]
    assert (asked["file"], asked["kind"], asked["hunks"], asked["not_replayed"]) == ("m.py", "content", 1, 1)
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    # was 0, the patch `-    a = one(x)`: upstream's line (pr/1's, merged) replaced without a word
    assert result.exit_code == 3, out
    assert "-    a = one(x)" not in patch.read_text()
    assert ("m.py: your recorded resolution of a conflict hunk is not replayed: it would drop 1 line upstream "
            "main has there now, which it did not drop as upstream's when you resolved it (upstream merged a PR "
            "since?):\n        a = one(x)\n") in out, out
    assert f"your resolution was:\n{TAKEN.replace('    ', '        ')}resolve the hunk again" in out
    assert "1 hunk whose recorded resolution is not replayed: upstream's lines there changed" in out
    assert "without a recorded resolution" not in out and "not in the resolution store" not in out
    shown = (prs.scratch / "m.py").read_text()
    assert "    a = one(x)\n    b = 2\n    c = 3\n=======\n    a = two(x)\n" in shown    # the hunk as git made it
    # decided again (here: upstream's `a` kept): recorded, and the next refold asks nothing
    _resolve(prs.scratch / "m.py", "    a = one(x)\n    b = 2\n    c = 3 * x\n")
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "-    a = one(x)" not in patch.read_text() and "+    c = 3 * x" in patch.read_text()
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "not replayed" not in again.stdout + again.stderr, again.stdout + again.stderr


def test_a_drop_of_upstreams_line_confirmed_at_the_stop_is_asked_once(cli: Cli, tmp_path: Path) -> None:
    prs, args, patch = _folded(tmp_path, cli)
    _merge_upstream(prs, 1)
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve(prs.scratch / "m.py", TAKEN)             # the same resolution: upstream's line replaced on purpose
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "-    a = one(x)\n" in patch.read_text()
    record = json.loads(next((prs.manifest.parent / "resolutions" / "u").glob("*.json")).read_text())
    assert record["upstream_removed"] == ["    a = one(x)", "    c = 3"]
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "not replayed" not in again.stdout + again.stderr, again.stdout + again.stderr


def test_upstream_merging_the_other_pr_is_not_reverted_by_the_replay(cli: Cli, tmp_path: Path) -> None:
    """Upstream merges pr/2: pr/1's conflict with upstream has the two sides of the recorded hunk the other
    way round (the same key), and the resolution would put back `b = 2`, which upstream replaced."""
    prs, args, patch = _folded(tmp_path, cli)
    _merge_upstream(prs, 2)
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out                 # was 0: the patch put `b = 2` back over upstream's
    assert "-    b = 2 * x" not in patch.read_text()
    assert ("and it would put back 1 line upstream main had there when you resolved it and has no longer "
            "(upstream changed them since):\n        b = 2\n") in out, out
    assert "it would drop 1 line upstream main has there now" in out and "        b = 2 * x\n" in out


def test_a_line_upstream_deleted_since_is_not_put_back(cli: Cli, tmp_path: Path) -> None:
    """pr/1 deletes `b = 2` and changes `a` beside it, pr/2 changes `a`; the maintainer keeps `b` (upstream's
    line then). Upstream merges pr/1, deleting `b`: the resolution put it back, over upstream's deletion."""
    pr1 = F.replace("a = 1", "a = one(x)").replace("    b = 2\n", "")
    prs, args, patch = _folded(tmp_path, cli, "    a = two(one(x))\n    b = 2\n",
                               pr1=pr1, pr2=F.replace("a = 1", "a = two(x)"))
    _merge_upstream(prs, 1)
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out                 # was 0: the union put back the line upstream deleted
    assert "+    b = 2\n" not in patch.read_text()
    assert ("\nand it would put back 1 line upstream main had there when you resolved it and has no longer "
            "(upstream changed them since):\n        b = 2\n") in out, out
    _resolve(prs.scratch / "m.py", "    a = two(one(x))\n")
    assert cli("union", "continue", "u", *args).exit_code == 0
    assert "b = 2" not in patch.read_text()


# -- safe: what a replay never meets -------------------------------------------------------------------------
def test_upstream_changing_a_line_inside_the_hunk_makes_a_new_conflict(cli: Cli, tmp_path: Path) -> None:
    """Upstream's `c` (on the fold's side of the hunk, which the resolution replaces) changes: the fold's side,
    and the key, change with it; nothing is replayed over upstream's new line."""
    prs, args, patch = _folded(tmp_path, cli)
    prs.up.commit({"m.py": F.replace("c = 3", "c = 30")}, "c is 30", parent=prs.base, ref="refs/heads/main")
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out
    assert "1 hunk without a recorded resolution" in out and "not replayed" not in out
    assert "    a = one(x)\n    b = 2\n    c = 30\n=======\n" in (prs.scratch / "m.py").read_text()


def test_upstream_merging_a_pr_with_a_tweak_inside_the_hunk_makes_a_new_conflict(cli: Cli, tmp_path: Path) -> None:
    prs, args, patch = _folded(tmp_path, cli)
    prs.up.commit({"m.py": PR1.replace("one(x)", "one(x, 1)")}, "Merge pr/1, tweaked", parent=prs.pr1,
                  parents=[prs.base, prs.pr1], ref="refs/heads/main")
    prs.manifest.write_text(PATCH_UNION.replace("supersedes: [1, 2]", "supersedes: [2]"))
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3 and "1 hunk without a recorded resolution" in out, out
    assert "    a = one(x, 1)\n    b = 2\n    c = 3\n=======\n" in (prs.scratch / "m.py").read_text()


def test_a_resolution_keeping_the_merged_prs_lines_is_replayed(cli: Cli, tmp_path: Path) -> None:
    """The resolution keeps each of pr/1's lines: once upstream's, none is dropped; a change of upstream's
    elsewhere in the file is no question either."""
    prs, args, patch = _folded(tmp_path, cli, "    a = one(x)\n    a = two(a)\n    b = 2\n    c = 3 * x\n")
    _merge_upstream(prs, 1)
    Repo(prs.up.path).commit({"m.py": PR1 + "\n\ndef g():\n    return 1\n"}, "g", parent="refs/heads/main",
                             ref="refs/heads/main")
    result = cli("union", "compose", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    text = patch.read_text()
    assert "+    a = two(a)\n" in text and "-    a = one(x)" not in text and "-    c = 3\n+    c = 3 * x\n" in text


def test_a_record_made_before_upstreams_lines_were_kept_asks_once(cli: Cli, tmp_path: Path) -> None:
    """A record without `upstream_removed` (an older carrytool): a replay that drops upstream's lines of the
    fold's side asks, once (as a fixup's record of then does)."""
    prs, args, patch = _folded(tmp_path, cli)
    path = next((prs.manifest.parent / "resolutions" / "u").glob("*.json"))
    doc = json.loads(path.read_text())
    doc.pop("upstream_removed"), doc.pop("upstream_kept"), doc.pop("upstream_at")
    path.write_text(json.dumps(doc))
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3, out
    assert "which the record (made by an older carrytool) does not say it dropped then:\n        c = 3\n" in out
    _resolve(prs.scratch / "m.py", TAKEN)
    assert cli("union", "continue", "u", *args).exit_code == 0
    assert cli("union", "compose", "u", *args).exit_code == 0


# -- upstream_hunks, on strings ------------------------------------------------------------------------------
CONFLICT = (b"def f(x):\n<<<<<<< ours\n    a = one(x)\n    b = 2\n    c = 3\n=======\n    a = two(x)\n"
            b"    b = 2 * x\n    c = 3 * x\n>>>>>>> theirs\n    return a + b + c\n")


@pytest.mark.parametrize(("upstream", "ours", "place"), [
    (F, ("    b = 2", "    c = 3"), ("    b = 2", "    c = 3", "    a = 1")),           # the fold replaced `a`
    (PR1, ("    a = one(x)", "    b = 2", "    c = 3"), ("    a = one(x)", "    b = 2", "    c = 3")),  # merged
    (PR2, (), ("    a = two(x)", "    b = 2 * x", "    c = 3 * x")),
    (None, (), ()),                                                                    # upstream has no file
])
def test_around_hunks(upstream: str | None, ours: tuple, place: tuple) -> None:
    [around] = around_hunks(upstream.encode() if upstream is not None else None, CONFLICT)
    assert around.ours == tuple(line.encode() for line in ours)
    assert sorted(around.place) == sorted(line.encode() for line in place)


def test_judge_asks_only_what_the_record_does_not_account_for() -> None:
    taken = TAKEN.rstrip("\n").encode()
    [then] = around_hunks(F.encode(), CONFLICT)
    recorded = upstream_of_resolution(then, taken)
    assert recorded == HunkUpstream((b"    c = 3",), (b"    b = 2",))
    assert not judge(then, taken, recorded)                                    # upstream as recorded
    [merged] = around_hunks(PR1.encode(), CONFLICT)
    assert judge(merged, taken, recorded).drops == (b"    a = one(x)",)
    [other] = around_hunks(PR2.encode(), CONFLICT)
    assert judge(other, taken, recorded).puts_back == (b"    b = 2",)
    assert judge(then, taken, HunkUpstream()).drops == (b"    c = 3",)        # an older record: all
