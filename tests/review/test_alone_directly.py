"""explain's merges of each entry alone onto upstream: a PR whose paths upstream left alone since its base
is written into upstream's tree (PairMerger._directly, composing's shortcut), not merged. The trees, the
commits and the report are the ones merge-tree gives. CI runs this file on git 2.39 and on a current git."""

from __future__ import annotations

import pytest

from carrytool.gitlayer.git import MergeResult
from carrytool.review.overlap_pairs import PairMerger
from tests.conftest import Cli, Small

CASES = ["dir-renamed-upstream", "dir-renamed-by-pr", "file-where-pr-has-dir", "disjoint", "pr-deletes",
         "pr-renames", "pr-adds-upstream-deletes", "same-file", "modes", "mode-change", "file-to-dir", "dir-to-file"]


def _corpus(small: Small, case: str) -> None:
    """Upstream's change since the PRs' base and pr/1's (CASE); pr/2 adds a file nobody else touches, pr/3
    meets pr/1 and pr/2 on their files, pr/4 is built on an older base than the others."""
    up = small.up
    lib = {"lib/one.py": "one = 1\n" * 20, "lib/two.py": "two = 2\n" * 20, "run.sh": "echo run\n"}
    if case == "modes":   # a legacy mode git reads as 100644, in a directory of the base upstream still is;
        # pr/1's git wrote that directory anew (canonical modes, the same files), as an index without its
        # cached trees does: its diff does not show it, merge-tree takes its tree object
        blob = up.git("hash-object", "-w", "--stdin", input=b"legacy\n")
        odd, canonical = (up.git("mktree", input=f"{mode} blob {blob}\tlegacy.txt\n100644 blob {blob}\tother.txt\n"
                                 .encode()) for mode in ("100664", "100644"))
        root = up.git("ls-tree", small.base)
        base = up.git("commit-tree", up.git("mktree", input=f"{root}\n040000 tree {odd}\todd\n".encode()),
                      "-p", small.base, "-m", "old modes")
        up.git("update-ref", "refs/heads/main", base)
        pr: dict = {"a.py": "def f():\n    return 5\n\n\ndef g():\n    return 2\n"}
        edited = up.git("ls-tree", up.commit(pr, "pr 1, canonical", parent=base))
        head_tree = up.git("mktree", input="\n".join(line for line in edited.splitlines() if not line.endswith("\todd"))
                           .encode() + f"\n040000 tree {canonical}\todd\n".encode())
        up.git("update-ref", "refs/pull/1/head", up.git("commit-tree", head_tree, "-p", base, "-m", "pr 1"))
    else:
        base = up.commit(lib, "lib", parent=small.base)
        upstream = {
            "dir-renamed-upstream": {"lib/one.py": None, "lib/two.py": None, "pkg/one.py": lib["lib/one.py"],
                                     "pkg/two.py": lib["lib/two.py"]},
            "dir-renamed-by-pr": {"lib/three.py": "three = 3\n"},
            "file-where-pr-has-dir": {"tools": "a file\n"},
            "disjoint": {"b.py": "x = 10\ny = 2\nz = 3\n"},
            "pr-deletes": {"b.py": "x = 10\ny = 2\nz = 3\n"},
            "pr-renames": {"b.py": "x = 10\ny = 2\nz = 3\n"},
            "pr-adds-upstream-deletes": {"docs/c.txt": None},
            "same-file": {"a.py": "def f():\n    return 9\n\n\ndef g():\n    return 2\n"},
            "mode-change": {"b.py": "x = 10\ny = 2\nz = 3\n"},
            "file-to-dir": {"b.py": "x = 10\ny = 2\nz = 3\n"},
            "dir-to-file": {"b.py": "x = 10\ny = 2\nz = 3\n"},
        }[case]
        pr = {
            "dir-renamed-upstream": {"lib/new.py": "new = 1\n"},
            "dir-renamed-by-pr": {"lib/one.py": None, "lib/two.py": None, "src/one.py": lib["lib/one.py"],
                                  "src/two.py": lib["lib/two.py"]},
            "file-where-pr-has-dir": {"tools/run.sh": "echo\n"},
            "disjoint": {"a.py": "def f():\n    return 5\n\n\ndef g():\n    return 2\n", "lib/one.py": "one = 11\n"},
            "pr-deletes": {"docs/c.txt": None, "lib/two.py": None},
            "pr-renames": {"lib/one.py": None, "lib/uno.py": lib["lib/one.py"] + "uno = 1\n"},
            "pr-adds-upstream-deletes": {"docs/new.txt": "new\n"},
            "same-file": {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 7\n"},
            "mode-change": {"run.sh": "echo run\n"},
            "file-to-dir": {"lib/two.py": None, "lib/two.py/inner.py": "x = 1\n"},
            "dir-to-file": {"docs/c.txt": None, "docs": "now a file\n"},
        }[case]
        up.commit(upstream, "upstream", parent=base, ref="refs/heads/main")
        up.commit(pr, "pr 1", parent=base, ref="refs/pull/1/head",
                  modes={"run.sh": "100755"} if case == "mode-change" else None)
    small.pr(2, {"csrc/k.cu": "// kernel 2\n"}, parent=base)
    small.pr(3, {"csrc/k.cu": "// kernel 3\n", **{p: "pr 3\n" for p in pr if p.count("/") == 1}}, parent=base)
    small.pr(4, {"old.txt": "built on an older base\n"}, parent=small.base)
    small.manifest([{"pr": n} for n in (1, 2, 3, 4)], policy={"on_conflict": "skip"})


def _alone_seen(monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, tuple[bool, str, tuple[str, ...]]]], list[int]]:
    """Each explain's merges alone (entry -> clean, tree, conflicted files), and how many it wrote directly."""
    seen: list[dict[str, tuple[bool, str, tuple[str, ...]]]] = []
    direct: list[int] = []
    real_alone, real_directly = PairMerger.alone, PairMerger._directly

    def alone(self: PairMerger, order):  # noqa: ANN001, ANN202
        results: list[MergeResult] = real_alone(self, order)
        seen.append({f.id: (r.clean, r.tree, r.conflicted_files) for f, r in zip(order, results)}
                    | {f"commit {key}": (True, value, ()) for key, value in self.commits.items()})
        return results

    def directly(self: PairMerger, order, lines):  # noqa: ANN001, ANN202
        found = real_directly(self, order, lines)
        direct.append(len(found))
        return found

    monkeypatch.setattr(PairMerger, "alone", alone)
    monkeypatch.setattr(PairMerger, "_directly", directly)
    return seen, direct


def explained_both_ways(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """explain --offline of SMALL's manifest with merges alone written directly, then without: the same merges
    alone (trees, commits) and the same report, asserted; how many each run wrote directly."""
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    seen, direct = _alone_seen(monkeypatch)
    code, report = cli.json(*args)
    monkeypatch.setattr(PairMerger, "alone_directly", False)
    merged_code, merged = cli.json(*args)
    assert seen[0] == seen[1], "a merge alone written into upstream's tree is not merge-tree's"
    assert (code, report) == (merged_code, merged)
    return direct


@pytest.mark.parametrize("case", CASES)
def test_merges_alone_written_into_upstreams_tree_are_merge_trees(cli: Cli, small: Small, case: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small, case)
    direct = explained_both_ways(cli, small, monkeypatch)
    # pr/2 and pr/4 always (files nobody touched), pr/3 unless its files beside pr/1's were touched, pr/1 where
    # upstream left its paths alone (directory renames are off: an addition stays where it was made); no head
    # that rewrites a directory of legacy modes (merge-tree takes its tree object)
    assert direct == [{"file-where-pr-has-dir": 2, "same-file": 3, "modes": 3}.get(case, 4)]


def test_explain_merges_alone_only_what_composing_merges(cli: Cli, small: Small,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The entries composing writes into upstream's tree explain writes too: neither asks git to merge them."""
    _corpus(small, "same-file")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    from carrytool.gitlayer.git import Git

    asked: list[int] = []
    real = Git.merge_trees

    def merge_trees(self: Git, pairs, **kwargs):  # noqa: ANN001, ANN202
        asked.append(len(pairs))
        return real(self, pairs, **kwargs)

    monkeypatch.setattr(Git, "merge_trees", merge_trees)
    code, _report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code in (0, 1)
    assert asked[0] == 1               # pr/1 alone: it and upstream changed a.py
