"""carrytool diff given the nights newest first (`diff NEW OLD`), and after a red night (h244, from h239's trial
on sqlalchemy: `diff NEW OLD` said "9 rewritten away" of an upstream that had only moved on, and a bare `diff`
after a red night compared two green nights, nothing said of the failed night's report)."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.conftest import Cli
from tests.review.test_diff import Nights, _diff

LOCK = "carries/manifest.yaml.lock"


def _two_nights(tmp_path: Path, cli: Cli) -> Nights:
    n = Nights(tmp_path / "n", cli)
    n.night([{"pr": 1}, {"pr": 2}])
    n.second_day()                  # upstream +1 commit, pr/1 pushed again
    n.night([{"pr": 1}, {"pr": 2}])
    return n


def test_nights_given_newest_first_are_said_so_with_the_command_in_order(tmp_path: Path, cli: Cli) -> None:
    n = _two_nights(tmp_path, cli)
    code, out = _diff(n, f"HEAD:{LOCK}", f"HEAD~1:{LOCK}")           # newest first, from the manifest's history
    assert code == 0 and out["upstream"]["commits"] == 0 and out["upstream"]["dropped"] == 1, out
    older, newer = n.fork.rev("HEAD~1"), n.fork.rev("HEAD")
    command = shlex.join(["carrytool", "diff", f"HEAD~1:{LOCK}", f"HEAD:{LOCK}", "-m", str(n.manifest.resolve()),
                          "--repo", str(n.work.path.resolve())])
    assert out["newest_first"] == {
        "sure": True, "command": command,
        "why": f"HEAD~1:{LOCK} is from commit {older[:12]}, an ancestor of HEAD:{LOCK}'s {newer[:12]}"}, out
    result = cli("diff", f"HEAD:{LOCK}", f"HEAD~1:{LOCK}", "-m", n.manifest, "--repo", n.work.path)
    said = (f"given newest first: HEAD~1:{LOCK} is from commit {older[:12]}, an ancestor of HEAD:{LOCK}'s "
            f"{newer[:12]}; this diff reads HEAD:{LOCK} as the older night; in order: {command}")
    assert result.exit_code == 0 and f"\n  {said}\n" in result.stdout, result.stdout
    assert f"carrytool: warning: {said}" in result.stderr
    quiet = cli("diff", "-q", f"HEAD:{LOCK}", f"HEAD~1:{LOCK}", "-m", n.manifest, "--repo", n.work.path)
    assert f"carrytool: warning: {said}" in quiet.stderr                 # said under -q too
    code, right = _diff(n, f"HEAD~1:{LOCK}", f"HEAD:{LOCK}")
    assert code == 0 and right["newest_first"] is None, right


def test_lock_files_given_newest_first_are_said_likely_so(tmp_path: Path, cli: Cli) -> None:
    n = _two_nights(tmp_path, cli)
    old, new = tmp_path / "old.lock", tmp_path / "new.lock"
    old.write_text(n.fork.show("HEAD~1", LOCK))
    new.write_text(n.fork.show("HEAD", LOCK))
    code, out = _diff(n, str(new), str(old))
    assert code == 0, out
    up_old, up_new = out["upstream"]["to"], out["upstream"]["from"]
    assert out["newest_first"]["sure"] is False and out["newest_first"]["why"] == (
        f"{old}'s upstream {up_old[:12]} is 1 commit behind {new}'s {up_new[:12]}, none ahead, and its composed "
        "commit is no newer (else upstream went back since)"), out
    assert out["newest_first"]["command"].startswith(shlex.join(["carrytool", "diff", str(old), str(new)]))
    code, right = _diff(n, str(old), str(new))
    assert code == 0 and right["newest_first"] is None, right


def test_upstream_gone_back_under_a_newer_pr_head_is_not_said_reversed(tmp_path: Path, cli: Cli) -> None:
    n = _two_nights(tmp_path, cli)
    n.up.git("update-ref", "refs/heads/main", n.base)                 # upstream reset back
    n.up.commit({"c.txt": "c3\n"}, "pr 2 again", parent=n.base, ref="refs/pull/2/head")
    n.night([{"pr": 1}, {"pr": 2}])
    code, out = _diff(n)
    assert code == 0 and out["upstream"]["commits"] == 0 and out["upstream"]["dropped"], out
    assert out["newest_first"] is None, out


def test_the_same_upstream_is_no_evidence_of_order(tmp_path: Path, cli: Cli) -> None:
    """Two nights on one upstream, a PR pushed in between: its composed commit's date alone does not tell a pair
    given newest first from a PR pinned back to an older head, so nothing is said either way."""
    n = Nights(tmp_path / "n", cli)
    n.night([{"pr": 1}, {"pr": 2}])
    n.up.commit({"c.txt": "c3\n"}, "pr 2 again", parent=n.base, ref="refs/pull/2/head")
    n.night([{"pr": 1}, {"pr": 2}])
    old, new = tmp_path / "old.lock", tmp_path / "new.lock"
    old.write_text(n.fork.show("HEAD~1", LOCK))
    new.write_text(n.fork.show("HEAD", LOCK))
    for pair in ((old, new), (new, old)):
        code, out = _diff(n, *map(str, pair))
        assert code == 0 and out["upstream"]["commits"] == 0 and out["newest_first"] is None, out


def test_a_bare_diff_after_a_red_night_names_the_diff_of_that_nights_report(tmp_path: Path, cli: Cli) -> None:
    n = _two_nights(tmp_path, cli)
    lock_before = n.manifest.with_name("manifest.yaml.lock").read_text()
    n.up.commit({"c.txt": "c3\n"}, "pr 2 again", parent=n.base, ref="refs/pull/2/head")   # pushed: breaks it
    n.manifest.write_text(n.manifest.read_text() + "asserts:\n- {name: no-c3, file: c.txt, absent: c3}\n")
    report = tmp_path / "sync-report.json"
    red = cli.json("sync", "-m", n.manifest, "--repo", n.work.path, "--report", report)[1]
    assert red["exit_code"] == 1 and n.manifest.with_name("manifest.yaml.lock").read_text() == lock_before
    composed = red["result"]["sha"]
    options = ["-m", str(n.manifest.resolve()), "--repo", str(n.work.path.resolve())]
    command = shlex.join(["carrytool", "diff", f"HEAD:{LOCK}", "REPORT.json", *options])
    code, out = _diff(n)
    assert code == 0 and out["red_night"] == {
        "composed": composed, "record": f"refs/carrytool/dev/nights:{composed}.lock", "command": command}, out
    text = cli("diff", "-m", n.manifest, "--repo", n.work.path).stdout
    assert (f"\n  the last sync in --repo composed {composed[:12]} and wrote no lock (a red night): this diff ends "
            f"at the last night that wrote one; that night's report (`sync --report FILE`) shows it: {command}"
            "\n") in text, text
    markdown = cli("diff", "-m", n.manifest, "--repo", n.work.path, "--format", "markdown").stdout
    assert f"the last sync in --repo composed {composed[:12]} and wrote no lock" in markdown, markdown
    code, that = _diff(n, f"HEAD:{LOCK}", str(report))                   # the command as printed, with the report
    assert code == 0 and that["outcome"]["to"]["ok"] is False and that["red_night"] is None, that
    assert that["asserts"]["failing"][0]["name"] == "no-c3", that


def test_no_red_night_is_said_after_a_green_one_or_of_a_lock_synced_elsewhere(tmp_path: Path, cli: Cli) -> None:
    n = Nights(tmp_path / "n", cli)
    n.night([{"pr": 1}, {"pr": 2}])
    first = n.work.ref("refs/carrytool/dev/nights")
    n.second_day()
    n.night([{"pr": 1}, {"pr": 2}])
    code, out = _diff(n)
    assert code == 0 and out["red_night"] is None, out
    n.work.git("update-ref", "refs/carrytool/dev/nights", first)     # this repository synced the first night only:
    code, out = _diff(n)                                              # the lock's was synced elsewhere (CI)
    assert code == 0 and out["red_night"] is None, out
    n.work.git("update-ref", "-d", "refs/carrytool/dev/nights")
    code, out = _diff(n)
    assert code == 0 and out["red_night"] is None, out
