"""The manifest JSON Schema (generated from the loader's key table), `check` on many files, CLI conventions."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from carrytool.manifest.model import SCHEMA
from carrytool.manifest.schema import SHIPPED, manifest_schema, render_schema
from tests.conftest import Cli
from tests.manifest.test_manifest import GOOD


def test_shipped_schema_is_the_generated_one() -> None:
    assert SHIPPED.read_text() == render_schema(), "run: carrytool schema > carrytool/schemas/manifest.schema.json"
    jsonschema.Draft202012Validator.check_schema(manifest_schema())


def test_schema_accepts_what_the_loader_accepts_and_names_every_key() -> None:
    schema = manifest_schema()
    jsonschema.validate(yaml.safe_load(GOOD), schema)
    for section, keys in SCHEMA.items():
        props = schema["properties"] if section == "manifest" else (
            schema["$defs"][section].get("properties") or schema["$defs"][section]["oneOf"][1]["properties"])
        assert set(props) == {k.name for k in keys}, section



def test_schema_accepts_names_beyond_ascii_as_the_loader_does() -> None:
    # helper-115: the loader takes what str.isidentifier takes; an editor must not flag it
    doc = yaml.safe_load(GOOD)
    doc["asserts"][0].update({"in": "Café.résumé", "calls": "*.réveil", "guarded_by": "été",
                              "args": {"mode": "Mode.RAPIDE_É"}})
    jsonschema.validate(doc, manifest_schema())


def test_schema_accepts_true_false_null_as_argument_values() -> None:
    doc = yaml.safe_load(GOOD)
    doc["asserts"][0]["args"] = {"polar": True, "group": None}
    jsonschema.validate(doc, manifest_schema())

def test_schema_rejects_typos_two_checks_and_bad_entries() -> None:
    schema = manifest_schema()
    base = yaml.safe_load(GOOD)
    for mutate in (lambda d: d["fork"].update(brnach="x"),
                   lambda d: d["asserts"][0].update(not_calls="x"),
                   lambda d: d["entries"][0].update(carry="x"),
                   lambda d: d["entries"].append({"carry": "y"}),
                   lambda d: d["policy"].update(on_conflict="theirs")):
        doc = json.loads(json.dumps(base))
        mutate(doc)
        try:
            jsonschema.validate(doc, schema)
        except jsonschema.ValidationError:
            continue
        raise AssertionError(f"schema accepted {doc}")


def test_check_many_files_reports_each(cli: Cli, tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(GOOD)
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.replace("branch: intarweb-dev", "branch: -x"))
    result = cli("check", good, bad)
    assert result.exit_code == 2
    assert f"{good}: ok (4 entries: 3 PRs, 1 carry; 2 asserts)" in result.stdout
    assert f"{bad}:7: fork.branch" in result.stderr


def test_cli_conventions(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    version = subprocess.run([sys.executable, "-m", "carrytool", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.strip() == "carrytool 0.1.0"
    helptext = subprocess.run([sys.executable, "-m", "carrytool", "sync", "--help"], capture_output=True,
                              text=True, env=env)
    assert "Example: carrytool sync" in helptext.stdout and "\x1b[" not in helptext.stdout
    manifest = tmp_path / "m.yaml"
    manifest.write_text(GOOD)
    quiet = subprocess.run([sys.executable, "-m", "carrytool", "-q", "check", "-m", str(manifest)],
                           capture_output=True, text=True)
    assert quiet.returncode == 0 and quiet.stdout == ""


@pytest.mark.parametrize("launcher", ["none", "sh", "bash", "env-i"])
def test_completion_does_not_depend_on_the_parent_shell(launcher: str) -> None:
    """`--show-completion bash` prints the bash script from sh, bash, or no shell at all (typer alone
    guesses from the parent process: "Shell sh not supported" under sh, a traceback with none)."""
    argv = [sys.executable, "-m", "carrytool", "--show-completion", "bash"]
    command = " ".join(shlex.quote(a) for a in argv)
    root = str(Path(__file__).resolve().parents[2])
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": root}
    run = {"none": argv, "sh": ["/bin/sh", "-c", command], "bash": ["/bin/bash", "-c", command],
           "env-i": ["/usr/bin/env", "-i", f"PYTHONPATH={root}", *argv]}[launcher]
    proc = subprocess.run(run, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "complete -o default -F _carrytool_completion carrytool" in proc.stdout
    assert "_CARRYTOOL_COMPLETE=complete_bash" in proc.stdout
    # the shell named on the command line wins over the parent's, and an unknown one is an input error
    zsh = subprocess.run([sys.executable, "-m", "carrytool", "--show-completion=zsh"], capture_output=True,
                         text=True, env=env)
    assert zsh.returncode == 0 and zsh.stdout.startswith("#compdef carrytool")
    bad = subprocess.run([sys.executable, "-m", "carrytool", "--show-completion", "sh"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and "no completion for shell 'sh'" in bad.stderr
    # no shell named: a supported parent shell, else $SHELL (here sh is the parent: not supported)
    guessed = subprocess.run(["/bin/sh", "-c", " ".join(argv[:-1])], capture_output=True, text=True,
                             env={**env, "SHELL": "/usr/bin/fish"})
    assert guessed.returncode == 0 and "complete --command carrytool" in guessed.stdout


def test_pre_commit_hook_definition() -> None:
    hooks = yaml.safe_load((Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "carrytool-check")
    assert hook["entry"] == "carrytool check" and hook["pass_filenames"] is True


def test_help_in_a_pipe_is_plain_click_text() -> None:
    out = subprocess.run([sys.executable, "-m", "carrytool", "sync", "--help"], capture_output=True, text=True).stdout
    assert "[default: .]" in out and "\\[" not in out and "╭" not in out and "\x1b[" not in out
