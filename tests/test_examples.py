"""The CI examples under examples/ run, for real, against the demo scenario.

A small local runner plays each GitHub Actions job / GitLab CI job step by step: `run:`/`script:` blocks
go through bash exactly as written, with `${{ ... }}` and `$VAR` values pointing at a private copy of the
demo (the demo's fork.git stands in for the fork repository: its default branch `carries` holds the
manifest, and git's `insteadOf` sends the manifest's SSH fork URL there). `uses:` actions are emulated
(checkout clones, upload-artifact collects); carrytool's own action (action.yml, `<owner>/carrytool@v1`)
runs through tests/test_action.py's runner with `carrytool-version: installed`. The only lines not run
are the `pip install` of carrytool (the test's own environment has it) and, until it exists in this
tree, `carrytool explain`.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.main import get_command

from carrytool.cli import app
from carrytool.demo.scenario import Scenario
from tests.conftest import Cli, copy_demo, isolate_env
from tests.gitrepo import Repo
from tests.test_action import load_action, run_action

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
NIGHTLY = EXAMPLES / "github" / "nightly-sync.yml"
VERIFY = EXAMPLES / "github" / "verify.yml"
GITLAB = EXAMPLES / "gitlab" / ".gitlab-ci.yml"
PRE_COMMIT = EXAMPLES / "pre-commit-config.yaml"
CI_FILES = (NIGHTLY, VERIFY, GITLAB)

SECRET = "ghp_TESTSECRET0123456789abcdefABCDEF"
CONTROL = "carries"                       # the fork repository's default branch in these tests
FORK_BRANCH = "intarweb-dev"
MANIFEST = "carries/vllm-intarweb.yaml"   # where the examples expect the manifest
GITLAB_HOST = "gitlab.example"
FORMATS = {"sync": {"text", "json"}, "verify": {"text", "json", "github"}, "explain": {"text", "markdown", "json"},
           "union status": {"text", "json"}, "diff": {"text", "markdown", "json"}, "status": {"text", "json"},
           "bisect": {"text", "json"}}
ROOT_COMMAND = get_command(app)


@functools.cache
def explain_available() -> bool:
    """`carrytool explain --help` works (explain is being built separately): asked once a session, not for
    every runner (a process of its own each time: half a second, some 25 times in this file)."""
    proc = subprocess.run([sys.executable, "-m", "carrytool", "explain", "--help"], capture_output=True)
    return proc.returncode == 0


EXPLAIN_MISSING = "carrytool explain is not in this tree yet (`carrytool explain --help` fails): its step was not run"


# --------------------------------------------------------------------------------------------------------
# Reading the examples: YAML, scripts, and the carrytool command lines in them


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if True in data:                      # YAML 1.1 reads the key `on:` as True
        data["on"] = data.pop(True)
    return data


def scripts(path: Path) -> list[str]:
    """Every shell script of a CI file: GitHub `run:` blocks, GitLab script/before_script/after_script."""
    data = load(path)
    if "jobs" in data:
        return [step["run"] for job in data["jobs"].values() for step in job["steps"] if "run" in step]
    out = []
    for job in data.values():
        if isinstance(job, dict):
            for key in ("before_script", "script", "after_script"):
                out += job.get(key, [])
    return out


_PUNCT = ";&|<>()"


def carrytool_commands(script: str) -> list[list[str]]:
    """The argv of every `carrytool ...` command in SCRIPT (continuations joined, up to the next operator)."""
    found = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=_PUNCT)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
        for i, token in enumerate(tokens):
            before = tokens[i - 1] if i else None
            if token != "carrytool" or not (before is None or set(before) <= set(_PUNCT)
                                            or before in ("!", "then", "do", "else")):
                continue
            argv = [token]
            for nxt in tokens[i + 1:]:
                if set(nxt) <= set(_PUNCT):
                    break
                argv.append(nxt)
            found.append(argv)
    return found


def is_carrytool_action(uses: str) -> bool:
    return uses.split("@")[0].endswith("/carrytool")


def action_argv(step_with: dict[str, Any]) -> list[str]:
    """The command line carrytool's action runs for a step's `with:` (the format and report it adds too)."""
    declared = load_action()["inputs"]
    unknown = set(step_with) - set(declared)
    assert not unknown, f"carrytool's action has no input {sorted(unknown)}"
    command = step_with["command"]
    args = shlex.split(re.sub(r"\$\{\{.*?\}\}", "EXPR", str(step_with.get("args", ""))))   # one word each
    argv = ["carrytool", command]
    if step_with.get("manifest"):
        argv += ["--manifest", step_with["manifest"]]
    if step_with.get("repo"):
        argv += ["--repo", str(step_with["repo"])]
    if not any(a.startswith("--format") for a in args):
        if command == "verify" and "--mutants" not in args:
            argv += ["--format", "github"]
        elif command == "explain":
            argv += ["--format", "markdown"]
    if command in ("sync", "verify", "explain"):
        argv += ["--report", str(step_with.get("report") or "$RUNNER_TEMP/carrytool.XXXXXX/report.json")]
    return argv + args


def action_commands(path: Path) -> list[list[str]]:
    data = load(path)
    return [action_argv(step.get("with") or {}) for job in data.get("jobs", {}).values()
            for step in job["steps"] if is_carrytool_action(step.get("uses", ""))]


def all_commands() -> list[tuple[str, list[str]]]:
    return [(f"{path.relative_to(ROOT)}: {' '.join(argv)}", argv)
            for path in CI_FILES
            for argv in [a for script in scripts(path) for a in carrytool_commands(script)] + action_commands(path)]


def parse_command(argv: list[str]) -> Any:
    """Parse ARGV with carrytool's own command line (options and arguments), without running anything.

    Raises AssertionError naming the problem: an unknown command or option, a missing argument, a format
    the command does not have.
    """
    cmd: Any = ROOT_COMMAND
    args = argv[1:]
    names: list[str] = []
    while hasattr(cmd, "commands"):        # a group (typer's click may be vendored: no isinstance)
        assert args and args[0] in cmd.commands, f"no command carrytool {' '.join(names + args[:1])}"
        names.append(args[0])
        cmd, args = cmd.commands[args[0]], args[1:]
    try:
        ctx = cmd.make_context(" ".join(["carrytool", *names]), list(args))
    except Exception as exc:
        if not any(k.__name__ == "UsageError" for k in type(exc).__mro__):
            raise
        raise AssertionError(f"{' '.join(argv)}: {exc}") from None
    fmt = ctx.params.get("fmt")
    if fmt is not None and not fmt.startswith("$"):
        assert fmt in FORMATS[" ".join(names)], f"--format {fmt} is not a format of carrytool {' '.join(names)}"
    return ctx


# --------------------------------------------------------------------------------------------------------
# The fork repository of the tests: the demo's fork.git with a default branch holding the manifest


@dataclass
class Project:
    demo: Scenario
    fork: Repo
    gitconfig: Path
    root: Path

    def env(self) -> dict[str, str]:
        """What a CI runner's environment has: carrytool on PATH, its own git configuration."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITHUB_", "CI_", "CARRYTOOL_"))}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["GIT_CONFIG_GLOBAL"] = str(self.gitconfig)
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        env["CARRYTOOL_RETRY_DELAY"] = "0"
        env["CI"] = "true"
        return env

    def control(self, path: str) -> str | None:
        out = self.fork.git("show", f"refs/heads/{CONTROL}:{path}", check=False)
        return out + "\n" if out else None      # (Repo.git strips the final newline)

    def published(self) -> str | None:
        return self.fork.ref(f"refs/heads/{FORK_BRANCH}")

    def update_manifest(self, text: str) -> None:
        self.fork.commit({MANIFEST: text}, "manifest: change", parent=f"refs/heads/{CONTROL}",
                         ref=f"refs/heads/{CONTROL}")

    def open_pr(self, number: int, files: dict[str, str | None], *, base: str | None = None) -> str:
        """A pull request into the fork branch: its head, and the merge GitHub tests (refs/pull/N/merge)."""
        base = base or self.published()
        head = self.fork.commit(files, f"PR {number}", parent=base, ref=f"refs/pull/{number}/head")
        tree = self.fork.git("rev-parse", f"{head}^{{tree}}")
        merge = self.fork.git("commit-tree", tree, "-p", base, "-p", head, "-m", f"Merge {head} into {base}")
        self.fork.git("update-ref", f"refs/pull/{number}/merge", merge)
        return merge


def manifest_for(demo: Scenario, fork_url: str) -> str:
    """The demo manifest as a fork repository would hold it: upstream by URL, the fork by its SSH URL."""
    text = demo.manifest.read_text()
    text = text.replace("url: ../upstream.git", f"url: {demo.upstream}")
    text = text.replace("url: ../fork.git", f"url: {fork_url}")
    return text


def make_project(demo: Scenario, tmp_path: Path, fork_url: str) -> Project:
    fork = Repo(demo.fork)
    fork.commit({MANIFEST: manifest_for(demo, fork_url),
                 ".github/workflows/nightly-sync.yml": NIGHTLY.read_text(),
                 ".github/workflows/verify.yml": VERIFY.read_text(),
                 ".gitlab-ci.yml": GITLAB.read_text()},
                "carrytool manifest and CI", parent=None, ref=f"refs/heads/{CONTROL}")
    fork.git("symbolic-ref", "HEAD", f"refs/heads/{CONTROL}")
    gitconfig = tmp_path / "runner.gitconfig"
    # The manifest names the fork by SSH URL; on this "runner" that URL is the local fork.git. The rule is
    # longer than the examples' token rules, so git prefers it, as it prefers the longest match.
    subprocess.run(["git", "config", "--file", str(gitconfig), f"url.{demo.fork}.insteadOf", fork_url], check=True)
    return Project(demo, fork, gitconfig, tmp_path)


@pytest.fixture
def github(demo: Scenario, tmp_path: Path) -> Project:
    return make_project(demo, tmp_path, "git@github.com:intarweb/vllm.git")


@pytest.fixture
def gitlab(demo: Scenario, tmp_path: Path) -> Project:
    return make_project(demo, tmp_path, f"git@{GITLAB_HOST}:intarweb/vllm.git")


def copy_project(template: Project, root: Path) -> Project:
    """A private copy of TEMPLATE at ROOT, its runner's git configuration sending the fork's SSH URL to the
    copy's fork.git. The manifest the template committed names the template's upstream.git by its path:
    the copy's runs fetch from there (read only; the tests below never write to an upstream)."""
    shutil.copytree(template.root, root, symlinks=True)
    t, where = template.demo, root / template.demo.root.relative_to(template.root)
    demo = Scenario(where, where / "upstream.git", where / "fork.git", where / "work.git",
                    where / "carries" / "manifest.yaml", t.upstream_head, t.base, dict(t.prs), t.union)
    fork = Repo(demo.fork)
    fork.clock = template.fork.clock                         # the same SHAs for what the test commits next
    gitconfig = root / template.gitconfig.relative_to(template.root)
    gitconfig.write_text(gitconfig.read_text().replace(str(template.demo.fork), str(demo.fork)))
    return Project(demo, fork, gitconfig, root)


@pytest.fixture(scope="module")
def green_night(_demo_template: Scenario, tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, JobResult]:
    """A GitHub project after one green nightly job, built once for this file: the tests that only read
    that night share it; those that go on from it take a copy (`after_green_night`)."""
    root = tmp_path_factory.mktemp("green-night")
    with pytest.MonkeyPatch.context() as env:
        isolate_env(env)                                     # as in every test
        project = make_project(copy_demo(_demo_template, root / "demo"), root, "git@github.com:intarweb/vllm.git")
        result = nightly(project)
    assert result.status == "success", result.output
    return project, result


@pytest.fixture
def after_green_night(green_night: tuple[Project, JobResult], tmp_path: Path) -> Project:
    """A private copy of the project after its green night (what `nightly(github)` left)."""
    return copy_project(green_night[0], tmp_path / "project")


# --------------------------------------------------------------------------------------------------------
# A local runner: bash for scripts, emulated actions


@dataclass
class StepResult:
    name: str
    ran: bool
    outcome: str = "skipped"              # success | failure | skipped
    rc: int | None = None
    stdout: str = ""
    stderr: str = ""
    skipped_lines: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class JobResult:
    status: str
    steps: list[StepResult]
    workspace: Path
    artifacts: dict[str, list[Path]]
    summary: str = ""

    def step(self, name: str) -> StepResult:
        return next(s for s in self.steps if s.name == name)

    @property
    def output(self) -> str:
        return "".join(s.stdout + s.stderr for s in self.steps)


def neutralise(script: str, explain: bool) -> tuple[str, list[str]]:
    """Replace the lines the test does not run: installing carrytool, and explain while it is missing."""
    skipped, out = [], []
    for line in script.split("\n"):
        if re.match(r"^\s*(python -m )?pip install .*carrytool", line):
            skipped.append(line.strip())
            line = ": carrytool is installed in the test environment"
        elif "carrytool explain" in line and not explain:
            skipped.append(line.strip())
            line = ": " + shlex.quote(EXPLAIN_MISSING)
        out.append(line)
    return "\n".join(out), skipped


def bash(script: str, cwd: Path, env: dict[str, str], *, errexit: bool = True) -> subprocess.CompletedProcess:
    flags = ["-eo", "pipefail"] if errexit else []
    return subprocess.run(["bash", "--noprofile", "--norc", *flags, "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def github_condition(expr: Any, status: str, steps: dict[str, StepResult]) -> bool:
    """Evaluate a step's `if:` the way GitHub does for the expressions these examples use."""
    text = str(expr if expr is not None else "success()").strip()
    text = re.sub(r"^\$\{\{(.*)\}\}$", r"\1", text).strip()
    if not re.search(r"\b(always|success|failure|cancelled)\(\)", text):
        text = f"success() && ({text})"

    def step_value(match: re.Match) -> str:
        result = steps[match[1]]
        value = result.outcome if match[2] == "outcome" else ("success" if result.outcome != "failure" else "failure")
        return repr(value)

    text = re.sub(r"\bsteps\.([\w-]+)\.(outcome|conclusion)\b", step_value, text)
    text = re.sub(r"\bsteps\.([\w-]+)\.outputs\.([\w-]+)",
                  lambda m: repr(steps[m[1]].outputs.get(m[2], "")), text)
    text = (text.replace("always()", "True").replace("success()", repr(status == "success"))
            .replace("failure()", repr(status == "failure")).replace("cancelled()", "False")
            .replace("&&", " and ").replace("||", " or "))
    text = re.sub(r"!(?!=)", " not ", text)
    return bool(eval(text, {"__builtins__": {}}, {}))  # noqa: S307 - test-only, on the repository's own files


def expand_expressions(value: Any, context: dict[str, str]) -> str:
    def sub(match: re.Match) -> str:
        key = match[1].strip()
        assert key in context, f"the test does not know the expression ${{{{ {key} }}}}"
        return context[key]

    return re.sub(r"\$\{\{(.*?)\}\}", sub, str(value))


class GitHubRunner:
    def __init__(self, project: Project, workflow: Path, *, event: str, context: dict[str, str],
                 checkout_ref: str) -> None:
        self.project = project
        self.workflow = load(workflow)
        self.event = event
        self.context = {"secrets.FORK_PUSH_TOKEN": SECRET, "github.repository": "intarweb/vllm",
                        "github.event.repository.default_branch": CONTROL, **context}
        self.checkout_ref = checkout_ref
        self.explain = explain_available()

    def run(self, job_name: str) -> JobResult:
        assert self.event in self.workflow["on"], f"the workflow does not run on {self.event}"
        job = self.workflow["jobs"][job_name]
        ws = self.project.root / f"gh-{job_name}"
        shutil.rmtree(ws, ignore_errors=True)
        ws.mkdir()
        summary = self.project.root / f"gh-{job_name}-summary.md"
        summary.write_text("")
        base_env = self.project.env()
        base_env.update({"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(ws), "GITHUB_STEP_SUMMARY": str(summary),
                         "GITHUB_EVENT_NAME": self.event})
        for scope in (self.workflow.get("env") or {}, job.get("env") or {}):
            base_env.update({k: expand_expressions(v, self.context) for k, v in scope.items()})
        status, results, artifacts = "success", {}, {}
        ordered = []
        for i, step in enumerate(job["steps"]):
            name = step.get("name") or step.get("uses") or f"step {i}"
            result = StepResult(name, ran=False)
            ordered.append(result)
            if step.get("id"):
                results[step["id"]] = result
            if not github_condition(step.get("if"), status, results):
                continue
            result.ran = True
            env = dict(base_env)
            env.update({k: expand_expressions(v, self.context) for k, v in (step.get("env") or {}).items()})
            context = {**self.context, **{f"steps.{sid}.outputs.{k}": v for sid, r in results.items()
                                          for k, v in r.outputs.items()}}
            if "uses" in step and is_carrytool_action(step["uses"]):
                inputs = {k: expand_expressions(v, context) for k, v in (step.get("with") or {}).items()}
                run = run_action({**inputs, "carrytool-version": "installed"}, ws,
                                 self.project.root / f"gh-{job_name}-runner-{i}", env=env, summary=summary)
                result.rc, result.stdout, result.stderr, result.outputs = run.rc, run.stdout, run.stderr, run.outputs
                result.outcome = "success" if run.rc == 0 else "failure"
            elif "uses" in step:
                ok = self.use(step["uses"], {k: expand_expressions(v, context)
                                              for k, v in (step.get("with") or {}).items()}, ws, artifacts)
                result.outcome = "success" if ok else "failure"
            else:
                script, result.skipped_lines = neutralise(expand_expressions(step["run"], context), self.explain)
                proc = bash(script, ws, env)
                result.rc, result.stdout, result.stderr = proc.returncode, proc.stdout, proc.stderr
                result.outcome = "success" if proc.returncode == 0 else "failure"
            if result.outcome == "failure" and not step.get("continue-on-error"):
                status = "failure"
        return JobResult(status, ordered, ws, artifacts, summary.read_text())

    def use(self, action: str, args: dict[str, str], ws: Path, artifacts: dict[str, list[Path]]) -> bool:
        name = action.split("@")[0]
        if name == "actions/checkout":
            self.checkout(ws / args.get("path", ""), args.get("ref") or self.checkout_ref)
            return True
        if name == "actions/setup-python":
            return True
        if name == "actions/upload-artifact":
            files = [ws / p for p in args["path"].split() if (ws / p).exists()]
            assert files or args.get("if-no-files-found") in ("warn", "ignore"), f"no files for {args['name']}"
            artifacts[args["name"]] = files
            return True
        raise AssertionError(f"the test runner does not know the action {action}")

    def checkout(self, dest: Path, ref: str) -> None:
        """actions/checkout: a clone of the repository, the ref checked out (a branch, or detached)."""
        run = lambda *a: subprocess.run(a, check=True, capture_output=True, env=self.project.env())  # noqa: E731
        if dest.exists() and not any(dest.iterdir()):
            dest.rmdir()
        run("git", "clone", "-q", str(self.project.demo.fork), str(dest))
        if ref.startswith("refs/pull/"):
            run("git", "-C", str(dest), "fetch", "-q", "origin", f"+{ref}:{ref}")
            run("git", "-C", str(dest), "checkout", "-q", "--detach", ref)
        else:
            run("git", "-C", str(dest), "checkout", "-q", "-B", ref, f"origin/{ref}")


def gitlab_rule(expr: str, env: dict[str, str]) -> bool:
    text = re.sub(r"\$(\w+)", lambda m: repr(env.get(m[1])), expr)
    return bool(eval(text.replace("&&", " and ").replace("||", " or "), {"__builtins__": {}}, {}))  # noqa: S307


def expand_vars(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{?(\w+)\}?", lambda m: env.get(m[1], ""), str(value))


class GitLabRunner:
    def __init__(self, project: Project, *, source: str, commit: str, variables: dict[str, str]) -> None:
        self.project = project
        self.ci = load(GITLAB)
        self.variables = {"CI_PIPELINE_SOURCE": source, "CI_SERVER_HOST": GITLAB_HOST,
                          "CI_PROJECT_PATH": "intarweb/vllm", "CI_DEFAULT_BRANCH": CONTROL,
                          "CI_COMMIT_SHA": commit, "FORK_PUSH_TOKEN": SECRET, **variables}
        self.explain = explain_available()

    def jobs(self) -> list[str]:
        """The jobs this pipeline runs (their first matching rule)."""
        env = self.environment({})
        return [name for name, job in self.ci.items()
                if isinstance(job, dict) and "script" in job
                and any(gitlab_rule(rule["if"], env) for rule in job.get("rules", [{"if": "True"}]))]

    def environment(self, job: dict) -> dict[str, str]:
        env = self.project.env()
        env.update(self.variables)
        for scope in (self.ci.get("variables") or {}, job.get("variables") or {}):
            for key, value in scope.items():
                env[key] = expand_vars(value, env)
        return env

    def run(self, job_name: str) -> JobResult:
        job = self.ci[job_name]
        ws = self.project.root / f"gl-{job_name}"
        shutil.rmtree(ws, ignore_errors=True)
        env = self.environment(job)
        env["CI_PROJECT_DIR"] = str(ws)
        run = lambda *a: subprocess.run(a, check=True, capture_output=True, env=env)  # noqa: E731
        run("git", "clone", "-q", str(self.project.demo.fork), str(ws))
        run("git", "-C", str(ws), "checkout", "-q", "--detach", self.variables["CI_COMMIT_SHA"])
        before = job.get("before_script", (self.ci.get("default") or {}).get("before_script", []))
        main = StepResult("script", ran=True)
        script, main.skipped_lines = neutralise("\n".join([*before, *job["script"]]), self.explain)
        proc = bash(script, ws, env)
        main.rc, main.stdout, main.stderr = proc.returncode, proc.stdout, proc.stderr
        main.outcome = "success" if proc.returncode == 0 else "failure"
        after = StepResult("after_script", ran=bool(job.get("after_script")))
        if after.ran:
            env["CI_JOB_STATUS"] = "success" if main.outcome == "success" else "failed"
            script, after.skipped_lines = neutralise("\n".join(job["after_script"]), self.explain)
            proc = bash(script, ws, env)
            after.rc, after.stdout, after.stderr = proc.returncode, proc.stdout, proc.stderr
            after.outcome = "success" if proc.returncode == 0 else "failure"
        artifacts = job.get("artifacts") or {}
        assert artifacts.get("when") == "always", f"{job_name}: keep the reports of failed runs too"
        kept = {"artifacts": [ws / p for p in artifacts.get("paths", []) if (ws / p).exists()]}
        return JobResult(main.outcome, [main, after], ws, kept)


# --------------------------------------------------------------------------------------------------------
# Every carrytool command line in the examples parses


@pytest.mark.parametrize("where,argv", all_commands(), ids=[c[0] for c in all_commands()])
def test_every_carrytool_command_in_the_examples_parses(where: str, argv: list[str]) -> None:
    parse_command(argv)


def test_the_command_parser_catches_rot() -> None:
    """The check above can fail: a renamed option, a wrong format or an unknown command is caught."""
    for argv in (["carrytool", "sync", "--pushh"], ["carrytool", "verify", "--format", "gitlab"],
                 ["carrytool", "unknown"], ["carrytool", "union", "compose"]):
        with pytest.raises(AssertionError):
            parse_command(argv)
    parse_command(["carrytool", "union", "compose", "wake-path-union", "--offline"])


def test_the_examples_run_the_commands_the_issue_asks_for() -> None:
    nightly = " ".join(" ".join(a) for a in [*(a for s in scripts(NIGHTLY) for a in carrytool_commands(s)),
                                             *action_commands(NIGHTLY)])
    assert "carrytool sync --repo . --report sync-report.json --push --wait 600" in nightly
    assert "carrytool verify" in nightly and "--format github" in nightly
    assert "carrytool explain" in nightly and "--format markdown" in nightly
    assert "carrytool diff" in nightly and "carrytool bisect --rev" in nightly      # the morning, on red
    verify = [" ".join(a) for a in action_commands(VERIFY)]
    assert verify[0] == "carrytool check" and any("--format github" in c for c in verify)
    assert any("--rebuild" in c for c in verify)
    gitlab = load(GITLAB)
    assert {"nightly-sync", "verify-mr"} <= set(gitlab)
    workflow = load(NIGHTLY)
    assert "schedule" in workflow["on"] and "workflow_dispatch" in workflow["on"]
    steps = workflow["jobs"]["sync"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and steps[0]["with"]["fetch-depth"] == 0
    # pushes go with the token set up for them, not with a persisted GITHUB_TOKEN (those trigger nothing)
    assert steps[0]["with"]["persist-credentials"] is False
    for path in (NIGHTLY, VERIFY):       # every carrytool call goes through the action: nothing to pip install
        assert not any("pip install" in script for script in scripts(path)), path
        assert all(is_carrytool_action(s["uses"]) for s in load(path)["jobs"][next(iter(load(path)["jobs"]))]["steps"]
                   if "uses" in s and not s["uses"].startswith("actions/")), path
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "sync-report.json"
    assert load(VERIFY)["on"]["pull_request"]["branches"] == [FORK_BRANCH]


# --------------------------------------------------------------------------------------------------------
# GitHub Actions: the nightly job


def nightly(project: Project) -> JobResult:
    runner = GitHubRunner(project, NIGHTLY, event="schedule", checkout_ref=CONTROL,
                          context={"github.ref_name": CONTROL})
    return runner.run("sync")


def test_nightly_pushes_reports_and_commits_the_lock(green_night: tuple[Project, JobResult], report_schema: dict,
                                                     tmp_path: Path) -> None:
    github, result = green_night                  # (read only: the next night runs in a copy)
    assert result.status == "success", result.output
    sync = result.step("Sync (compose, check, push with a lease)")
    assert sync.rc == 0 and "asserts: 10/10 hold" in sync.stdout
    report = json.loads((result.workspace / "sync-report.json").read_text())
    jsonschema.validate(report, report_schema)
    assert report["ok"] is True and report["result"]["pushed"] is True
    assert github.published() == report["result"]["sha"]
    assert result.artifacts["carrytool-sync-report"] == [result.workspace / "sync-report.json"]
    assert not result.step("Annotate what failed").ran
    # the lock of what was pushed is committed next to the manifest, on the manifest's branch
    lock = json.loads(github.control(MANIFEST + ".lock") or "{}")
    assert lock["result"] == report["result"]["sha"]
    # the action's outputs: what later steps branch on
    assert sync.outputs == {"exit-code": "0", "ok": "true", "report": "sync-report.json",
                            "result-sha": report["result"]["sha"]}
    assert "### carrytool sync: ✅ exit 0 (ok)" in result.summary
    assert SECRET not in result.output and SECRET not in json.dumps(report)
    # the next night: same inputs, same SHA, nothing to push or commit
    github = copy_project(github, tmp_path / "next-night")
    control_before = github.fork.ref(f"refs/heads/{CONTROL}")
    again = nightly(github)
    assert again.status == "success" and "lock unchanged" in again.step("Commit the lock").stdout
    assert github.fork.ref(f"refs/heads/{CONTROL}") == control_before
    assert json.loads((again.workspace / "sync-report.json").read_text())["result"]["pushed"] is False


def test_nightly_failure_annotates_and_moves_nothing(github: Project) -> None:
    manifest = github.control(MANIFEST) or ""
    github.update_manifest(manifest + "  - name: resume-twice\n    file: vllm/v1/worker/gpu_worker.py\n"
                           "    in: Worker.wake_up\n    calls: backend.resume\n    times: 2\n")
    result = nightly(github)
    assert result.status == "failure"
    assert result.step("Sync (compose, check, push with a lease)").rc == 1
    report = json.loads((result.workspace / "sync-report.json").read_text())
    assert report["ok"] is False and report["result"]["updated"] is False
    assert github.published() is None and github.control(MANIFEST + ".lock") is None
    assert result.artifacts["carrytool-sync-report"]
    annotate = result.step("Annotate what failed")
    assert annotate.ran and annotate.rc == 1
    errors = [line for line in annotate.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and errors[0].startswith("::error file=vllm/v1/worker/gpu_worker.py,line=")
    assert "carrytool%3A resume-twice" in errors[0] and "(want exactly 2)" in errors[0]
    assert "### carrytool verify: 10/11 asserts hold" in result.summary
    assert "| resume-twice | `vllm/v1/worker/gpu_worker.py:" in result.summary
    assert not result.step("Commit the lock").ran


def test_nightly_conflict_is_exit_3_and_annotates_the_partial_result(github: Project) -> None:
    manifest = github.control(MANIFEST) or ""
    github.update_manifest(manifest.replace('    title: "wake-path union"\n',
                                            '    title: "wake-path union"\n    enabled: false\n'))
    result = nightly(github)
    assert result.status == "failure" and result.step("Sync (compose, check, push with a lease)").rc == 3
    assert "conflict: pr/45612 in vllm/v1/worker/gpu_worker.py" in result.output
    report = json.loads((result.workspace / "sync-report.json").read_text())
    assert [e["id"] for e in report["entries"] if e["status"] == "conflict"] == ["pr/45612", "pr/45617"]
    assert "carrytool%3A fp8-scale-restore" in result.step("Annotate what failed").stdout
    # an assert failed too: exit 3 wins over exit 1, and the bisect step runs all the same (h258: on
    # pola-rs/polars sync said `next: carrytool bisect --rev ...`, which the nightly job skipped)
    bisect = result.step("Which entry broke it")
    assert bisect.ran and bisect.rc == 0 and "First bad entry: " in result.summary, result.summary
    assert github.published() is None


def test_red_night_after_a_green_one_puts_the_diff_in_the_summary(after_green_night: Project) -> None:
    github = after_green_night            # what `nightly(github)` left, green
    manifest = github.control(MANIFEST) or ""
    github.update_manifest(manifest.replace('    title: "wake-path union"\n',
                                            '    title: "wake-path union"\n    enabled: false\n'))
    result = nightly(github)
    assert result.status == "failure"
    diff = result.step("What changed since the last good night")
    assert diff.ran and diff.rc == 0, diff.stderr
    assert f"## carrytool diff: `HEAD:{MANIFEST}.lock` → `sync-report.json`" in result.summary
    # the union, disabled tonight, had superseded these PRs: now they are applied, or conflict
    # (a lock records what it applied, not why the rest was not: the night's report says, helper-123)
    assert "| `pr/45398` | status | not applied → applied (the lock has no reason) |" in result.summary
    assert "| `pr/45612` | status | not applied → conflict (the lock has no reason) |" in result.summary
    assert "| `carry/wake-path-union` | status | applied → skipped (disabled) |" in result.summary


def test_nightly_summary_is_explain_markdown(green_night: tuple[Project, JobResult]) -> None:
    assert explain_available(), EXPLAIN_MISSING     # a missing command fails, never skips
    result = green_night[1]
    summary = result.step("Job summary (plan and overlaps)")
    assert summary.rc == 0 and not summary.skipped_lines
    assert "|" in result.summary and "pr/45612" in result.summary and "Worker.wake_up" in result.summary
    assert "```mermaid" in result.summary


def test_nightly_explain_step_is_only_skipped_while_explain_is_missing(green_night: tuple[Project, JobResult]) -> None:
    """The one line the runner may leave out is explain's, and only while explain does not exist."""
    result = green_night[1]
    skipped = [line for step in result.steps for line in step.skipped_lines if "pip install" not in line]
    assert explain_available(), EXPLAIN_MISSING
    assert skipped == []


def test_a_token_in_the_fork_url_is_never_printed(github: Project, tmp_path: Path) -> None:
    """The nightly's token rule, pointed at a server that refuses: exit 4, and the token is nowhere."""
    env = {**github.env(), "CARRYTOOL_MANIFEST": MANIFEST, "GIT_CONFIG_GLOBAL": str(tmp_path / "token.gitconfig")}
    subprocess.run(["git", "config", "--global", f"url.https://x-access-token:{SECRET}@127.0.0.1:9/.insteadOf",
                    "git@github.com:"], check=True, env=env)
    ws = tmp_path / "ws"
    subprocess.run(["git", "clone", "-q", str(github.demo.fork), str(ws)], check=True, env=github.env())
    proc = subprocess.run(["carrytool", "sync", "--repo", ".", "--push"], cwd=ws, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 4 and "cannot fetch from git@github.com:intarweb/vllm.git" in proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
    # written into the manifest itself, the token is redacted too
    manifest = ws / MANIFEST
    manifest.write_text(manifest.read_text().replace(
        "git@github.com:intarweb/vllm.git", f"https://x-access-token:{SECRET}@127.0.0.1:9/intarweb/vllm.git"))
    proc = subprocess.run(["carrytool", "sync", "--repo", ".", "--push"], cwd=ws, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 4 and "https://***@127.0.0.1:9/intarweb/vllm.git" in proc.stderr
    assert SECRET not in proc.stdout + proc.stderr


# --------------------------------------------------------------------------------------------------------
# GitHub Actions: the pull-request job


def verify_pr(project: Project, number: int) -> JobResult:
    runner = GitHubRunner(project, VERIFY, event="pull_request", checkout_ref=f"refs/pull/{number}/merge",
                          context={"github.base_ref": FORK_BRANCH})
    return runner.run("verify")


STEP_CHECK, STEP_ASSERTS, STEP_REBUILD = ("Check the manifest", "Hot-path asserts on the pull request",
                                          "The base is exactly manifest + lock")


def test_pr_job_passes_on_a_harmless_pr(after_green_night: Project) -> None:
    github = after_green_night            # what `nightly(github)` left, green
    github.open_pr(1, {"docs/fork-notes.md": "Notes.\n"})
    result = verify_pr(github, 1)
    assert result.status == "success", result.output
    assert "ok (12 entries: 11 PRs, 1 carry; 10 asserts)" in result.step(STEP_CHECK).stdout
    assert "carrytool verify: 10/10 asserts hold" in result.step(STEP_ASSERTS).stdout
    assert "### carrytool verify: 10/10 asserts hold" in result.summary
    assert result.step(STEP_REBUILD).rc == 0


def test_pr_job_annotates_a_pr_that_breaks_a_hot_path(after_green_night: Project) -> None:
    github = after_green_night            # what `nightly(github)` left, green
    worker = "vllm/v1/worker/gpu_worker.py"
    text = github.fork.show(f"refs/heads/{FORK_BRANCH}", worker)
    broken = text.replace("try:\n                backend.resume(tags)", "try:\n                pass")
    assert broken != text
    github.open_pr(2, {worker: broken})
    result = verify_pr(github, 2)
    assert result.status == "failure" and result.step(STEP_ASSERTS).rc == 1
    errors = [line for line in result.step(STEP_ASSERTS).stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1 and errors[0].startswith(f"::error file={worker},line=")
    assert "carrytool%3A resume-once" in errors[0] and "backend.resume is never called" in errors[0]
    assert "| resume-once | `vllm/v1/worker/gpu_worker.py" in result.summary
    assert not result.step(STEP_REBUILD).ran


def test_pr_job_rebuild_catches_a_hand_pushed_fork_branch(after_green_night: Project) -> None:
    github = after_green_night            # what `nightly(github)` left, green
    tip = github.published()
    hand = github.fork.commit({"HOTFIX.md": "pushed by hand\n"}, "hotfix", parent=tip,
                              ref=f"refs/heads/{FORK_BRANCH}")
    github.open_pr(3, {"docs/fork-notes.md": "Notes.\n"}, base=hand)
    result = verify_pr(github, 3)
    assert result.step(STEP_ASSERTS).rc == 0
    rebuild = result.step(STEP_REBUILD)
    assert rebuild.rc == 1 and "not what the manifest says" in rebuild.stderr
    assert f"is {hand[:12]}, but manifest + lock compose {tip[:12]}" in rebuild.stderr


def test_pr_job_without_a_committed_lock_says_what_to_do(github: Project) -> None:
    # the branch published by hand with carrytool, but its lock never committed
    ws = github.root / "by-hand"
    subprocess.run(["git", "clone", "-q", str(github.demo.fork), str(ws)], check=True, env=github.env())
    subprocess.run(["carrytool", "sync", "-q", "-m", MANIFEST, "--push"], cwd=ws, env=github.env(), check=True)
    assert github.published() and github.control(MANIFEST + ".lock") is None
    github.open_pr(4, {"docs/fork-notes.md": "Notes.\n"})
    result = verify_pr(github, 4)
    assert result.step(STEP_ASSERTS).rc == 0
    rebuild = result.step(STEP_REBUILD)
    assert rebuild.rc == 2 and "no lock at" in rebuild.stderr and "carrytool sync" in rebuild.stderr


# --------------------------------------------------------------------------------------------------------
# GitLab CI


def gitlab_nightly(project: Project) -> GitLabRunner:
    head = project.fork.ref(f"refs/heads/{CONTROL}")
    return GitLabRunner(project, source="schedule", commit=head or "", variables={"CI_COMMIT_BRANCH": CONTROL})


def test_gitlab_pipelines_pick_their_jobs(gitlab: Project) -> None:
    assert gitlab_nightly(gitlab).jobs() == ["nightly-sync"]
    mr = GitLabRunner(gitlab, source="merge_request_event", commit="0" * 40,
                      variables={"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": FORK_BRANCH})
    assert mr.jobs() == ["verify-mr"]
    other = GitLabRunner(gitlab, source="merge_request_event", commit="0" * 40,
                         variables={"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": CONTROL})
    assert other.jobs() == []


def test_gitlab_nightly_then_merge_requests(gitlab: Project, report_schema: dict) -> None:
    result = gitlab_nightly(gitlab).run("nightly-sync")
    assert result.status == "success", result.output
    report = json.loads((result.workspace / "sync-report.json").read_text())
    jsonschema.validate(report, report_schema)
    assert report["ok"] and gitlab.published() == report["result"]["sha"]
    assert json.loads(gitlab.control(MANIFEST + ".lock") or "{}")["result"] == report["result"]["sha"]
    assert result.workspace / "sync-report.json" in result.artifacts["artifacts"]
    assert SECRET not in result.output
    # a merge request into the fork branch that keeps the hot paths
    good = gitlab.open_pr(5, {"docs/fork-notes.md": "Notes.\n"})
    mr = GitLabRunner(gitlab, source="merge_request_event", commit=good,
                      variables={"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": FORK_BRANCH})
    ok = mr.run("verify-mr")
    assert ok.status == "success", ok.output
    assert "ok: 10 asserts hold" in ok.output
    assert json.loads((ok.workspace / "verify-report.json").read_text())["ok"] is True
    # one that drops the consensus hoist: the MR job fails and names the assert
    runner = "vllm/v1/worker/gpu_worker.py"
    text = gitlab.fork.show(f"refs/heads/{FORK_BRANCH}", runner)
    bad = gitlab.open_pr(6, {runner: text.replace("irecv_tensor_dict", "recv_tensor_dict")})
    mr = GitLabRunner(gitlab, source="merge_request_event", commit=bad,
                      variables={"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": FORK_BRANCH})
    failed = mr.run("verify-mr")
    assert failed.status == "failure" and "pp-consensus-before-irecv" in failed.output
    assert json.loads((failed.workspace / "verify-report.json").read_text())["ok"] is False


def test_gitlab_nightly_failure_shows_what_broke(gitlab: Project) -> None:
    manifest = gitlab.control(MANIFEST) or ""
    gitlab.update_manifest(manifest + "  - name: resume-twice\n    file: vllm/v1/worker/gpu_worker.py\n"
                           "    in: Worker.wake_up\n    calls: backend.resume\n    times: 2\n")
    result = gitlab_nightly(gitlab).run("nightly-sync")
    assert result.status == "failure" and result.steps[0].rc == 1
    after = result.step("after_script")
    assert after.rc == 0 and "resume-twice" in after.stdout and "(want exactly 2)" in after.stdout
    assert gitlab.published() is None
    assert result.workspace / "sync-report.json" in result.artifacts["artifacts"]


# --------------------------------------------------------------------------------------------------------
# pre-commit and editors


def test_pre_commit_hook_rejects_a_broken_manifest(tmp_path: Path) -> None:
    """What `pre-commit run` does with the hook of .pre-commit-hooks.yaml, on a copy of carries/."""
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    config = yaml.safe_load(PRE_COMMIT.read_text())
    used = [h["id"] for repo in config["repos"] for h in repo["hooks"]]
    assert used == ["carrytool-check"] and set(used) <= set(hooks)
    hook = hooks["carrytool-check"]
    shutil.copytree(ROOT / "carries", tmp_path / "carries")
    broken = tmp_path / "carries" / "broken.yaml"
    broken.write_text((ROOT / MANIFEST).read_text().replace("    times: 1\n", "    times: 1\n    min: 1\n", 1))
    (tmp_path / "carries" / "vllm-intarweb.yaml.lock").write_text("{}\n")
    files = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "carries").rglob("*")
                   if re.search(hook["files"], str(p.relative_to(tmp_path)))
                   and not re.search(hook["exclude"], str(p.relative_to(tmp_path))))
    assert files == ["carries/broken.yaml", "carries/vllm-intarweb.yaml"]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run([*shlex.split(hook["entry"]), *files], cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 2
    line = next(i for i, text in enumerate(broken.read_text().splitlines(), 1) if text == "    min: 1")
    assert f"carries/broken.yaml:{line - 1}: asserts[0].times" in proc.stderr, proc.stderr
    assert "use either 'times' or 'min'/'max'" in proc.stderr
    assert "carries/vllm-intarweb.yaml: ok (13 entries" in proc.stdout


def test_every_manifest_under_carries_names_the_schema_on_its_first_line() -> None:
    manifests = sorted((ROOT / "carries").glob("*.y*ml"))
    assert manifests, "no manifests under carries/"
    for path in manifests:
        first = path.read_text().splitlines()[0]
        match = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
        assert match, f"{path.name}: the first line must be the yaml-language-server schema line"
        assert (path.parent / match[1]).resolve() == (ROOT / "carrytool/schemas/manifest.schema.json"), path


def test_cli_fixture_still_checks_example_manifests(cli: Cli) -> None:
    result = cli("check", *sorted((ROOT / "carries").glob("*.yaml")))
    assert result.exit_code == 0, result.stderr
