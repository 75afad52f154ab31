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
    assert "pr/101" not in out.split("warning: the union lacks", 1)[1].split("\n")[0]   # reconciled: no warning
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
