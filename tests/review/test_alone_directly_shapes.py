"""explain's merges alone written into upstream's tree (PairMerger._directly) for more shapes of change than
tests/review/test_alone_directly.py's: links, submodules, executable and empty files, a PR whose history
deletes a file and adds it again (h229's probes of c83552e). Each is written directly, and the trees, commits
and report are merge-tree's. CI runs this file on git 2.39 and on a current git."""

from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.review.test_alone_directly import explained_both_ways

LIB = {"lib/one.py": "one = 1\n" * 20, "lib/two.py": "two = 2\n" * 20, "run.sh": "echo run\n", "e.txt": ""}
GITLINK = "1234567890123456789012345678901234567890"
SHAPES: dict[str, tuple[dict, dict | None]] = {     # pr/1's files and their modes, from the base
    "adds-symlink": ({"link": "lib/one.py"}, {"link": "120000"}),
    "file-to-symlink": ({"run.sh": "lib/one.py"}, {"run.sh": "120000"}),
    "adds-submodule": ({"sub": GITLINK}, {"sub": "160000"}),
    "adds-submodule-in-dir": ({"lib/sub": GITLINK}, {"lib/sub": "160000"}),
    "dir-to-submodule": ({"lib/one.py": None, "lib/two.py": None, "lib": GITLINK}, {"lib": "160000"}),
    "adds-empty-file": ({"empty.txt": ""}, None),
    "empties-a-file": ({"lib/two.py": ""}, None),
    "fills-an-empty-file": ({"e.txt": "now\n"}, None),
    "adds-executable": ({"new.sh": "echo\n"}, {"new.sh": "100755"}),
}


def _corpus(small: Small, shape: str) -> None:
    """Upstream changed b.py since the PRs' base; pr/1 makes SHAPE's change; pr/2 adds a file nobody touches."""
    up = small.up
    base = up.commit(LIB, "lib", parent=small.base)
    up.commit({"b.py": "x = 10\ny = 2\nz = 3\n"}, "upstream", parent=base, ref="refs/heads/main")
    if shape.startswith("deletes-then-adds"):       # the net change: lib/one.py changed, or left as it was
        gone = up.commit({"lib/one.py": None}, "pr 1 deletes", parent=base)
        again = "one = 1\n" * 19 + "uno\n" if shape == "deletes-then-adds" else LIB["lib/one.py"]
        up.commit({"lib/one.py": again, "z.txt": "z\n"}, "pr 1 adds it again", parent=gone, ref="refs/pull/1/head")
    else:
        files, modes = SHAPES[shape]
        up.commit(files, "pr 1", parent=base, ref="refs/pull/1/head", modes=modes)
    small.pr(2, {"csrc/k.cu": "// kernel 2\n"}, parent=base)
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})


@pytest.mark.parametrize("shape", [*SHAPES, "deletes-then-adds", "deletes-then-adds-alike"])
def test_merges_alone_written_directly_are_merge_trees(cli: Cli, small: Small, shape: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small, shape)
    assert explained_both_ways(cli, small, monkeypatch) == [2]
