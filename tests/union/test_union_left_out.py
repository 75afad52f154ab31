"""A union that drops a PR's hunk at a stop of its fold is said so, by `union continue` and by sync
(helper-128: three PRs, the conflict block's "ours" side held pr/102's method, the maintainer took the
other side, and the union went without it, pr/102 skipped as superseded, sync green and silent)."""

from __future__ import annotations

from pathlib import Path

from carrytool.union.resolutions import ConflictHunk, split_conflicts
from tests.conftest import Cli
from tests.gitrepo import init_repo, write_manifest
from tests.union.fold_scenario import Fold

AGENT = ('class Agent:\n    def __init__(self, name: str = "x"):\n        self.name = name\n\n'
         '    @classmethod\n    def build(cls):\n        return cls()\n')

MANIFEST = """\
version: 1
upstream: {url: ../up, branch: main}
fork: {branch: dev}
policy:
  structured_merge: {paths: ["**/*.py"]}
entries:
  - pr: 101
  - pr: 102
  - pr: 104
  - carry: u
    patch: unions/u.patch
    supersedes: [101, 102, 104]
"""


def _method(body: str) -> str:
    return AGENT.replace("        self.name = name\n", "        self.name = name\n\n" + body, 1)


class ThreePrs:
    """upstream `up` with agent.py; PRs 101 and 104 add `reset` two ways, 102 adds `describe` at the same place."""

    def __init__(self, root: Path) -> None:
        self.up = init_repo(root / "up")
        base = self.up.commit({"agent.py": AGENT}, "base", ref="refs/heads/main")
        for number, body in ((101, '    def reset(self) -> None:\n        self.name = "x"\n'),
                             (102, '    def describe(self) -> str:\n        return f"agent {self.name}"\n'),
                             (104, '    def reset(self) -> None:\n        self.name = ""\n')):
            self.up.commit({"agent.py": _method(body)}, f"pr {number}", parent=base, ref=f"refs/pull/{number}/head")
        self.work = init_repo(root / "work", bare=True).path
        self.manifest = root / "carries" / "manifest.yaml"
        self.manifest.parent.mkdir(parents=True)
        self.manifest.write_text(MANIFEST)
        self.scratch = self.work / "carrytool" / "union" / "u" / "tree"

    def args(self) -> list[str]:
        return ["-m", str(self.manifest), "--repo", str(self.work)]


def _take_theirs(path: Path) -> None:
    parts = split_conflicts(path.read_bytes())
    assert parts is not None and any(isinstance(p, ConflictHunk) for p in parts)
    path.write_bytes(b"\n".join(p.theirs if isinstance(p, ConflictHunk) else p for p in parts))


def test_a_resolution_that_drops_a_third_prs_method_is_said_by_continue_and_by_sync(cli: Cli, tmp_path: Path) -> None:
    prs = ThreePrs(tmp_path)
    result = cli("union", "compose", "u", *prs.args())
    assert result.exit_code == 3, result.stdout + result.stderr
    shown = (prs.scratch / "agent.py").read_text()
    assert "def describe" in shown.split("=======")[0]       # pr/102's method, kept on the "ours" side
    _take_theirs(prs.scratch / "agent.py")
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0, result.stdout + result.stderr
    out = result.stdout + result.stderr
    assert "warning: the union lacks pr/102's hunk agent.py:5-7 (Agent.describe)" in out
    assert "lacks pr/101's" not in out and "lacks pr/104's" not in out      # reconciled: no warning
    # the two methods pr/101 and pr/104 insert at the same place are named (helper-159: "no other PR ...")
    assert "both could be kept: pr/101 and pr/104 insert in the same conflict" in out, out
    code, report = cli.json("sync", *prs.args())
    assert code == 0, report.get("error")
    absent = [(w["entry"], w["other"], w["file"], w.get("lines")) for w in report["warnings"]
              if w["kind"] == "provided-absent"]
    assert absent == [("pr/102", "carry/u", "agent.py", [5, 7])]
    [warning] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert "agent.py:5-7 (Agent.describe)" in warning["message"]


def test_a_union_keeping_every_method_is_not_warned_about(cli: Cli, tmp_path: Path) -> None:
    prs = ThreePrs(tmp_path)
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    path = prs.scratch / "agent.py"
    path.write_text(path.read_text().replace("<<<<<<< ", "#<").replace("=======\n", "").replace(">>>>>>> ", "#>")
                    .replace('        self.name = "x"\n', '        self.name = ""\n'))
    text = "\n".join(line for line in path.read_text().split("\n") if not line.startswith("#"))
    path.write_text(text)
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "lacks" not in result.stdout + result.stderr
    code, report = cli.json("sync", *prs.args())
    assert code == 0 and not [w for w in report["warnings"] if w["kind"] == "provided-absent"]


def test_a_true_conflict_the_union_reconciled_is_not_warned_about(cli: Cli, tmp_path: Path) -> None:
    """pr/1 and pr/2 change the same lines of a.py: neither PR's line stands in the union (it says
    `line 3 by both`), and nothing is lost: the union reconciled them there."""
    fold = Fold(tmp_path)
    assert cli("union", "compose", "u", *fold.args()).exit_code == 3
    path = fold.scratch / "a.py"
    parts = split_conflicts(path.read_bytes())
    path.write_bytes(b"\n".join(p.ours.replace(b"by one", b"by both") if isinstance(p, ConflictHunk) else p
                                for p in parts or []))
    result = cli("union", "continue", "u", *fold.args())
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "lacks" not in result.stdout + result.stderr
    code, report = cli.json("sync", *fold.args())
    assert code == 0 and not [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert "line 3 by both" in fold.show("dev", "a.py").decode()


# A union committed by hand over two PRs that change a.py (helper-131's review: sync warned for a
# union that carries a PR's function renamed, or moved and reformatted; and missed a one-line hunk
# dropped from one method because another method has the same line).
ADD = "import os\n\n\ndef f(x):\n    y = x + 1\n    return y\n\n\ndef g(x):\n    return x * 2\n"
ADD_K = "\n\ndef k(a, b):\n    return a + b  # the sum\n"
WORKER = ("import torch\n\n\nclass Worker:\n    def sleep(self):\n        self.offload()\n        torch.cuda.synchronize()\n\n"
          "    def wake_up(self, tags=None):\n        self.reload(tags)\n        self.ready = True\n\n"
          "    def other(self):\n        return 1\n")


def _absent_at_sync(cli: Cli, root: Path, base: dict[str, str], prs: dict[int, dict[str, str]],
                    union: dict[str, str]) -> list[tuple[str, str, list[int]]]:
    """Sync upstream BASE, PRS and a union of them committed as UNION on main: its provided-absent warnings."""
    up = init_repo(root / "up")
    main = up.commit(base, "base", ref="refs/heads/main")
    for number, files in prs.items():
        up.commit(files, f"pr {number}", parent=main, ref=f"refs/pull/{number}/head")
    commit = up.commit(union, "carry: union", parent=main, ref="refs/heads/union")
    work = init_repo(root / "work", bare=True)
    work.git("fetch", "-q", str(up.path), "refs/heads/union:refs/heads/union")
    manifest = write_manifest(root / "carries" / "manifest.yaml", {
        "version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
        "entries": [*({"pr": n} for n in prs), {"carry": "union", "commit": commit, "supersedes": list(prs)}]})
    code, report = cli.json("sync", "-m", str(manifest), "--repo", str(work.path))
    assert code == 0, report.get("error")
    return [(w["entry"], w["file"], w["lines"]) for w in report["warnings"] if w["kind"] == "provided-absent"]


def test_a_function_the_union_renamed_is_not_warned_about(cli: Cli, tmp_path: Path) -> None:
    renamed = (ADD + ADD_K).replace("def k(", "def add(").replace("return x * 2", "return x * 3")
    assert _absent_at_sync(cli, tmp_path, {"a.py": ADD}, {1: {"a.py": ADD + ADD_K},
                                                           2: {"a.py": ADD.replace("return x * 2", "return x * 3")}},
                           {"a.py": renamed}) == []


def test_a_function_the_union_moved_and_reformatted_is_not_warned_about(cli: Cli, tmp_path: Path) -> None:
    moved = ADD.replace("import os\n", "import os\n\n\ndef k(a: int, b: int) -> int:\n    return a  +  b\n\n")
    moved = moved.replace("return x * 2", "return x * 3")
    assert _absent_at_sync(cli, tmp_path, {"a.py": ADD}, {1: {"a.py": ADD + ADD_K},
                                                           2: {"a.py": ADD.replace("return x * 2", "return x * 3")}},
                           {"a.py": moved}) == []


def test_a_line_dropped_from_one_method_is_warned_about_though_another_method_has_it(cli: Cli, tmp_path: Path
                                                                                       ) -> None:
    synced = WORKER.replace("        self.reload(tags)\n", "        self.reload(tags)\n        torch.cuda.synchronize()\n")
    other = WORKER.replace("        return 1\n", "        return 2\n")
    assert _absent_at_sync(cli, tmp_path, {"w.py": WORKER}, {1: {"w.py": synced}, 2: {"w.py": other}},
                           {"w.py": other}) == [("pr/1", "w.py", [11, 11])]


DISABLE = ("class Model:\n    def disable(self):\n        \"\"\"Disable the adapters.\"\"\"\n        if self.prompt:\n"
           "            try:\n                yield\n            finally:\n                self.restore()\n"
           "                self.disabled = False\n")


def test_a_line_deleted_at_a_stop_outside_its_conflict_is_said_by_continue_sync_and_explain(cli: Cli, tmp_path: Path
                                                                                            ) -> None:
    """helper-147 on peft: pr/3565 and pr/3572 conflict in `disable_adapter`'s `finally:`; the maintainer took a
    side there and deleted pr/3565's `was_disabled = ...` line above it, which had merged cleanly. The union
    changes that def (its way of the conflict), and `union continue`, sync and explain said nothing (explain:
    `re-expressed`)."""
    up = init_repo(tmp_path / "up")
    old = up.commit({"m.py": DISABLE}, "base", ref="refs/heads/main")
    newer = "import os\n\n\n" + DISABLE          # the PRs branched from upstream at different times
    base = up.commit({"m.py": newer}, "os", parent=old, ref="refs/heads/main")
    one = DISABLE.replace('        """Disable the adapters."""\n',
                          '        """Disable the adapters."""\n        was = self.disabled\n')
    up.commit({"m.py": one.replace("self.disabled = False", "self.disabled = was")}, "pr 1", parent=old,
              ref="refs/pull/1/head")
    up.commit({"m.py": newer.replace("self.disabled = False", "self.disabled = None")}, "pr 2", parent=base,
              ref="refs/pull/2/head")
    work = init_repo(tmp_path / "work", bare=True).path
    manifest = write_manifest(tmp_path / "carries" / "manifest.yaml", {
        "version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
        "entries": [{"pr": 1}, {"pr": 2}, {"carry": "u", "patch": "unions/u.patch", "supersedes": [1, 2]}]})
    args = ["-m", str(manifest), "--repo", str(work)]
    assert cli("union", "compose", "u", *args).exit_code == 3
    path = work / "carrytool" / "union" / "u" / "tree" / "m.py"
    _take_theirs(path)
    path.write_text(path.read_text().replace("        was = self.disabled\n", ""))
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    out = result.stdout + result.stderr
    assert "warning: the union lacks pr/1's hunk m.py:4 (Model.disable)" in out, out
    assert "m.py:9" not in out                      # pr/1's side of the conflict: reconciled
    code, report = cli.json("explain", *args)
    assert code == 0, report
    assert [(w["entry"], w["lines"]) for w in report["warnings"] if w["kind"] == "provided-absent"] == \
        [("pr/1", [4, 4])]
    [cov] = [c for c in report["coverage"] if c["pr"] == "pr/1"]
    assert [(h["lines"], h["status"]) for h in cov["hunks"]] == [([4, 4], "absent"), ([10, 10], "reconciled")]


def test_a_file_deleted_at_a_stop_that_a_pr_changes_is_said_by_continue(cli: Cli, tmp_path: Path) -> None:
    """helper-147 (found): the union's tree lacking a file its PR changes was taken for carried. pr/1 edits g.py;
    the maintainer deletes it at the stop their conflict in m.py makes; no PR deletes it: said, with the drop
    that declares it (pasted, it is dropped on purpose)."""
    up = init_repo(tmp_path / "up")
    base = up.commit({"m.py": DISABLE, "g.py": "def g():\n    return 1\n"}, "base", ref="refs/heads/main")
    up.commit({"m.py": DISABLE.replace("self.disabled = False", "self.disabled = 1"),
               "g.py": "def g():\n    return 2\n"}, "pr 1", parent=base, ref="refs/pull/1/head")
    up.commit({"m.py": DISABLE.replace("self.disabled = False", "self.disabled = 2")}, "pr 2", parent=base,
              ref="refs/pull/2/head")
    work = init_repo(tmp_path / "work", bare=True).path
    manifest = tmp_path / "carries" / "manifest.yaml"

    def fold(item: object) -> str:
        write_manifest(manifest, {
            "version": 1, "upstream": {"url": "../up", "branch": "main"}, "fork": {"branch": "dev"},
            "entries": [{"pr": 1}, {"pr": 2}, {"carry": "u", "patch": "unions/u.patch", "supersedes": [item, 2]}]})
        args = ["-m", str(manifest), "--repo", str(work)]
        result = cli("union", "compose", "u", *args)
        if result.exit_code == 3:
            _take_theirs(work / "carrytool" / "union" / "u" / "tree" / "m.py")
            (work / "carrytool" / "union" / "u" / "tree" / "g.py").unlink()
            result = cli("union", "continue", "u", *args)
        assert result.exit_code == 0, result.stdout + result.stderr
        return result.stdout + result.stderr

    out = fold(1)
    assert "warning: the union lacks g.py, which pr/1 changes, in no region it reconciled (no other PR it folds " \
           "deletes that file)" in out, out
    assert 'drops: [{file: g.py, why: "..."}]' in out, out
    out = fold({"pr": 1, "drops": [{"file": "g.py", "why": "g is gone"}]})       # refolded from the store
    assert "warning: the union lacks" not in out and "dropped on purpose: pr/1's change to g.py (the whole file): " \
        "g is gone" in out, out
