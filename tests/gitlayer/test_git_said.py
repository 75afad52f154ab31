"""What a failed git command's error shows of git's stderr: the reason, not the usage text after it."""

from __future__ import annotations

from carrytool.errors import GitError


def test_the_reason_comes_before_a_usage_text_git_printed() -> None:
    usage = "\n".join(f"    --option-{n}   what it does" for n in range(40))
    error = GitError("`git range-diff` failed (exit 129)",
                     stderr=f"fatal: need two commit ranges\n\nusage: git range-diff [<options>]\n{usage}\n")
    assert str(error) == "`git range-diff` failed (exit 129)\n  git said: fatal: need two commit ranges"


def test_without_a_usage_text_the_last_six_lines_are_shown() -> None:
    error = GitError("`git push` failed", stderr="".join(f"line {n}\n" for n in range(1, 9)))
    assert str(error).splitlines()[1:] == ["  git said: line 3", *[f"            line {n}" for n in range(4, 9)]]


def test_a_porcelain_push_line_shows_its_tabs_as_spaces() -> None:
    error = GitError("`git push` failed", stderr="!\tf1ea605:refs/heads/dev\t[remote rejected] (hook declined)\n")
    assert str(error).splitlines()[1] == "  git said: ! f1ea605:refs/heads/dev [remote rejected] (hook declined)"
