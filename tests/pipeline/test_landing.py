"""Every hunk accounted for: landed, dropped, clobbered, identical, provided by a union, upstream loss."""

from __future__ import annotations

import json

import pytest

from carrytool.gitlayer.git import Change
from carrytool.pipeline.hunks import parse_patch
from carrytool.pipeline.report import Report
from carrytool.render.report_lines import warning_lines
from tests.conftest import Cli, Small
from tests.pipeline import test_sync
from tests.pipeline.test_sync import by_id, sync

BIG = "".join(f"line {i}\n" for i in range(1, 41))


def landing(report: dict, entry: str) -> dict:
    return by_id(report)[entry]["landing"]


@pytest.mark.parametrize("files,hunks", [
    ({"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n# added\n"}, 1),            # addition
    ({"b.py": "x = 1\nz = 3\n"}, 1),                                                         # deletion
    ({"b.py": "x = 1\ny = 2 \nz = 3\n"}, 1),                                                  # whitespace only
    ({"new/file.py": "print('hi')\n"}, 1),                                                   # new file
    ({"docs/c.txt": None}, 1),                                                               # deleted file
    ({"data.bin": b"\x00\x01\x02binary\x00"}, 1),                                             # binary: counted
    ({"b.py": "x = 1\ny = 2\nz = 3\n)\n\n"}, 1),                                              # trivially common lines
    ({"big.txt": BIG.replace("line 5\n", "line five\n").replace("line 30\n", "line thirty\n")}, 2),
])
def test_a_clean_build_lands_every_hunk(cli: Cli, small: Small, files: dict, hunks: int) -> None:
    small.base = small.up.commit({"big.txt": BIG}, "more", parent="main", ref="refs/heads/main")
    small.pr(1, files)
    small.pr(2, {"a.py": "def f():\n    return 9\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 2}, {"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0, (report.get("failures"), report.get("violations"), [e.get("landing") for e in report["entries"]])
    got = landing(report, "pr/1")
    assert (got["hunks"], got["landed"], got["dropped"], got["clobbered"]) == (hunks, hunks, [], [])


def test_pure_move_and_rename_with_changes(cli: Cli, small: Small) -> None:
    small.base = small.up.commit({"big.txt": BIG}, "more", parent="main", ref="refs/heads/main")
    small.pr(1, {"big.txt": None, "moved/big.txt": BIG})
    small.pr(2, {"b.py": None, "lib/b.py": "x = 1\ny = 2\nz = 3\nw = 4\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0, (report.get("failures"), report.get("violations"), [e.get("landing") for e in report["entries"]])
    assert landing(report, "pr/1") == {"hunks": 1, "landed": 1, "dropped": [], "clobbered": [], "survived": 1}
    assert landing(report, "pr/2")["landed"] == landing(report, "pr/2")["hunks"] == 1
    assert small.work.git("show", "dev:moved/big.txt").startswith("line 1")


def test_clobber_is_found_whichever_entry_comes_second(cli: Cli, small: Small) -> None:
    one = {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"}
    two = {"a.py": "def f():\n    return 3\n\n\ndef g():\n    return 2\n"}
    small.pr(1, one)
    small.pr(2, two)
    for first, second in ((1, 2), (2, 1)):
        small.manifest([{"pr": first}, {"pr": second, "on_conflict": "theirs"}])
        code, report = sync(cli, small)
        assert code == 1 and report["ok"] is False and small.branch() is None
        [lost] = landing(report, f"pr/{first}")["clobbered"]
        assert (lost["by"], lost["file"], lost["scope"]) == (f"pr/{second}", "a.py", "f")
        assert landing(report, f"pr/{second}")["clobbered"] == []


def test_identical_hunks_are_applied_once_and_reported(cli: Cli, small: Small) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    small.pr(2, {"b.py": "x = 10\ny = 2\nz = 3\n", "docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0
    assert landing(report, "pr/2")["identical"] == 1 and landing(report, "pr/2")["landed"] == 2
    [warning] = [w for w in report["warnings"] if w["kind"] == "identical-hunk"]
    assert (warning["entry"], warning["other"], warning["file"]) == ("pr/2", "pr/1", "b.py")



TWICE = "".join(f"line {i}\n" if i not in (5, 30) else "ranks = [0, 1]\n" for i in range(1, 41))


@pytest.mark.parametrize("upstream_has", [(5, 30), (30,)])
def test_a_hunk_an_entry_carries_twice_is_not_its_own_identical_hunk(cli: Cli, small: Small,
                                                                         upstream_has: tuple) -> None:
    """helper-146/147: an entry's own diff holding one change at two places (`[0, 1]` -> `[0, 1, 2]` at
    lines 5 and 30), upstream having both (or one) already: the second was blamed on the entry itself
    ("pr/1 and pr/1 carry the same hunk in big.txt:30"). Each copy is accounted at its own place, as any
    hunk: here upstream has it, and nothing is warned."""
    small.base = small.up.commit({"big.txt": TWICE}, "more", parent="main", ref="refs/heads/main")
    both = TWICE.replace("[0, 1]", "[0, 1, 2]")
    ahead = "".join(line.replace("[0, 1]", "[0, 1, 2]") if n in upstream_has else line
                    for n, line in enumerate(TWICE.splitlines(keepends=True), 1))
    small.up.commit({"big.txt": ahead, "docs/c.txt": "up\n"}, "upstream", parent=small.base,
                    ref="refs/heads/main")
    small.pr(1, {"big.txt": both, "b.py": B_TEN})
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small)
    assert code == 0, report.get("failures")
    assert [w["message"] for w in report["warnings"] if w["kind"] == "identical-hunk"] == []
    got = landing(report, "pr/1")
    assert (got["hunks"], got["landed"], got["dropped"], "identical" in got) == (3, 3, [], False)
    assert small.work.git("show", "dev:big.txt") == both.rstrip("\n")

A_NINE = "def f():\n    return 9\n\n\ndef g():\n    return 2\n"
B_TEN = "x = 10\ny = 2\nz = 3\n"


def _union(small: Small, files: dict, parent: str = "main") -> str:
    union = small.up.commit(files, "union", parent=parent, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    return union


def _absent(report: dict) -> list[tuple[str, str, str]]:
    return [(w["entry"], w["other"], w["file"]) for w in report["warnings"] if w["kind"] == "provided-absent"]


def test_partial_supersession_counts_filtered_hunks_as_provided(cli: Cli, small: Small) -> None:
    union = _union(small, {"b.py": B_TEN})
    small.pr(1, {"b.py": B_TEN, "docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [{"pr": 1, "paths": ["b.py"]}]}])
    code, report = sync(cli, small)
    assert code == 0
    got = landing(report, "pr/1")
    assert (got["hunks"], got["landed"], got["provided"]) == (2, 1, [{"by": "carry/union", "hunks": 1}])
    assert not [w for w in report["warnings"] if w["kind"] == "provided-absent"]     # the union changes b.py


def test_a_union_that_does_not_touch_a_path_it_provides_is_warned_about(cli: Cli, small: Small) -> None:
    """The union supersedes pr/1 for b.py but changes only docs/c.txt: pr/1's b.py change is in neither.
    Said (a warning: a union may leave a change out on purpose), not silent (an adversarial review)."""
    union = _union(small, {"docs/c.txt": "c3\n"})
    small.pr(1, {"b.py": B_TEN, "a.py": A_NINE})
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [{"pr": 1, "paths": ["b.py"]}]}])
    code, report = sync(cli, small)
    assert code == 0
    [absent] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert (absent["entry"], absent["other"], absent["file"]) == ("pr/1", "carry/union", "b.py")
    assert "x = 10" not in small.work.git("show", "dev:b.py")          # indeed in neither


def test_a_union_that_leaves_out_a_file_of_a_pr_it_supersedes_whole_is_warned_about(cli: Cli, small: Small) -> None:
    """The seed's last failure: nothing checked that the PRs a union replaced were really inside it. The
    union supersedes pr/1 whole (pr/1 is skipped) but changes only b.py of pr/1's files: pr/1's a.py change
    is in no entry of the build. A `provided-absent` warning per file, as for a partial supersession; a
    file the union changes (however it re-expressed the PR there: explain's coverage) is not named."""
    union = _union(small, {"b.py": "x = 10\ny = 2\nz = 4\n", "docs/c.txt": "c3\n"})
    small.pr(1, {"b.py": B_TEN, "a.py": A_NINE})
    small.pr(2, {"docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": union, "supersedes": [1, 2]}])
    code, report = sync(cli, small)
    assert code == 0
    statuses = {e["id"]: (e["status"], e.get("reason")) for e in report["entries"]}
    assert statuses["pr/1"] == statuses["pr/2"] == ("skipped", "superseded")
    assert _absent(report) == [("pr/1", "carry/union", "a.py")]
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert warning["message"].startswith("carry/union supersedes pr/1 but does not change a.py")
    assert "return 9" not in small.work.git("show", "dev:a.py")          # indeed in neither
    entry = next(e for e in report["entries"] if e["id"] == "pr/1")     # the entry reads as before: no diff,
    assert "base" not in entry and "files" not in entry          # only the head fetched, as the lock has it
    assert entry["head"] == small.up.ref("refs/pull/1/head")


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "partial"])
def test_a_pr_change_the_image_has_anyway_is_not_warned_about(cli: Cli, small: Small, whole: bool) -> None:
    """Upstream took pr/1's a.py change (a cherry-pick) and deleted csrc/k.cu as pr/1 does; the union,
    which supersedes pr/1 (wholly, or for those paths), changes neither: pr/1's files there are in the
    image as pr/1 has them, so nothing is in neither and nothing is warned about. Its docs/c.txt change
    is in neither: that one is named."""
    small.pr(1, {"a.py": A_NINE, "csrc/k.cu": None, "docs/c.txt": "c2\n", "b.py": B_TEN})
    small.up.commit({"a.py": A_NINE, "csrc/k.cu": None}, "upstream takes part of pr 1", parent="main",
                    ref="refs/heads/main")
    union = _union(small, {"b.py": "x = 11\ny = 2\nz = 3\n"})
    item = 1 if whole else {"pr": 1, "paths": ["a.py", "csrc/k.cu", "docs/c.txt", "b.py"]}
    small.manifest([{"pr": 1}, {"carry": "union", "commit": union, "supersedes": [item]}])
    code, report = sync(cli, small)
    assert code == 0
    assert _absent(report) == [("pr/1", "carry/union", "docs/c.txt")]


@pytest.mark.parametrize("how", ["upstream", "stacked"])
def test_a_pr_change_in_a_file_changed_elsewhere_too_is_in_the_image(cli: Cli, small: Small, how: str) -> None:
    """pr/1's a.py change is in the image in a file that is not pr/1's a.py: upstream took the change and
    changed g() as well, or pr/2, stacked on pr/1, brings it with more. Merging pr/1's change into that
    file changes nothing: not named (an adversarial review found both warned about)."""
    p1 = small.pr(1, {"a.py": A_NINE, "b.py": B_TEN})
    more = "def f():\n    return 9\n\n\ndef g():\n    return 7\n"
    entries: list = [{"pr": 1}]
    if how == "upstream":
        small.up.commit({"a.py": more}, "upstream takes it, and more", parent="main", ref="refs/heads/main")
    else:
        small.up.commit({"a.py": more}, "pr 2", parent=p1, ref="refs/pull/2/head")
    union = _union(small, {"b.py": B_TEN})
    entries += [{"carry": "union", "commit": union, "supersedes": [1]}] + ([{"pr": 2}] if how == "stacked" else [])
    small.manifest(entries)
    code, report = sync(cli, small)
    assert code == 0 and "return 9" in small.work.git("show", "dev:a.py")
    assert _absent(report) == []


@pytest.mark.parametrize("how", ["merged-upstream", "redundant"])
def test_a_union_the_image_has_already_still_stands_for_its_prs(cli: Cli, small: Small, how: str) -> None:
    """The union's own change is in the image already (upstream took it, or pr/2 carries it): the union is
    skipped, and so is pr/1, which it supersedes whole. pr/1's a.py change is in neither: named (an
    adversarial review found it lost without a word)."""
    small.pr(1, {"a.py": A_NINE, "b.py": B_TEN})
    entries: list = [{"pr": 1}]
    if how == "merged-upstream":
        small.up.commit({"b.py": B_TEN}, "upstream takes b", parent="main", ref="refs/heads/main")
    else:
        small.pr(2, {"b.py": B_TEN})
        entries.append({"pr": 2})
    union = _union(small, {"b.py": B_TEN}, parent=small.base)
    small.manifest(entries + [{"carry": "union", "commit": union, "supersedes": [1]}])
    code, report = sync(cli, small)
    assert code == 0
    assert next(e for e in report["entries"] if e["id"] == "carry/union")["reason"] == how
    assert _absent(report) == [("pr/1", "carry/union", "a.py")]
    assert "return 9" not in small.work.git("show", "dev:a.py")


def test_a_pr_that_is_no_entry_is_checked_too(cli: Cli, small: Small) -> None:
    """The union names pr/1 with a folded head and pr/1 is no entry of its own: its a.py change is in
    neither all the same."""
    p1 = small.pr(1, {"a.py": A_NINE, "b.py": B_TEN})
    union = _union(small, {"b.py": B_TEN})
    small.manifest([{"carry": "union", "commit": union, "supersedes": [{"pr": 1, "head": p1[:9]}]}])
    code, report = sync(cli, small)
    assert code == 0 and _absent(report) == [("pr/1", "carry/union", "a.py")]


LONG = "".join(f"line {i}\n" for i in range(1, 31))
TEN = LONG.replace("line 10\n", "line ten\n")
# case -> (pr/1's files besides b.py, upstream's commit (or a pr/2 that deletes t.txt), the base's extra files,
# pr/1's modes, the files warned about)
TIP_CASES = {
    "adjacent edit": ({"t.txt": TEN}, {"t.txt": TEN.replace("line 11\n", "line eleven\n")}, {"t.txt": LONG}, None, []),
    "mode only": ({"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n"}, None, None,
                  {"a.py": "100755"}, ["a.py"]),
    "rename and edit": ({"t.txt": None, "u.txt": TEN}, {"t.txt": None, "u.txt": TEN.replace("line 28", "line 28!")},
                        {"t.txt": LONG}, None, []),
    "moved by upstream": ({"t.txt": TEN}, {"t.txt": None, "u.txt": TEN}, {"t.txt": LONG}, None, []),
    "deleted by an entry": ({"t.txt": TEN}, "pr/2 deletes t.txt", {"t.txt": LONG}, None, ["t.txt"]),
    "added, and more": ({"n.txt": LONG}, {"n.txt": LONG + "more\n"}, None, None, []),
    "added, not all": ({"n.txt": LONG}, {"n.txt": LONG.replace("line 20\n", "")}, None, None, ["n.txt"]),
    "moved next to": ({"t.txt": TEN}, {"t.txt": LONG.replace("line 11\n", "line ten\n")}, {"t.txt": LONG}, None,
                      ["t.txt"]),
}


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "partial"])
@pytest.mark.parametrize("case", list(TIP_CASES))
def test_whether_the_tip_has_a_superseded_change(cli: Cli, small: Small, case: str, whole: bool) -> None:
    """What the composed tree has of pr/1's files the union leaves out (an adversarial review's cases): the
    change with upstream's edit on the next line (git's merge calls that a conflict), the change at the
    path upstream renamed it to, an added file with more lines, are there; a mode change the tip lacks
    (the merge of contents alone said "there"), a file missing a line of the change and a file another
    entry deleted are named."""
    files, upstream, extra, modes, warned = TIP_CASES[case]
    if extra:
        small.base = small.up.commit(extra, "more", parent="main", ref="refs/heads/main")
    small.up.commit({**files, "b.py": B_TEN}, "pr 1", parent=small.base, ref="refs/pull/1/head", modes=modes)
    deleting = upstream == "pr/2 deletes t.txt"
    if deleting:
        small.up.commit({"t.txt": None}, "pr 2", parent=small.base, ref="refs/pull/2/head")
    elif upstream:
        small.up.commit(upstream, "upstream", parent="main", ref="refs/heads/main")
    union = _union(small, {"b.py": B_TEN})
    item = 1 if whole else {"pr": 1, "paths": sorted({*files, "b.py"})}
    small.manifest([{"pr": 1}, *([{"pr": 2}] if deleting else []), {"carry": "union", "commit": union,
                                                                     "supersedes": [item]}])
    code, report = sync(cli, small)
    assert code == 0
    assert _absent(report) == [("pr/1", "carry/union", path) for path in warned]


def test_parse_patch_maps_hunks_to_exact_paths() -> None:
    old, new = "a" * 40, "b" * 40
    patch = (b'diff --git "a/dir x/q\\"uote" "b/dir x/q\\"uote"\nindex ' + old.encode() + b".." + new.encode() +
             b' 100644\n--- "a/dir x/q\\"uote"\t\n+++ "b/dir x/q\\"uote"\t\n@@ -3,0 +4,2 @@ ctx\n+one\n+two\n'
             b"@@ -10 +12 @@\n-gone\n+here\n")
    change = Change("M", 'dir x/q"uote', None, "100644", "100644", old, new)
    hunks = parse_patch(patch, [change])
    assert [(h.path, h.old_start, h.old_count, h.new_start, h.new_count, h.removed, h.added) for h in hunks] == [
        ('dir x/q"uote', 3, 0, 4, 2, (), (b"one", b"two")),
        ('dir x/q"uote', 10, 1, 12, 1, (b"gone",), (b"here",)),
    ]
    assert hunks[0].describe() == 'dir x/q"uote:4-5'


def test_a_file_part_two_patches_share_gives_each_its_own_path_and_mode() -> None:
    """A file's part of a patch is parsed once per run (a stack of PRs on one branch repeats them), and the
    same blob pair at another path, or with another mode, still gives hunks of its own."""
    old, new = "c" * 40, "d" * 40

    def part(path: str, mode: str = "100644") -> bytes:
        return (f"diff --git a/{path} b/{path}\nindex {old}..{new} {mode}\n--- a/{path}\n+++ b/{path}\n"
                "@@ -2 +2,2 @@\n-was\n+is\n+too\n").encode()

    one = Change("M", "p/one.py", None, "100644", "100644", old, new)
    two = Change("M", "p/two.py", None, "100644", "100644", old, new)
    run = Change("M", "p/one.py", None, "100755", "100755", old, new)
    seen = [parse_patch(part("p/one.py") + part("p/two.py"), [one, two]), parse_patch(part("p/one.py"), [one]),
            parse_patch(part("p/one.py", "100755"), [run])]
    assert [[(h.path, h.new_mode, h.removed, h.added) for h in hunks] for hunks in seen] == [
        [("p/one.py", "100644", (b"was",), (b"is", b"too")), ("p/two.py", "100644", (b"was",), (b"is", b"too"))],
        [("p/one.py", "100644", (b"was",), (b"is", b"too"))],
        [("p/one.py", "100755", (b"was",), (b"is", b"too"))],
    ]
    assert seen[0][0] == seen[1][0]


def test_explain_parses_each_entry_s_patch_once(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """explain's evidence and its landing checks read the same entries' diffs: one parse each (the parsed
    hunks are shared; the report is the one parsing twice gives)."""
    from carrytool.pipeline import hunks as hunks_module

    small.pr(1, test_sync.A_TWO)
    small.pr(3, test_sync.B_TEN)
    small.manifest([{"pr": 1}, {"pr": 3}])
    argv = ("explain", "--offline", "--format", "json", "-m", small.manifest_path, "--repo", small.work.path)
    assert sync(cli, small)[0] == 0
    parsed: list[bytes] = []
    real = hunks_module.parse_patch

    def spy(patch, changes):  # noqa: ANN001, ANN202
        parsed.append(patch)
        return real(patch, changes)

    monkeypatch.setattr(hunks_module, "parse_patch", spy)
    hunks_module._parsed.cache_clear()
    code, shared = cli.json(*argv)
    assert code == 0 and len(parsed) == len(set(parsed)) == 2, parsed
    monkeypatch.setattr(hunks_module, "_parsed", lambda patch, changes: tuple(real(patch, changes)))
    assert cli.json(*argv) == (code, shared)


@pytest.mark.parametrize("second", [
    {"big.txt": None, "moved/big.txt": BIG},                      # a pure rename of the file pr/1 edits
    {"run.sh": "echo\n"},                                         # (control: another file)
])
def test_a_later_pure_rename_keeps_an_earlier_entrys_lines(cli: Cli, small: Small, second: dict) -> None:
    small.base = small.up.commit({"big.txt": BIG}, "more", parent="main", ref="refs/heads/main")
    small.pr(1, {"big.txt": BIG.replace("line 5\n", "line five\n")})
    small.pr(2, second)
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0, (report.get("failures"), report.get("violations"), [e.get("landing") for e in report["entries"]])
    assert landing(report, "pr/1") == {"hunks": 1, "landed": 1, "dropped": [], "clobbered": [], "survived": 1}
    where = "moved/big.txt" if "moved/big.txt" in second else "big.txt"
    assert "line five" in small.work.git("show", f"dev:{where}")


# -- what a later `theirs` undoes beyond an earlier entry's added lines (an adversarial review) --------
def test_a_line_an_entry_removed_that_theirs_brings_back_is_clobbered(cli: Cli, small: Small) -> None:
    """pr/1 removes a dangerous line; pr/2, resolved in its favour, edits the lines around it, and its
    side brings the line back: pr/1's hunk did not survive (it was reported as survived)."""
    small.base = small.up.commit({"r.py": "a = 1\nb = 2\neval(user_input)\nc = 3\nd = 4\n"}, "r",
                                 parent="main", ref="refs/heads/main")
    small.pr(1, {"r.py": "a = 1\nb = 2\nc = 3\nd = 4\n"})
    small.pr(2, {"r.py": "a = 1\nb = 22\neval(user_input)\nc = 33\nd = 4\n"})
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    assert code == 1 and small.branch() is None
    [lost] = landing(report, "pr/1")["clobbered"]
    assert (lost["by"], lost["file"], lost["lines"]) == ("pr/2", "r.py", [3, 3])
    assert "brought back line 3 it had removed" in lost["message"] and landing(report, "pr/1")["survived"] == 0


@pytest.mark.parametrize("path, base, first, second, how", [
    ("legacy.py", "def check(pw):\n    return True\n", None, "def check(pw):\n    return True  # noqa\n",
     "brought the file it deleted back"),
    ("model.bin", b"\x00\x01BASE\x00", b"\x00\x01FIXED\x00", b"\x00\x01OTHER\x00", "replaced the whole file"),
])
def test_a_file_theirs_brings_back_or_replaces_whole_is_clobbered(cli: Cli, small: Small, path: str, base: object,
                                                                 first: object, second: object, how: str) -> None:
    """pr/1 deletes a file, or sets a binary; pr/2, resolved in its favour, brings the file back, or
    replaces the binary: pr/1's change did not survive (it was reported as survived)."""
    small.base = small.up.commit({path: base}, "the file", parent="main", ref="refs/heads/main")
    small.pr(1, {path: first})
    small.pr(2, {path: second})
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    assert code == 1
    [lost] = landing(report, "pr/1")["clobbered"]
    assert (lost["by"], lost["file"]) == ("pr/2", path) and how in lost["message"]


def test_what_a_later_entry_leaves_alone_still_survives(cli: Cli, small: Small) -> None:
    """No false alarm: a later entry resolved theirs elsewhere in the file, a later pure rename of the
    binary, and a removal whose text occurs elsewhere as often as before."""
    small.base = small.up.commit({"r.py": "a = 1\nx = 0\nb = 2\nx = 0\nc = 3\n" + "".join(f"l{i}\n" for i in range(20)),
                                  "model.bin": b"\x00BASE\x00"}, "r", parent="main", ref="refs/heads/main")
    small.pr(1, {"r.py": "a = 1\nb = 2\nx = 0\nc = 3\n" + "".join(f"l{i}\n" for i in range(20)),
                 "model.bin": b"\x00FIXED\x00"})
    small.pr(2, {"r.py": "a = 1\nx = 0\nb = 2\nx = 0\nc = 3\n" + "".join(f"l{i}\n" for i in range(19)) + "l19!\n",
                 "model.bin": None, "moved.bin": b"\x00BASE\x00"})
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    assert code == 0, [e.get("landing") for e in report["entries"]]
    assert landing(report, "pr/1")["clobbered"] == [] and landing(report, "pr/1")["survived"] == 2


def test_two_hunks_adding_the_same_line_are_followed_at_their_own_places(cli: Cli, small: Small) -> None:
    """pr/1 adds `check()` at two places; upstream then shifted the file 50 lines down. Both hunks were
    matched to the first place, the second place was nobody's, and pr/2's `theirs` overwrite of it went
    unseen (exit 0, an adversarial review). Each hunk now takes a place no other took."""
    lines = [f"l{i} = {i}" for i in range(1, 41)]
    text = lambda ls: "".join(x + "\n" for x in ls)  # noqa: E731
    old = small.up.commit({"s.py": text(lines)}, "s", parent="main")
    small.up.commit({"s.py": text([f"u{i} = {i}" for i in range(50)] + lines)}, "upstream shifts s.py", parent=old,
                    ref="refs/heads/main")
    small.up.commit({"s.py": text(lines[:9] + ["check()"] + lines[9:29] + ["check()"] + lines[29:])}, "pr 1",
                    parent=old, ref="refs/pull/1/head")
    theirs = list(lines)
    theirs[28], theirs[29] = "l29 = 290", "l30 = 300"
    small.up.commit({"s.py": text(theirs)}, "pr 2", parent=old, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    assert code == 1, [e.get("landing") for e in report["entries"]]
    [lost] = landing(report, "pr/1")["clobbered"]
    assert (lost["by"], lost["lines"]) == ("pr/2", [81, 81]) and landing(report, "pr/1")["survived"] == 1


def test_a_later_entry_filling_an_empty_file_an_earlier_one_added_clobbers_nothing(cli: Cli, small: Small) -> None:
    """An empty file has no lines to own: pr/2, stacked on pr/1, writing into pr/1's empty __init__.py is
    no clobber (it was called `replaced the whole file`, exit 1: a review of the new checks)."""
    one = small.pr(1, {"pkg/__init__.py": "", "pkg/m.py": "x = 1\n"})
    small.pr(2, {"pkg/__init__.py": "from .m import x\n"}, parent=one)
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 0, [e.get("landing") for e in report["entries"]]


def test_a_line_like_a_removed_one_added_elsewhere_by_theirs_brings_nothing_back(cli: Cli, small: Small) -> None:
    """pr/1 removes `log()` from f(); pr/2, resolved theirs (its conflict is in a.py), adds a function at the
    end of r.py that calls log(). The removal is not undone: only a hunk of pr/2 at the place the lines
    were removed, adding them, brings them back (any equal line anywhere did: a review of the new checks)."""
    text = "def f():\n    log()\n    return None\n\n\n" + "".join(f"v{i} = {i}\n" for i in range(30))
    small.base = small.up.commit({"r.py": text}, "r", parent="main", ref="refs/heads/main")
    a_py = "def f():\n    return {}\n\n\ndef g():\n    return 2\n"
    small.pr(1, {"r.py": text.replace("    log()\n", ""), "a.py": a_py.format(2)})
    small.pr(2, {"r.py": text + "\n\ndef h():\n    log()\n", "a.py": a_py.format(3)})
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    lost = landing(report, "pr/1")["clobbered"]
    assert [c["file"] for c in lost] == ["a.py"], lost        # a.py's clobber is real; r.py's removal stands


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "partial"])
def test_a_union_skipped_for_a_conflict_leaves_its_prs_out(cli: Cli, small: Small, whole: bool) -> None:
    """helper-73: under `on_conflict: skip`, a union that conflicts with an earlier entry is skipped, and the
    PRs it supersedes stayed `skipped (superseded)`: ok, no warning, and the branch moved without them.
    Each of their files is named (the union was not applied), unless the image has the change anyway."""
    small.pr(1, {"a.py": A_NINE, "b.py": B_TEN})
    small.pr(2, {"docs/c.txt": "c2\n"})
    small.pr(3, {"a.py": "def f():\n    return 3\n\n\ndef g():\n    return 2\n"})
    union = _union(small, {"a.py": A_NINE, "b.py": B_TEN})
    item = 1 if whole else {"pr": 1, "paths": ["a.py", "b.py"]}
    small.manifest([{"pr": 3}, {"pr": 1}, {"pr": 2},
                    {"carry": "union", "commit": union, "supersedes": [item], "on_conflict": "skip"}])
    code, report = sync(cli, small)
    statuses = {e["id"]: (e["status"], e.get("reason")) for e in report["entries"]}
    assert code == 0 and statuses["carry/union"] == ("conflict", "conflict")
    assert _absent(report) == [("pr/1", "carry/union", "a.py"), ("pr/1", "carry/union", "b.py")]
    warning = next(w for w in report["warnings"] if w["kind"] == "provided-absent")
    assert warning["message"] == ("carry/union supersedes pr/1" + ("" if whole else " for a.py") +
                                  " but was not applied (conflict): pr/1's change to a.py is in no entry of the build")
    assert "x = 10" not in small.work.git("show", "dev:b.py")          # indeed in no entry


@pytest.mark.parametrize("trailer, hunk", [
    ("Carry-Supersedes: 1", False),         # pr/2 added by hand, never folded: its file is named
    ("Carry-Supersedes: 1 2:docs/c.txt", True),      # composed with both: pr/2's hunk, lost, is named
    ("", True),                                       # a hand-made commit says nothing: so is the hunk
])
def test_a_pr_the_union_was_not_composed_with_is_named(cli: Cli, small: Small, trailer: str, hunk: bool) -> None:
    """helper-73: a PR added to a union's `supersedes` by hand (or while a refold is stopped) is skipped as
    superseded, though the union touches its file with other PRs' changes only: its change was lost
    silently. A union whose commit names the PRs it was composed with (`Carry-Supersedes:`, written by
    `union new`/`compose` and explain's draft message) and not this one: each of its files is named.
    Composed with it (or saying nothing), the union still lacks pr/2's line, which no other PR's change
    meets: that hunk is named (helper-128)."""
    small.pr(1, {"docs/c.txt": "c\nfrom one\n"})
    small.pr(2, {"docs/c.txt": "from two\nc\n"})
    union = small.up.commit({"docs/c.txt": "c\nfrom one\n"}, f"carry: union\n\n{trailer}\n", parent="main",
                            ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "union", "commit": union, "supersedes": [1, 2]}])
    code, report = sync(cli, small)
    assert code == 0 and _absent(report) == [("pr/2", "carry/union", "docs/c.txt")]
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert ("lines" in warning) is hunk
    if hunk:
        assert warning["message"].startswith("carry/union supersedes pr/2 but the composed tree lacks its hunk "
                                             "docs/c.txt:1, in no region carry/union reconciled")
    else:
        assert warning["message"] == ("carry/union supersedes pr/2 but was not composed with it (its commit's "
                                      "Carry-Supersedes names #1): pr/2's change to docs/c.txt is in no entry of "
                                      "the build (refold: carrytool union compose union)")


@pytest.mark.parametrize("message, numbers", [
    ("carry: u\n\nCarry-Union: u\nCarry-Supersedes: 3736 3743:src/a.py,src/b2.py\n", {3736, 3743}),   # as written
    ("x\n\nCarry-Supersedes: 1 2 \u00b2\n", {1, 2}),        # a digit int() refuses crashed the run (helper-75)
    ("x\n\nCarry-Supersedes: #1 #2\n", {1, 2}),
    ("x\n\nCarry-Supersedes: 1, 2\n", {1, 2}),
    ("x\n\nCarry-Supersedes:1 2\n", {1, 2}),
    ("x\n\ncarry-supersedes: 1\n  2 3\nOther: 4\n", {1, 2, 3}),     # folded onto an indented line
    ("x\n\nCarry-Supersedes: 1\n\nCarry-Supersedes: 7\n", {7}),       # the last one
    ("x\n\nCarry-Supersedes:\n", set()),
    ("a hand-made union\n\nCarry-Union: u\n", None),
])
def test_the_supersedes_trailer_is_read_as_people_write_it(message: str, numbers: set | None) -> None:
    from carrytool.pipeline.facts import supersedes_trailer

    assert supersedes_trailer(message) == (frozenset(numbers) if numbers is not None else None)


def test_the_union_hint_after_a_clobber_names_every_pr_involved(cli: Cli, small: Small) -> None:
    """helper-76: pr/3 resolved `theirs` overwrote lines of pr/1 and of pr/2; the next step proposed
    `union new NAME 1 3` (the first clobber's pair), leaving pr/2 out."""
    small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"})
    small.pr(2, {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 5\n"})
    small.pr(3, {"a.py": "def f():\n    return 3\n\n\ndef g():\n    return 7\n"})
    small.manifest([{"pr": 1}, {"pr": 2}, {"pr": 3, "on_conflict": "theirs"}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1, result.output
    assert "compose both into a union instead (`carrytool union new NAME 1 2 3 " in result.stdout, result.stdout


def test_lines_landed_in_a_file_upstream_moved_are_followed_there(cli: Cli, small: Small) -> None:
    """helper-106: an entry's lines were kept under its own path (m.py) when they landed in the file
    upstream had moved since its base (n.py): a later entry removing them there was never seen."""
    module = "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(10))
    small.base = small.up.commit({"m.py": module}, "a module", parent="main", ref="refs/heads/main")
    small.pr(1, {"m.py": module.replace("return 5\n", "return 50\n")})
    moved = small.up.commit({"m.py": None, "n.py": module}, "upstream moves m.py", parent="main",
                            ref="refs/heads/main")
    small.pr(2, {"n.py": module.replace("return 5\n", "return 55\n")}, parent=moved)
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    assert code == 1 and small.branch() is None, report
    [lost] = landing(report, "pr/1")["clobbered"]
    assert (lost["file"], lost["by"]) == ("n.py", "pr/2"), lost



def test_an_insertion_the_patch_placed_otherwise_than_the_merge_lands(small: Small) -> None:
    """helper-110: poetry's pr/10402 adds a test whose last 8 lines repeat the previous test's. `diff -U0`
    put the inserted block 8 lines up (taking in the previous test's tail and leaving out its own), the
    merge kept the lines where they were, and upstream had rewritten the previous test's tail since: the
    block was nowhere verbatim, "did not land", a red night, with the test whole in the result. (git's
    choice between the placements depends on the whole file: the hunk as `-U0` gave it is built here,
    the trees are real.) The same insertion slid over the repeated lines is found; slid the wrong way, or
    over lines that differ, it is not."""
    from collections import Counter

    from carrytool.gitlayer.git import Git
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.hunks import Hunk
    from carrytool.pipeline.landing import _Accountant
    from carrytool.pipeline.plan import Step

    tail = ["[tool.dev]", 'pytest = "1"', '"""', "", "    assert expected in output()", "", ""]
    one = ["def test_one():", '    expected = """\\', "[project]", 'name = "one"'] + tail
    two = ["def test_two():", '    expected = """\\', "[project]", 'name = "two"'] + tail
    three = ["def test_three():", "    pass", ""]
    base_lines = one + three                       # the head: one + two + three
    up_lines = [line.replace("[tool.dev]", "[groups]") for line in one] + three     # upstream rewrote one's tail
    result_lines = [line.replace("[tool.dev]", "[groups]") for line in one] + two + three
    text = lambda lines: "\n".join(lines)  # noqa: E731
    base = small.up.commit({"t.py": text(base_lines)}, "base", parent="main")
    parent = small.up.commit({"t.py": text(up_lines)}, "upstream", parent=base)
    result = small.up.commit({"t.py": text(result_lines)}, "composed", parent=parent)
    step = Step(Entry("pr", number=1))
    step.base, step.parent, step.commit = base, parent, result
    # -U0 placed it len(tail) lines up: inserted after line 4 of the base, the block is one's tail, then two
    # without its own tail
    shifted = tuple(s.encode() for s in tail + two[:-len(tail)])
    hunk = Hunk("t.py", 4, 0, 5, len(shifted), (), shifted)
    with Git(small.up.path) as git:
        accountant = _Accountant(git, [step])
        assert accountant.fallback(step, hunk, Counter()) is None          # verbatim: nowhere
        placed = accountant.slid(step, hunk, Counter())
        assert placed is not None and placed[1:] == (len(two), "t.py"), placed
        first = placed[0] - 1             # the composed lines it owns: taken out, upstream's file is left
        assert result_lines[:first] + result_lines[first + len(two):] == up_lines
        # placed where the repeated lines do not lead it (one line further down): no other placement
        assert accountant.slid(step, Hunk("t.py", 4 + 1, 0, 6, len(shifted), (), shifted), Counter()) is None


def test_a_dropped_hunk_is_not_found_on_the_lines_of_its_neighbour(small: Small) -> None:
    """helper-112: an entry adds `check(x)` at the top of f and `x = load()`, `check(x)` in g; the composition
    keeps f's change and drops g's. g's block (and its placement slid over the repeated `x = load()`) could
    be read on f's new line beside an old one: both hunks "landed", nothing said. A block is not looked for
    on lines another hunk of the step was found at."""
    from carrytool.gitlayer.git import Git
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.landing import _Accountant
    from carrytool.pipeline.plan import APPLIED, Step

    f = ["def f(x):", "    x = load()", "    return x", "", ""]
    g = ["def g():", "    x = load()", "    return x"]
    f_checked = ["def f(x):", "    check(x)", "    x = load()", "    return x", "", ""]
    text = lambda *lines: "\n".join(lines) + "\n"  # noqa: E731
    base = small.up.commit({"m.py": text(*f, *g)}, "base", parent="main")
    head = small.up.commit({"m.py": text(*f_checked, "def g():", "    x = load()", "    check(x)", "    x = load()",
                                         "    return x")}, "pr", parent=base)
    result = small.up.commit({"m.py": text(*f_checked, *g)}, "composed, g's change lost", parent=base)
    step = Step(Entry("pr", number=1))
    step.status, step.base, step.head, step.parent, step.commit = APPLIED, base, head, base, result
    with Git(small.up.path) as git:
        step.all_changes = git.diff_trees([(base, head)])[0]
        step.changes = list(step.all_changes)
        accounting = _Accountant(git, [step]).run()
    assert [(failure["kind"], failure["lines"]) for failure in accounting.failures] == [("dropped", [8, 9])], \
        accounting.failures


def test_many_identical_hunks_of_a_pair_print_one_line(cli: Cli, small: Small, tmp_path) -> None:
    """The text has one line for a pair sharing many hunks (helper-123: 3,163 lines on jax); the report keeps each."""
    same = {f"same/f{n}.txt": f"shared {n}\n" for n in range(6)}
    small.pr(1, same)
    small.pr(2, {**same, "docs/c.txt": "c2\n"})
    small.manifest([{"pr": 1}, {"pr": 2}])
    saved = tmp_path / "sync.json"
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", saved)
    assert result.exit_code == 0, result.stdout
    said = [line for line in result.stdout.splitlines() if "pr/2 and pr/1" in line]
    assert said == ["warning: pr/2 and pr/1 carry the same 6 hunks in 6 files (same/f0.txt:1, same/f1.txt:1, "
                    "same/f2.txt:1 and 3 more): each is applied once"], result.stdout
    warnings = [w for w in json.loads(saved.read_text())["warnings"] if w["kind"] == "identical-hunk"]
    assert sorted(w["file"] for w in warnings) == sorted(same)


def test_a_grouped_identical_mode_change_reads_as_a_mode_change(cli: Cli, small: Small, tmp_path) -> None:
    """helper-136: a pair's grouped identical-hunk line showed a mode-only hunk as a bare path (`run.sh`),
    where a content hunk reads `a.txt:1`; it reads `run.sh (mode 100755)` (here pr/2 is redundant with pr/1)."""
    scripts = {"run.sh": "echo\n", "tool.sh": "echo\n"}
    start = small.up.commit(scripts, "scripts", parent="main", ref="refs/heads/main")
    same, modes = {"a.txt": "a\n", "b.txt": "b\n", **scripts}, {"run.sh": "100755", "tool.sh": "100755"}
    small.up.commit(same, "pr 1", parent=start, ref="refs/pull/1/head", modes=modes)
    small.up.commit(same, "pr 2", parent=start, ref="refs/pull/2/head", modes=modes)
    small.manifest([{"pr": 1}, {"pr": 2}])
    saved = tmp_path / "sync.json"
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--report", saved)
    assert result.exit_code == 0, result.stdout
    said = [line for line in result.stdout.splitlines() if "pr/2 and pr/1" in line]
    assert said == ["warning: pr/2 and pr/1 carry the same 4 hunks in 4 files (a.txt:1, b.txt:1, "
                    "run.sh (mode 100755) and 1 more)"], result.stdout
    [mode] = [w for w in json.loads(saved.read_text())["warnings"] if w.get("file") == "run.sh"]
    assert (mode["file"], mode["mode"], mode["message"]) == \
        ("run.sh", "100755", "pr/2 and pr/1 carry the same hunk in run.sh (mode change)")


def _identical(entry: str, other: str, line: int) -> dict:
    return {"kind": "identical-hunk", "entry": entry, "other": other, "file": "a.py", "lines": [line, line],
            "message": f"{entry} and {other} carry the same hunk in a.py:{line}"}


def test_identical_hunk_lines_group_by_pair_and_stop_past_ten_pairs() -> None:
    few = [_identical("pr/2", "pr/1", n) for n in (3, 9)]                     # a few: one line each, as before
    many = [_identical(f"pr/{n}", "pr/1", line) for n in range(3, 15) for line in (5, 40, 41, 80)]
    report = Report("sync", warnings=[*few, {"kind": "stale-fold", "message": "refold"}, *many])
    lines = warning_lines(report)
    assert lines[:3] == ["warning: pr/2 and pr/1 carry the same hunk in a.py:3",
                         "warning: pr/2 and pr/1 carry the same hunk in a.py:9", "warning: refold"]
    assert lines[3] == "warning: pr/3 and pr/1 carry the same 4 hunks in 1 file (a.py:5, a.py:40, a.py:41 and 1 more)"
    assert len(lines) == 3 + 9 + 1      # ten pairs shown, then one line for the other three
    assert lines[-1] == "warning: 3 more pairs of entries carry the same hunks (12 hunks): see the report's " \
                        "warnings (--report FILE or --format json)"


def test_a_fork_carry_editing_a_prs_line_is_not_blamed_on_theirs(cli: Cli, small: Small) -> None:
    """helper-133 on sympy: a fork fix committed on the composed branch changed pr/30059's line; it merged
    cleanly, and the next step said `on_conflict: theirs` (set nowhere) overwrote it and proposed a union of
    that one PR, which a fork carry cannot join. It says what the carry did and the two ways out."""
    head = small.pr(1, {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 2\n"})
    fix = small.up.commit({"a.py": "def f():\n    return 22\n\n\ndef g():\n    return 2\n"}, "fork fix of f",
                          parent=head, ref="refs/heads/fix")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/fix:refs/heads/fix")
    small.manifest([{"pr": 1}, {"carry": "fix", "commit": fix}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1, result.output
    assert "theirs" not in result.stdout and "union new" not in result.stdout, result.stdout
    assert ("next: carry/fix's own change edits pr/1's lines (a clean merge: its commit changes them): if "
            "carry/fix means to change them, make its commit carry pr/1's change too and let it supersede it "
            "(`supersedes: [1]`); else change carry/fix to leave those lines alone") in result.stdout, result.stdout


def test_each_clobber_gets_its_own_cause_and_way_out(cli: Cli, small: Small) -> None:
    """helper-144: pr/2 resolved `theirs` over pr/1, and carry/fix (built on pr/3's head) edited pr/3's line in a
    clean merge: one hint blamed both on `theirs` and left out the union of pr/1 and pr/2."""
    small.base = small.up.commit({"a.py": "x = 1\n\n\n\n\ny = 1\n", "b.py": "z = 1\n"}, "base", parent="main",
                                 ref="refs/heads/main")
    small.pr(1, {"a.py": "x = 10\n\n\n\n\ny = 1\n"})
    small.pr(2, {"a.py": "x = 20\n\n\n\n\ny = 1\n"})
    three = small.pr(3, {"b.py": "z = 3\n"})
    fix = small.up.commit({"b.py": "z = 33\n"}, "fork fix of z", parent=three, ref="refs/heads/fix")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/fix:refs/heads/fix")
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}, {"pr": 3}, {"carry": "fix", "commit": fix}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1, result.output
    out = " ".join(result.stdout.split())
    assert "next: pr/2 (`on_conflict: theirs`) overwrote pr/1's lines: compose both into a union instead " \
           "(`carrytool union new NAME 1 2" in out, out
    assert "next: carry/fix's own change edits pr/3's lines (a clean merge: its commit changes them): if carry/fix " \
           "means to change them, make its commit carry pr/3's change too and let it supersede it (`supersedes: " \
           "[3]`); else change carry/fix to leave those lines alone" in out, out


def test_a_carry_editing_another_carrys_lines_is_told_to_hold_both(cli: Cli, small: Small) -> None:
    """helper-144: carry/b, built on carry/a, edits its line; the hint said to supersede carry/a, which only a
    PR can be."""
    first = small.up.commit({"b.py": "x = 10\ny = 2\nz = 3\n"}, "carry a", parent=small.base, ref="refs/heads/a")
    second = small.up.commit({"b.py": "x = 11\ny = 2\nz = 3\n"}, "carry b", parent=first, ref="refs/heads/b")
    for ref in ("a", "b"):
        small.work.git("fetch", "-q", str(small.up.path), f"refs/heads/{ref}:refs/heads/{ref}")
    small.manifest([{"carry": "a", "commit": first}, {"carry": "b", "commit": second}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1, result.output
    out = " ".join(result.stdout.split())
    assert "next: carry/b's own change edits carry/a's lines (a clean merge: its commit changes them): fold carry/a " \
           "into carry/b (one carry holding both changes); else change carry/b to leave those lines alone" in out, out
    assert "supersede" not in out.split("next: carry/b")[1], out


def test_a_union_editing_a_prs_lines_is_told_to_take_it_in_and_refold(cli: Cli, small: Small) -> None:
    """helper-144: a union (supersedes pr/1) edited pr/2's line and was told `supersedes: [2]`, which, followed,
    drops pr/1 from it."""
    small.base = small.up.commit({"a.py": "x = 1\n\n\n\n\ny = 1\n"}, "base", parent="main", ref="refs/heads/main")
    small.pr(1, {"a.py": "x = 10\n\n\n\n\ny = 1\n"})
    two = small.pr(2, {"a.py": "x = 1\n\n\n\n\ny = 2\n"})
    union = small.up.commit({"a.py": "x = 10\n\n\n\n\ny = 22\n"}, "union of 1 (and y)", parent=two,
                            ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 2}, {"pr": 1}, {"carry": "u", "commit": union, "supersedes": [1]}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    out = " ".join(result.stdout.split())
    assert result.exit_code == 1 and "carry/u's own change edits pr/2's lines" in out, out
    assert "add 2 to carry/u's `supersedes` and refold it (`carrytool union compose u" in out, out


REVERTED = "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(8))


@pytest.mark.parametrize("shape", ["revert", "revert-edit", "other-lines", "part"])
def test_an_entry_that_reverts_another_says_so_and_suggests_no_union(cli: Cli, small: Small, shape: str) -> None:
    """A new user's trial on volcengine/verl: pr/5054 adds a block, upstream merged it and then its revert, pr/5091,
    both still open PRs; carried together, the revert (a clean merge) removed pr/5054's lines, and the next step
    was a union of the two, which holds neither change. A later entry whose hunk removes exactly what the
    earlier one added (and puts back what that replaced) is its revert: said in the record (`reverts`), the
    message and the next step. A hunk that adds other lines in their place, or takes only part of them, is a
    clobber as before."""
    block = "    if debug:\n        log(n)\n        trace(n)\n"
    base = small.base = small.up.commit({"m.py": REVERTED}, "a module", parent="main", ref="refs/heads/main")
    edited = REVERTED.replace("    return 3\n", "    return 33\n")
    added = REVERTED.replace("def f3():\n", "def f3():\n" + block)
    mine = edited if shape == "revert-edit" else added
    small.pr(1, {"m.py": mine})
    merged = small.up.commit({"m.py": mine}, "upstream merges pr 1", parent=base, ref="refs/heads/main")
    undone = {"revert": REVERTED, "revert-edit": REVERTED,
              "other-lines": REVERTED.replace("def f3():\n", "def f3():\n    flush()\n"),
              "part": REVERTED.replace("def f3():\n", "def f3():\n    if debug:\n        log(n)\n")}[shape]
    small.up.commit({"m.py": REVERTED}, "upstream reverts it", parent=merged, ref="refs/heads/main")
    small.up.commit({"m.py": undone}, "revert pr 1", parent=merged, ref="refs/pull/2/head")
    small.up.commit({"docs/c.txt": "later\n"}, "upstream goes on", parent="main", ref="refs/heads/main")
    # pr/2 is upstream's revert, a clean merge after pr/1; or, another change of pr/1's lines, which conflicts
    # with upstream's revert: resolved `theirs`, it takes those lines all the same
    small.manifest([{"pr": 1}, {"pr": 2} if shape.startswith("revert") else {"pr": 2, "on_conflict": "theirs"}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1 and small.branch() is None, result.output
    code, report = sync(cli, small)
    [lost] = landing(report, "pr/1")["clobbered"]
    assert (lost["by"], lost["file"], lost["scope"]) == ("pr/2", "m.py", "f3")
    if shape.startswith("revert"):
        assert lost["reverts"] is True
        back = ", and what that replaced comes back" if shape == "revert-edit" else ""
        assert f"was clobbered: pr/2 removed {'line 14' if back else 'lines 14-16'}, reverting it: exactly what " \
               f"pr/1 added goes{back}\n" in result.stdout, result.stdout
        assert "next: pr/2's own change reverts pr/1's change: carry one of the two, not both (remove pr/2's entry " \
               "to keep it, or pr/1's entry to leave it out)" in result.stdout, result.stdout
        assert "union" not in result.stdout
    else:
        assert "reverts" not in lost and "reverting" not in result.stdout
        assert "compose both into a union instead (`carrytool union new NAME 1 2 " in result.stdout, result.stdout


BLOCK = "    if debug:\n        log(n)\n        trace(n)\n"


def _merged_then_reverted(small: Small, victims: dict[int, str], merged: str, head: str, final: str) -> None:
    """Upstream merges the VICTIMS (PR number -> its m.py) as MERGED, then reverts to FINAL; pr/2, built on the
    merge, is HEAD (upstream's revert, or another change of the merged lines)."""
    base = small.base = small.up.commit({"m.py": REVERTED}, "a module", parent="main", ref="refs/heads/main")
    for number, text in victims.items():
        small.pr(number, {"m.py": text})
    at = small.up.commit({"m.py": merged}, "upstream merges them", parent=base, ref="refs/heads/main")
    small.up.commit({"m.py": final}, "upstream reverts them", parent=at, ref="refs/heads/main")
    small.up.commit({"m.py": head}, "pr 2", parent=at, ref="refs/pull/2/head")


def test_what_is_not_a_whole_revert_is_said_as_a_clobber(cli: Cli, small: Small) -> None:
    """helper-271's review: a block pr/2 moves to another function is no revert (its lines are in the result),
    and pr/2 reverting one of pr/1's two hunks reverts that hunk, not pr/1: the next step is the union, as for
    any clobber."""
    with_block = REVERTED.replace("def f3():\n", "def f3():\n" + BLOCK)
    moved = REVERTED.replace("def f5():\n", "def f5():\n" + BLOCK)
    _merged_then_reverted(small, {1: with_block}, with_block, moved, REVERTED)
    small.manifest([{"pr": 1}, {"pr": 2}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1 and "pr/1's change to m.py (f3) was clobbered: pr/2 removed lines 14-16\n" in \
        result.stdout and "revert" not in result.stdout, result.stdout
    assert "compose both into a union instead (`carrytool union new NAME 1 2 " in result.stdout


def test_a_revert_of_part_of_an_entry_is_said_of_that_hunk_and_the_union_suggested(cli: Cli, small: Small) -> None:
    both = REVERTED.replace("def f3():\n", "def f3():\n" + BLOCK).replace("return 6\n", "return 66\n")
    _merged_then_reverted(small, {1: both}, both, both.replace(BLOCK, ""), REVERTED)
    small.manifest([{"pr": 1}, {"pr": 2}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1, result.output
    assert "was clobbered: pr/2 removed lines 14-16, reverting it: exactly what pr/1 added goes\n" in result.stdout
    assert "carry one of the two" not in result.stdout
    assert "compose both into a union instead (`carrytool union new NAME 1 2 " in result.stdout, result.stdout


def test_a_revert_resolved_theirs_elsewhere_is_still_a_revert(cli: Cli, small: Small) -> None:
    """helper-271: pr/2 reverts pr/1 cleanly and conflicts with upstream in another function, resolved `theirs`:
    the message said the revert and the next step the union that holds neither change."""
    with_block = REVERTED.replace("def f3():\n", "def f3():\n" + BLOCK)
    _merged_then_reverted(small, {1: with_block}, with_block, REVERTED.replace("return 7\n", "return 77\n"),
                          REVERTED.replace("return 7\n", "return 70\n"))
    small.manifest([{"pr": 1}, {"pr": 2, "on_conflict": "theirs"}])
    code, report = sync(cli, small)
    [lost] = landing(report, "pr/1")["clobbered"]
    assert lost["reverts"] is True and lost["message"].endswith(
        "pr/2 removed lines 14-16 (on_conflict: theirs), reverting it: exactly what pr/1 added goes"), lost
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert "next: pr/2's own change reverts pr/1's change: carry one of the two, not both (remove pr/2's entry to " \
           "keep it, or pr/1's entry to leave it out)" in result.stdout, result.stdout
    assert "union new" not in result.stdout


def test_lines_an_entry_removed_that_a_clean_merge_puts_back_are_clobbered(cli: Cli, small: Small) -> None:
    """helper-271: pr/1 deletes a function; upstream merged it and then its revert, pr/2, which puts the function
    back from a base that lacks it: a clean merge. Only a `theirs` resolution was looked at for lines brought
    back, so pr/1's change was gone from the result and the run was green."""
    gone = REVERTED.replace("def f3():\n    return 3\n\n\n", "")
    _merged_then_reverted(small, {1: gone}, gone, REVERTED, REVERTED)
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    assert code == 1 and small.branch() is None, report
    [lost] = landing(report, "pr/1")["clobbered"]
    assert (lost["by"], lost["reverts"], lost["lines"], lost["scope"]) == ("pr/2", True, [13, 16], "f3"), lost
    assert lost["message"] == "pr/1's change to m.py (f3) was clobbered: pr/2 brought back lines 13-16 it had " \
                              "removed, reverting it", lost


def test_one_entry_reverting_two_says_so_once(cli: Cli, small: Small) -> None:
    one = REVERTED.replace("def f3():\n", "def f3():\n" + BLOCK)
    three = REVERTED.replace("return 6\n", "return 66\n")
    both = one.replace("return 6\n", "return 66\n")
    _merged_then_reverted(small, {1: one, 3: three}, both, REVERTED, REVERTED)
    small.manifest([{"pr": 1}, {"pr": 3}, {"pr": 2}])
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code == 1, result.output
    assert "next: pr/2's own change reverts pr/1's and pr/3's changes: carry pr/2 or those, not all (remove pr/2's " \
           "entry to keep them, or their entries to leave them out)" in result.stdout, result.stdout
    assert "union new" not in result.stdout


@pytest.mark.parametrize("back", ["as deleted", "changed"])
def test_a_file_an_entry_deleted_that_its_revert_brings_back_is_said_reverted(cli: Cli, small: Small, back: str) -> None:
    """helper-271: pr/1 deletes m.py; pr/2, upstream's revert of it, brings the file back: the next step was a
    union of the two ("edits pr/1's lines"), which holds neither. Brought back as pr/1 deleted it, it is pr/1's
    revert; brought back changed, a clobber as before."""
    again = REVERTED if back == "as deleted" else REVERTED.replace("return 7\n", "return 77\n")
    base = small.base = small.up.commit({"m.py": REVERTED}, "a module", parent="main", ref="refs/heads/main")
    small.pr(1, {"m.py": None})
    at = small.up.commit({"m.py": None}, "upstream merges pr 1", parent=base, ref="refs/heads/main")
    small.up.commit({"m.py": REVERTED}, "upstream reverts it", parent=at, ref="refs/heads/main")
    small.up.commit({"m.py": again}, "pr 2", parent=at, ref="refs/pull/2/head")
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = sync(cli, small)
    [lost] = landing(report, "pr/1")["clobbered"]
    assert code == 1 and lost["message"].endswith(
        "pr/2 brought the file it deleted back" + (", reverting it" if back == "as deleted" else "")), lost
    assert lost.get("reverts", False) is (back == "as deleted")
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert ("carry one of the two, not both" in result.stdout) is (back == "as deleted"), result.stdout
    assert ("union new NAME 1 2" in result.stdout) is (back != "as deleted"), result.stdout
