"""A union of PRs where one makes a file a submodule (or upstream did, and the union makes it a file again) and
another edits the file's lines: the submodule's commit is no blob of lines. Weighing what the union keeps of the
PRs read it as one (h236: "object ... is missing from the repository", then "`git diff-tree -r -p` failed ...
unable to read <commit>"): sync and explain exit 4, no report. CI runs this file on git 2.39 and a current git."""

from __future__ import annotations

import pytest

from tests.conftest import Cli, Small

GITLINK = "1234567890123456789012345678901234567890"
TEXT = "alpha = compute(1)\nbeta = compute(2)\ngamma = compute(3)\n"


def _corpus(small: Small, shape: str) -> None:
    """pr/1 edits sub's second line; pr/2 changes m.py (and sub); carry/u folds both."""
    start = small.up.commit({"sub": TEXT, "m.py": "a = 1\n"}, "start", parent="main", ref="refs/heads/main")
    small.pr(1, {"sub": TEXT.replace("compute(2)", "compute(20)")}, parent=start)
    if shape == "a-pr-makes-it-a-submodule":
        small.up.commit({"sub": GITLINK, "m.py": "a = 2\n"}, "pr 2", parent=start, ref="refs/pull/2/head",
                        modes={"sub": "160000"})
        on, files = start, {"m.py": "a = 2\n", "sub": TEXT.replace("compute(2)", "compute(21)")}
    else:       # upstream made it a submodule since; the union, on upstream, makes it a file again
        small.pr(2, {"m.py": "a = 2\n", "sub": TEXT.replace("compute(3)", "compute(30)")}, parent=start)
        on = small.up.commit({"sub": GITLINK}, "submodule", parent=start, ref="refs/heads/main",
                             modes={"sub": "160000"})
        files = {"m.py": "a = 2\n", "sub": TEXT.replace("compute(3)", "compute(30)")}
    union = small.up.commit(files, "union", parent=on, ref="refs/heads/union")
    small.work.git("fetch", "-q", str(small.up.path), "+refs/heads/union:refs/heads/union")
    small.manifest([{"pr": 1}, {"pr": 2}, {"carry": "u", "commit": union, "supersedes": [1, 2]}])


@pytest.mark.parametrize("command", ["sync", "explain"])
@pytest.mark.parametrize("shape", ["a-pr-makes-it-a-submodule", "the-union-makes-it-a-file-again"])
def test_a_union_over_a_submodule_and_a_file_is_weighed(cli: Cli, small: Small, command: str, shape: str) -> None:
    _corpus(small, shape)
    code, report = cli.json(command, "-m", small.manifest_path, "--repo", small.work.path,
                            *(["--dry-run"] if command == "sync" else []))
    assert code == 0, report.get("error", report)
    if command == "explain":    # pr/1's line, in neither, is weighed against the lines the union wrote itself
        coverage = [(c["pr"], h["lines"]) for c in report["coverage"] for h in c["hunks"]]
        assert coverage[0] == ("pr/1", [2, 2]), coverage
