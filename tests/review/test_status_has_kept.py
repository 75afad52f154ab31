"""`status` keeps what it says of a PR upstream made as another commit (review.status_has) by upstream's commit and
the PR's head (h256): explain's kept answer is keyed by the PR's changes and hunks, so every `status --offline`
read them again (a merge base, a diff and a patch, the weighing's modules imported: 0.47 -> 0.76 s with one such
PR) to find an answer it already had. A second status reads its words and says exactly what the first said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from carrytool.gitlayer import history
from carrytool.pipeline import kept
from carrytool.review import status_has
from carrytool.review.upstream_has import HasFinder
from tests.conftest import Cli, Small

G3 = "def f():\n    return 1\n\n\ndef g():\n    return 3\n"


def _made(cli: Cli, small: Small) -> str:
    """pr/1 conflicts with upstream alone; upstream made its hunk as another commit (tests/review/test_status_local)."""
    small.pr(1, {"a.py": G3})
    made = small.up.commit({"a.py": G3 + "\n\ndef h():\n    return 5\n"}, "Make g three, add h (#1)", parent="main",
                           ref="refs/heads/main")
    small.manifest([{"pr": 1}], policy={"on_conflict": "skip"})
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    return made


def _status(cli: Cli, small: Small) -> dict:
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0, out
    return out["entries"][0]


def _kept(small: Small) -> Path:
    [path] = (small.work.path / "carrytool" / "cache").glob("statushas-git*.json")
    return path


def test_a_second_status_reads_what_the_first_said(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    made = _made(cli, small)
    first = _status(cli, small)
    assert first["suggestion"] == "drop" and made[:10] in first["why"], first
    [(key, answer)] = json.loads(_kept(small).read_text())["statushas"].items()
    assert answer == {"said": "upstream already has its one hunk (a.py: 1 of 1, line 6): likely merged upstream as "
                              f"{made[:10]} \"Make g three, add h (#1)\"", "every": True, "one": True, "unmade": 0}

    def weighed(*args: object) -> None:
        raise AssertionError("weighed again")

    monkeypatch.setattr(status_has, "_weigh", weighed)      # the kept words answer: nothing is read again
    assert _status(cli, small) == first
    answer["said"] = "kept words"
    _kept(small).write_text(json.dumps({"statushas": {key: answer}}))
    assert "; but kept words; upstream has its one hunk" in _status(cli, small)["why"]


@pytest.mark.parametrize("damage", ["{not json", '{"statushas": {"x": 1}}', "[]"])
def test_a_damaged_kept_file_is_weighed_again_to_the_same_words(cli: Cli, small: Small, damage: str) -> None:
    _made(cli, small)
    first = _status(cli, small)
    key = next(iter(json.loads(_kept(small).read_text())["statushas"]))
    for broken in (damage, json.dumps({"statushas": {key: {"said": 7, "every": True, "one": True}}})):
        _kept(small).write_text(broken)
        assert _status(cli, small) == first


def test_words_of_a_failed_git_log_s_are_not_kept(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `git log -S` that failed names no commit; explain's cache does not keep that answer (h219), nor status's:
    the next status names the commit."""
    made = _made(cli, small)
    real = history._pickaxe_args
    monkeypatch.setattr(history, "_pickaxe_args", lambda *args: (*real(*args)[:1], "--no-such-option",
                                                                 *real(*args)[1:]))
    assert made[:10] not in _status(cli, small)["why"]
    assert not list((small.work.path / "carrytool" / "cache").glob("statushas-git*.json"))
    monkeypatch.setattr(history, "_pickaxe_args", real)
    assert made[:10] in _status(cli, small)["why"]
    assert len(json.loads(_kept(small).read_text())["statushas"]) == 1


def test_a_pr_pushed_again_is_weighed_again(cli: Cli, small: Small) -> None:
    """The words are kept by the PR's head (and upstream's commit): a new head is another answer."""
    _made(cli, small)
    assert _status(cli, small)["suggestion"] == "drop"
    small.pr(1, {"a.py": G3.replace("return 1", "return 11")})      # one more hunk, which upstream lacks
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0
    again = _status(cli, small)
    assert again["suggestion"] == "investigate" and "upstream already has 1 of its 2 hunks" in again["why"], again
    assert len(json.loads(_kept(small).read_text())["statushas"]) == 2


def _made_two(cli: Cli, small: Small) -> None:
    """pr/1 and pr/2 each conflict with upstream alone; upstream made both their hunks as one commit."""
    small.pr(1, {"a.py": G3})
    small.pr(2, {"b.py": "x = 1\ny = 2\nz = 30\n"})
    small.up.commit({"a.py": G3 + "\n\ndef h():\n    return 5\n", "b.py": "x = 1\ny = 2\nz = 30\nw = 4\n"},
                    "Make g three and z thirty (#1, #2)", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1}, {"pr": 2}], policy={"on_conflict": "skip"})
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path).exit_code == 0


def test_the_kept_file_is_written_once_a_run(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """h259: each PR weighed wrote the whole file again (up to SAID_MAX answers): once a run, with every answer."""
    _made_two(cli, small)
    written: list[str] = []
    real = kept.write_json_cache
    monkeypatch.setattr(kept, "write_json_cache", lambda folder, prefix, *rest: written.append(prefix) or
                        real(folder, prefix, *rest))
    code, out = cli.json("status", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0 and [e["suggestion"] for e in out["entries"]] == ["drop", "drop"], out
    assert written.count(".statushas") == 1
    assert len(json.loads(_kept(small).read_text())["statushas"]) == 2


def test_nothing_is_kept_when_explain_keeps_nothing(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """With explain's kept answers switched off (HasFinder.keep_answers, which tests compare both ways), status keeps
    no words of its own either: a run that is to weigh afresh weighs afresh, then and the next time."""
    _made(cli, small)
    monkeypatch.setattr(HasFinder, "keep_answers", False)
    first = _status(cli, small)
    assert first["suggestion"] == "drop"
    assert not list((small.work.path / "carrytool" / "cache").glob("statushas-git*.json"))
