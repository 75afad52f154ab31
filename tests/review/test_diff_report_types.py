"""`diff` of a sync report (`sync --report FILE`) holding JSON of the wrong types: a `result`, `upstream.sha` or
entry `head` that is no SHA, an `upstream.url` that is no string, `asserts` that are not a list, and a lock or
report entry `pr/x`, each ended diff in a traceback (TypeError, AttributeError, ValueError: exit 70; h246). Each
is bad input naming the file, exit 2."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli, Small
from tests.review.test_status_local import build

EDITS = {
    "result not an object": lambda d: d.update(result=7),
    "result sha a number": lambda d: d["result"].update(sha=7),
    "upstream sha a list": lambda d: d["upstream"].update(sha=[1]),
    "upstream url a number": lambda d: d["upstream"].update(url=7),
    "a head not a SHA": lambda d: d["entries"][0].update(head=True),
    "asserts not a list": lambda d: d.update(asserts=7),
    "an id pr/ with no number": lambda d: d["entries"][0].update(id="pr/x"),
}


@pytest.mark.parametrize("edit", EDITS)
def test_a_report_of_the_wrong_types_is_bad_input(cli: Cli, small: Small, edit: str) -> None:
    build(cli, small)
    small.manifest([{"pr": 1}, {"pr": 2}])
    report = small.root / "report.json"
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run", "--report",
               report).exit_code == 0
    doc = json.loads(report.read_text())
    EDITS[edit](doc)
    report.write_text(json.dumps(doc))
    lock = small.manifest_path.with_name("manifest.yaml.lock")
    for args in ((lock, report), (report, lock)):
        result = cli("diff", *args, "-m", small.manifest_path, "--repo", small.work.path)
        assert result.exit_code == 2, result.output
        assert f"{report} is neither a lock nor a carrytool report" in " ".join(result.stderr.split()), result.stderr


def test_a_lock_entry_pr_with_no_number_is_bad_input(cli: Cli, small: Small) -> None:
    build(cli, small)
    small.manifest([{"pr": 1}, {"pr": 2}])
    lock = small.manifest_path.with_name("manifest.yaml.lock")
    other = small.root / "other.lock"
    doc = json.loads(lock.read_text())
    doc["entries"][0]["id"] = "pr/x"
    other.write_text(json.dumps(doc))
    result = cli("diff", lock, other, "-m", small.manifest_path, "--repo", small.work.path)
    assert result.exit_code in (0, 1, 2), result.output
