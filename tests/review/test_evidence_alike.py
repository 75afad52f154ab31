"""explain's evidence: a file's change that several entries make alike is diffed once, the same hunks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from carrytool.gitlayer.git import Git
from carrytool.review import evidence
from tests.conftest import Cli, Small


def _lines(name: str, edits: dict[int, str]) -> str:
    return "".join(f"{edits.get(i, f'{name} = {i}')}\n" for i in range(30))


def _stack(small: Small) -> None:
    """pr/2 is pr/1 and one more commit (a rename with an edit, an executable bit, a new file); pr/3 makes
    one of pr/1's edits alike from upstream's base and another of its own; pr/4 makes pr/1's edit of a.py
    alike in b.py, whose blob is a.py's (the same blobs at another path: diffed again)."""
    files = {"a.py": _lines("a", {}), "b.py": _lines("a", {}), "c.py": _lines("c", {}), "old.py": _lines("o", {}),
             "tool.sh": "echo hi\n", "data.bin": b"\x00\x01binary\x00"}
    small.base = small.up.commit(files, "files", parent="main", ref="refs/heads/main")
    small.up.commit({"c.py": _lines("c", {0: "upstream"})}, "upstream", parent=small.base, ref="refs/heads/main")
    one = small.pr(1, {"a.py": _lines("a", {3: "pr = 1", 20: "pr = 1"}), "c.py": _lines("c", {10: "pr = 1"}),
                       "data.bin": b"\x00\x02binary\x00"})
    small.up.commit({"old.py": None, "new.py": _lines("o", {5: "moved = 2"}), "e.py": "new\n", "tool.sh": "echo hi\n"},
                    "pr 2", parent=one, ref="refs/pull/2/head", modes={"tool.sh": "100755"})
    small.pr(3, {"a.py": _lines("a", {3: "pr = 1", 20: "pr = 1"}), "c.py": _lines("c", {12: "pr = 3"})})
    small.pr(4, {"b.py": _lines("a", {3: "pr = 1", 20: "pr = 1"})})
    small.manifest([{"pr": n} for n in (1, 2, 3, 4)], policy={"on_conflict": "skip"})


def test_changes_made_alike_are_diffed_once_with_the_same_hunks(cli: Cli, small: Small,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _stack(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    diffed: list[list[int]] = []          # the files of each entry's patch, per run
    hunks: list[dict[str, list]] = []     # each entry's hunks, per run
    real_patches, real_hunks = Git.patches_later, evidence.hunks_later

    def patches(self: Git, pairs):  # noqa: ANN001, ANN202
        answer = real_patches(self, pairs)

        def counted() -> list[bytes]:
            out = answer()
            diffed.append([patch.count(b"diff --git ") for patch in out])
            return out
        return counted

    def kept(git: Git, found):  # noqa: ANN001, ANN202
        setter = real_hunks(git, found)

        def run() -> None:
            setter()
            hunks.append({f.id: list(f.hunks) for f in found})
        return run

    monkeypatch.setattr(Git, "patches_later", patches)
    monkeypatch.setattr("carrytool.review.explain.hunks_later", kept)
    code, once = cli.json(*args)
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")
    monkeypatch.setattr(evidence, "DIFF_ALIKE_ONCE", False)
    each_code, each = cli.json(*args)
    assert (code, once) == (each_code, each)
    assert hunks[0] == hunks[1]
    by_id = hunks[0]
    assert {h.kind for h in by_id["pr/2"]} == {"text", "binary", "mode"}
    assert [h.path for h in by_id["pr/2"] if h.old_path] == ["new.py"] and by_id["pr/2"][:4] == by_id["pr/1"][:4]
    # pr/2 asks git for its own commit's three files alone (the rename is one), pr/3 for c.py, pr/4 for b.py:
    # the same blobs at another path are asked again
    assert diffed == [[3, 3, 1, 1], [3, 6, 2, 1]]
