"""`--format json` answers in JSON even when the command stops on an error: CI that parses stdout gets
`{"ok": false, "exit_code": N, "error": {"kind", "message", "exit_code"}}` from every command that has a
JSON format, not an empty stdout (`diff`, `status`, `bisect`, `verify --mutants` and `union status` printed
nothing; sync, verify and explain always did)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, Small

COMMANDS = [["sync"], ["verify"], ["explain"], ["bisect"], ["diff"], ["status"], ["verify", "--mutants"],
            ["union", "status"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_missing_manifest_is_a_json_error(cli: Cli, tmp_path: Path, command: list[str]) -> None:
    missing = tmp_path / "nowhere.yaml"
    result = cli(*command, "-m", missing, "--repo", tmp_path, "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["exit_code"] == 2 and doc["command"] == " ".join(command[:2])
    # a report's keys only where the document is a report (helper-98: diff's error had `"asserts": []`)
    assert ("asserts" in doc) == (command[0] in ("sync", "verify", "explain") and command[1:] != ["--mutants"])
    assert doc["error"]["exit_code"] == 2 and str(missing) in doc["error"]["message"]
    assert doc["error"]["kind"] in ("ManifestError", "InputError")
    assert "carrytool: error:" in result.stderr                 # the message for people is still there


@pytest.mark.parametrize("command", [["bisect", "--assert", "nope", "--offline"], ["status"]], ids=" ".join)
def test_an_error_after_the_manifest_loaded_is_a_json_error(cli: Cli, small: Small, command: list[str]) -> None:
    """Past the manifest: bisect with an assert the manifest lacks; status asked online of a local-path upstream,
    which has no forge (offline it answers from this repository: tests/review/test_status_local.py)."""
    small.pr(1, {"b.py": "x = 1\ny = 20\nz = 3\n"})
    manifest = small.manifest([{"pr": 1}])
    result = cli(*command, "-m", manifest, "--repo", small.work.path, "--format", "json")
    doc = json.loads(result.stdout)
    assert result.exit_code == doc["exit_code"] == doc["error"]["exit_code"] != 0 and doc["ok"] is False
    assert doc["command"] == command[0] and doc["error"]["message"]


def test_text_format_prints_nothing_on_stdout(cli: Cli, tmp_path: Path) -> None:
    result = cli("diff", "-m", tmp_path / "nowhere.yaml", "--repo", tmp_path)
    assert result.exit_code == 2 and result.stdout == "" and "carrytool: error:" in result.stderr
