"""What a union's `drops` reach (helper-140/helper-141 found, helper-142): a whole file the union does not change,
not a hunk's module-level lines under `in`, a file name with glob characters as the hint writes it, a hunk
dropped at a stop (reconciled) or re-expressed (not stale), nothing when the union was not applied; and the
hint pins the PR's head, so a drop covers what the PR had when it was declared."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import Cli
from tests.gitrepo import init_repo, write_manifest
from tests.union.test_union_drops import PR1, PR2, WORKER

TEST_W = "def test_x():\n    assert 1\n"


def _sync(cli: Cli, root: Path, *, base: dict, pr1: dict, pr2: dict, union: dict, item: dict | int,
          before: list[dict] = (), union_extra: dict | None = None, text: bool = False):
    """Sync pr/1, pr/2 (each a commit on BASE) and a union committed by hand as UNION, superseding ITEM (pr/1's)
    and pr/2; BEFORE: carries committed ahead of the union ({name: files}). The JSON report (or the text run)."""
    up = init_repo(root / "up")
    main = up.commit(base, "base", ref="refs/heads/main")
    up.commit(pr1, "pr 1", parent=main, ref="refs/pull/1/head")
    up.commit(pr2, "pr 2", parent=main, ref="refs/pull/2/head")
    work = init_repo(root / "work", bare=True)
    carries = []
    for name, files in [(c["carry"], c["files"]) for c in before] + [("union", union)]:
        commit = up.commit(files, f"carry: {name}", parent=main, ref=f"refs/heads/{name}")
        work.git("fetch", "-q", str(up.path), f"refs/heads/{name}:refs/heads/{name}")
        carries.append({"carry": name, "commit": commit})
    carries[-1].update({"supersedes": [item, 2], **(union_extra or {})})
    manifest = write_manifest(root / "carries" / "manifest.yaml", {
        "version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
        "entries": [{"pr": 1}, {"pr": 2}, *carries]})
    if text:
        return cli("sync", "-m", str(manifest), "--repo", str(work.path))
    code, report = cli.json("sync", "-m", str(manifest), "--repo", str(work.path))
    assert code == 0, report.get("error")
    return report


def _kinds(report: dict, kind: str) -> list[dict]:
    return [w for w in report["warnings"] if w["kind"] == kind]


def _dropped(report: dict) -> list[dict]:
    return next(e for e in report["entries"] if e["id"] == "carry/union").get("dropped_on_purpose", [])


def _pr1_head(report: dict) -> str:
    return next(e["head"] for e in report["entries"] if e["id"] == "pr/1")


# -- a whole file the union does not change (D2) -----------------------------------------------------------

def _with_test(cli: Cli, root: Path, item: dict | int, *, text: bool = False):
    return _sync(cli, root, base={"w.py": WORKER}, pr1={"w.py": PR1, "tests/test_w.py": TEST_W},
                 pr2={"w.py": PR2}, union={"w.py": PR1.replace("        return 1\n", "        return 2\n")},
                 item=item, text=text)


def test_a_drop_without_in_covers_a_file_the_union_does_not_change(cli: Cli, tmp_path: Path) -> None:
    why = "the union's own test covers it"
    report = _with_test(cli, tmp_path, {"pr": 1, "drops": [{"file": "tests/**", "why": why}]})
    assert _kinds(report, "provided-absent") == [] and _kinds(report, "stale-drop") == []
    assert _dropped(report) == [{"pr": 1, "file": "tests/test_w.py", "lines": None, "scopes": [], "in": None,
                                 "why": why}]
    result = _with_test(cli, tmp_path / "text", {"pr": 1, "drops": [{"file": "tests/**", "why": why}]}, text=True)
    assert "dropped on purpose: carry/union leaves out pr/1's change to tests/test_w.py (the whole file): " \
           "the union's own test covers it" in result.stdout


def test_a_file_left_out_says_how_to_declare_it_and_a_scoped_drop_does_not_cover_it(cli: Cli, tmp_path: Path) -> None:
    report = _with_test(cli, tmp_path / "bare", 1)
    [absent] = _kinds(report, "provided-absent")
    assert absent["file"] == "tests/test_w.py" and "lines" not in absent
    assert absent["message"].endswith(f"; if on purpose, write its supersedes item as `{{pr: 1, head: "
                                      f"{_pr1_head(report)}, drops: [{{file: tests/test_w.py, why: \"...\"}}]}}`")
    report = _with_test(cli, tmp_path / "in", {"pr": 1, "drops": [{"file": "tests/test_w.py", "in": "test_x",
                                                                   "why": "x"}]})
    assert [w["file"] for w in _kinds(report, "provided-absent")] == ["tests/test_w.py"]
    assert [w["in"] for w in _kinds(report, "stale-drop")] == ["test_x"]
    [stale] = _kinds(report, "stale-drop")
    assert "carries them now" not in stale["message"] and "the union does not change tests/test_w.py at all" in \
        stale["message"]


# -- the head the hint pins (D3) ----------------------------------------------------------------------------

def test_the_hinted_head_makes_a_moved_pr_a_stale_fold(cli: Cli, tmp_path: Path) -> None:
    report = _sync(cli, tmp_path / "one", base={"w.py": WORKER}, pr1={"w.py": PR1}, pr2={"w.py": PR2},
                   union={"w.py": PR2}, item=1)
    [sleep, _wake] = _kinds(report, "provided-absent")
    head = re.search(r"\{pr: 1, head: ([0-9a-f]{40}), drops", sleep["message"]).group(1)
    assert head == _pr1_head(report)
    moved = PR1.replace("    def pad2(self):\n        return 2\n",
                        "    def pad2(self):\n        self.extra_critical_fix()\n        return 2\n")
    report = _sync(cli, tmp_path / "two", base={"w.py": WORKER}, pr1={"w.py": moved}, pr2={"w.py": PR2},
                   union={"w.py": PR2}, item={"pr": 1, "head": head, "drops": [{"file": "w.py", "in": "Worker",
                                                                                 "why": "upstream does it"}]})
    assert [w["folded"] for w in _kinds(report, "stale-fold")] == [head]


# -- glob characters in the hint (D4) ------------------------------------------------------------------------

def test_the_hint_names_a_file_with_glob_characters_literally(cli: Cli, tmp_path: Path) -> None:
    name, base = "pages/[id].js", "".join(f"line{k}\n" for k in range(30))
    files = {"base": {name: base}, "pr1": {name: base.replace("line3\n", "line3\nadded by pr1\nand more\n")},
             "pr2": {name: base.replace("line20\n", "line20 changed\n")}}
    report = _sync(cli, tmp_path / "one", **files, union=files["pr2"], item=1)
    [absent] = _kinds(report, "provided-absent")
    pattern = re.search(r"drops: \[\{file: (\"[^\"]*\"|\S+), why", absent["message"]).group(1).strip('"')
    assert pattern == "pages/[[]id].js"
    report = _sync(cli, tmp_path / "two", **files, union=files["pr2"],
                   item={"pr": 1, "drops": [{"file": pattern, "why": "not wanted"}]})
    assert _kinds(report, "provided-absent") == [] and _kinds(report, "stale-drop") == []
    assert [d["file"] for d in _dropped(report)] == [name]


# -- module-level lines (D5) ---------------------------------------------------------------------------------

REG = "REG = {}\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
REG_PR1 = REG + "\n\ndef helper():\n    return 3\nREG['helper'] = helper\n"
REG_PR2 = REG.replace("return 2", "return 22")


def test_a_drop_in_a_def_does_not_cover_a_hunk_with_module_level_lines(cli: Cli, tmp_path: Path) -> None:
    files = {"base": {"m.py": REG}, "pr1": {"m.py": REG_PR1}, "pr2": {"m.py": REG_PR2}, "union": {"m.py": REG_PR2}}
    report = _sync(cli, tmp_path / "in", **files, item={"pr": 1, "drops": [{"file": "m.py", "in": "helper",
                                                                             "why": "not needed"}]})
    [absent] = _kinds(report, "provided-absent")
    assert absent["lines"] == [10, 14] and "{file: m.py, why: " in absent["message"] and "in: helper" not in \
        absent["message"]
    assert [w["in"] for w in _kinds(report, "stale-drop")] == ["helper"] and _dropped(report) == []
    # why it covers nothing, and the drop that would: not "it carries them now" (helper-147)
    [stale] = _kinds(report, "stale-drop")
    assert "carries them now" not in stale["message"] and "pr/1's hunk m.py:10-14 (helper) is left out " \
        "(provided-absent), and a line of it at module level puts it out of reach of a drop with `in`; to drop it " \
        "on purpose, write the drop without `in`: `{file: m.py, why: \"not needed\"}`" in stale["message"]
    report = _sync(cli, tmp_path / "file", **files, item={"pr": 1, "drops": [{"file": "m.py", "why": "not needed"}]})
    assert _kinds(report, "provided-absent") == [] and [d["lines"] for d in _dropped(report)] == [[10, 14]]


# -- a hunk dropped at a stop; a union not applied (P1, P2) -----------------------------------------------

def test_a_drop_of_a_hunk_the_union_reconciled_away_is_dropped_on_purpose_not_stale(cli: Cli, tmp_path: Path) -> None:
    # pr/2 rewrites the line pr/1 adds after: the union took pr/2's side, pr/1's line is gone; both could be kept,
    # so it is warned left out (h213), and the maintainer's drop says it was on purpose
    pr2 = WORKER.replace("        self.offload()\n", "        self.offload(now=True)\n")
    files = {"base": {"w.py": WORKER}, "pr1": {"w.py": PR1}, "pr2": {"w.py": pr2},
             "union": {"w.py": pr2.replace("        self.reload(tags)\n",
                                           "        self.reload(tags)\n        torch.cuda.synchronize()\n")}}
    report = _sync(cli, tmp_path / "none", **files, item=1)
    assert [(w["entry"], w["lines"]) for w in _kinds(report, "provided-absent")] == [("pr/1", [7, 7])]
    why = "pr/2's offload(now=True) empties the cache"
    report = _sync(cli, tmp_path / "drop", **files, item={"pr": 1, "drops": [{"file": "w.py", "in": "Worker.sleep",
                                                                               "why": why}]})
    assert _kinds(report, "stale-drop") == [] and _kinds(report, "provided-absent") == []
    assert _dropped(report) == [{"pr": 1, "file": "w.py", "lines": [7, 7], "scopes": ["Worker.sleep"],
                                 "in": "Worker.sleep", "why": why}]
    # a drop whose every hunk stands verbatim is stale still
    report = _sync(cli, tmp_path / "verbatim", **files, item={"pr": 1, "drops": [{"file": "w.py", "in":
                                                                                   "Worker.wake_up", "why": "x"}]})
    assert [w["in"] for w in _kinds(report, "stale-drop")] == ["Worker.wake_up"]


def test_the_drops_of_a_union_not_applied_are_not_judged(cli: Cli, tmp_path: Path) -> None:
    # carry/first brings pr/1's change and edits Worker.other as the union does not: the union conflicts, is skipped
    first = {"carry": "first", "files": {"w.py": PR1.replace("        return 1\n", "        return 3\n")}}
    report = _sync(cli, tmp_path, base={"w.py": WORKER}, pr1={"w.py": PR1}, pr2={"w.py": PR2},
                   union={"w.py": PR2}, before=[first], union_extra={"on_conflict": "skip"},
                   item={"pr": 1, "drops": [{"file": "w.py", "in": "Worker.wake_up", "why": "upstream has it"}]})
    union = next(e for e in report["entries"] if e["id"] == "carry/union")
    assert union["status"] == "conflict", union
    assert _kinds(report, "stale-drop") == []
