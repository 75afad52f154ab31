"""A recorded edit of the fold (a fixup) reapplied on the next fold: cleanly, 3-way, or shown both ways."""

from __future__ import annotations

from pathlib import Path

from carrytool.gitlayer.git import Git
from carrytool.union.resolutions import Fixup
from carrytool.union.reuse import apply_fixup
from tests.gitrepo import init_repo


def test_a_fixup_that_cannot_merge_shows_both_versions(tmp_path: Path) -> None:
    git = Git(init_repo(tmp_path / "r", bare=True).path)
    fixup = Fixup("pr/7", "a.py", ("100644", b"x = 1\n"), ("100644", b"x = 2\n"))
    # the file is a symlink now: no 3-way merge, the fold now and the recorded edit side by side
    content, clean = apply_fixup(git, fixup, ("120000", b"b.py"))
    assert clean is False
    assert content == ("100644", b"<<<<<<< the fold now\nb.py\n=======\nx = 2\n\n>>>>>>> your recorded edit (pr/7)\n")
    # the file is gone now
    content, clean = apply_fixup(git, fixup, None)
    assert clean is False and content is not None
    assert content[1].startswith(b"<<<<<<< the fold now\n(no such file now)\n=======\nx = 2\n")
    # unchanged since the edit: the edit as recorded
    assert apply_fixup(git, fixup, ("100644", b"x = 1\n")) == (("100644", b"x = 2\n"), True)
    git.close()
