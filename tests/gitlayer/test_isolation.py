"""Nothing of the user's git configuration or attributes changes a result, and none of their drivers runs.

Each test composes the same manifest into a clean repository and into one where hostile settings sit in
the repository config, the global config, the system config, `info/attributes` or `core.attributesFile`,
and asserts the same exit code, statuses and result SHA, with no marker file left by a driver or filter.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import SECOND_GIT, Cli, Small
from tests.gitrepo import Repo, init_repo

NEW_GIT = Path(SECOND_GIT)
GITS = [pytest.param(None, id="git-default")]
if SECOND_GIT:
    GITS.append(pytest.param(str(NEW_GIT), id="git-new"))

A_BASE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def hostile_config(marker: Path, attributes: Path) -> str:
    """A config that, if git read it while composing, would change results or run code."""
    run = f"touch {marker};"
    return (
        "[core]\n\tbigFileThreshold = 1\n\tautocrlf = true\n\tattributesFile = " + str(attributes) + "\n"
        "\teol = crlf\n\tsafecrlf = true\n\twhitespace = cr-at-eol\n"
        "[merge]\n\trenames = false\n\tconflictStyle = diff3\n\trenormalize = true\n"
        "[diff]\n\talgorithm = patience\n\trenames = false\n\tinterHunkContext = 50\n"
        "\texternal = " + run.rstrip(";") + "\n"
        "[merge \"evil\"]\n\tname = evil\n\tdriver = " + run + " cat %B > %A\n"
        "[merge \"union\"]\n\tdriver = " + run + " cat %B > %A\n"
        "[filter \"evil\"]\n\tclean = " + run + " cat\n\tsmudge = " + run + " cat\n\trequired = true\n"
        "[diff \"evil\"]\n\ttextconv = " + run + " cat\n\tbinary = true\n"
        "[attr]\n\ttree = HEAD\n"
    )


EVIL_ATTRIBUTES = "* merge=evil filter=evil diff=evil\n"


def setup_scenario(small: Small) -> None:
    """Two PRs editing far-apart lines of one file (clean), true conflicts (skipped), a CRLF file."""
    small.pr(1, {"a.py": A_BASE.replace("return 1", "return 10")})
    small.pr(2, {"a.py": A_BASE.replace("return 2", "return 20")})
    small.pr(3, {"a.py": A_BASE.replace("return 1", "return 30")})     # conflicts with pr/1
    small.pr(4, {"b.py": "x = 1\r\ny = 4\r\nz = 3\r\n", "docs/c.txt": "c\nd\n"})
    small.pr(5, {"new.py": "one = 1\n"})
    small.pr(6, {"new.py": "two = 2\n"})                                 # add/add: a chained merge-tree
    small.manifest([{"pr": n} for n in range(1, 7)], policy={"on_conflict": "skip"})


def outcome(cli: Cli, small: Small, repo: Path, env: dict | None = None) -> tuple:
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", repo, env=env)
    assert "entries" in report, report
    statuses = [(e["id"], e["status"], e.get("commit")) for e in report["entries"]]
    return code, report["result"]["sha"] if report.get("result") else None, statuses


def git_env(git_bin: str | None) -> dict[str, str]:
    return {"PATH": f"{git_bin}:{os.environ['PATH']}"} if git_bin else {}


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "MARKER-driver-ran"


def fresh(tmp_path: Path, name: str, *, bare: bool = True) -> Repo:
    return init_repo(tmp_path / name, bare=bare)


def git_dir(repo: Repo) -> Path:
    return Path(repo.git("rev-parse", "--absolute-git-dir"))


@pytest.mark.parametrize("git_bin", GITS)
@pytest.mark.parametrize("where", ["repo", "global", "system", "info-no-diff", "info-union", "info-evil",
                                   "threshold-repo", "threshold-global"])
def test_hostile_config_and_attributes_change_nothing(cli: Cli, small: Small, tmp_path: Path, marker: Path,
                                                     where: str, git_bin: str | None) -> None:
    setup_scenario(small)
    env = git_env(git_bin)
    clean = outcome(cli, small, fresh(tmp_path, "clean").path, env)
    assert clean[0] == 0 and clean[1]
    assert [s[1] for s in clean[2]] == ["applied", "applied", "conflict", "applied", "applied",
                                        "conflict"]

    attributes = tmp_path / "evil.attributes"
    attributes.write_text(EVIL_ATTRIBUTES)
    config = tmp_path / "evil.gitconfig"
    config.write_text(hostile_config(marker, attributes))
    repo = fresh(tmp_path, "hostile")
    info = git_dir(repo) / "info"
    info.mkdir(exist_ok=True)
    hostile_env = dict(env)
    if where == "repo":
        (git_dir(repo) / "config").write_text((git_dir(repo) / "config").read_text() + config.read_text())
    elif where == "global":
        hostile_env["GIT_CONFIG_GLOBAL"] = str(config)
    elif where == "system":
        hostile_env.update({"GIT_CONFIG_SYSTEM": str(config), "GIT_CONFIG_NOSYSTEM": None})
    elif where == "info-no-diff":
        (info / "attributes").write_text("*.py -diff\n* -diff\n")
    elif where == "info-union":
        (info / "attributes").write_text("* merge=union\n")
    elif where == "info-evil":
        (info / "attributes").write_text(EVIL_ATTRIBUTES)
        repo.git("config", "merge.evil.driver", f"touch {marker}; cat %B > %A")
        repo.git("config", "filter.evil.clean", f"touch {marker}; cat")
        repo.git("config", "filter.evil.smudge", f"touch {marker}; cat")
    elif where == "threshold-repo":
        repo.git("config", "core.bigFileThreshold", "1")
    elif where == "threshold-global":
        config.write_text("[core]\n\tbigFileThreshold = 1\n")
        hostile_env["GIT_CONFIG_GLOBAL"] = str(config)
    assert outcome(cli, small, repo.path, hostile_env) == clean
    assert not marker.exists(), "a driver, filter or textconv of the user ran"


def test_both_gits_give_the_same_sha(cli: Cli, small: Small, tmp_path: Path) -> None:
    if len(GITS) < 2:
        pytest.skip("only one git on this machine")
    setup_scenario(small)
    old = outcome(cli, small, fresh(tmp_path, "old").path)
    new = outcome(cli, small, fresh(tmp_path, "new").path, git_env(str(NEW_GIT)))
    assert old == new and old[0] == 0


@pytest.mark.parametrize("git_bin", GITS)
def test_bare_non_bare_alternates_and_worktree_repos_agree_under_hostile_config(
        cli: Cli, small: Small, tmp_path: Path, marker: Path, git_bin: str | None) -> None:
    setup_scenario(small)
    env = git_env(git_bin)
    clean = outcome(cli, small, fresh(tmp_path, "clean").path, env)
    attributes = tmp_path / "evil.attributes"
    attributes.write_text(EVIL_ATTRIBUTES)
    evil = hostile_config(marker, attributes)

    def poison(repo: Repo) -> None:
        path = git_dir(repo)
        common = Path(repo.git("rev-parse", "--git-common-dir"))
        common = common if common.is_absolute() else (repo.path / common).resolve()
        (common / "config").write_text((common / "config").read_text() + evil)
        for folder in {path, common}:
            (folder / "info").mkdir(exist_ok=True)
            (folder / "info" / "attributes").write_text(EVIL_ATTRIBUTES + "*.py -diff\n")

    non_bare = fresh(tmp_path, "non-bare", bare=False)
    non_bare.commit({"README": "mine\n"}, "mine", ref="refs/heads/main")
    (non_bare.path / ".gitattributes").write_text(EVIL_ATTRIBUTES)
    # a repository borrowing its objects from another through objects/info/alternates
    lender = fresh(tmp_path, "lender")
    lender.git("fetch", "-q", str(small.up.path), "+refs/*:refs/*")
    borrower = fresh(tmp_path, "borrower")
    (git_dir(borrower) / "objects" / "info" / "alternates").write_text(str(git_dir(lender) / "objects") + "\n")
    # a linked work tree: its git dir differs from the common dir
    main = fresh(tmp_path, "main", bare=False)
    main.commit({"README": "mine\n"}, "mine", ref="refs/heads/main")
    main.git("worktree", "add", "-q", str(tmp_path / "linked"), "-b", "side")
    linked = Repo(tmp_path / "linked")
    for repo in (non_bare, borrower, linked):
        poison(repo)
        assert outcome(cli, small, repo.path, env) == clean, repo.path
        assert not marker.exists()
    # composed objects went into the borrower's own store, readable by plain git
    assert borrower.git("cat-file", "-t", clean[1]) == "commit"
    shutil.rmtree(git_dir(lender) / "objects", ignore_errors=False)
    assert borrower.git("cat-file", "-t", clean[1]) == "commit"
    # the linked work tree's branch is visible from the main repository (one ref store, one object store)
    assert main.rev("refs/heads/dev") == clean[1]


def test_fetch_still_honours_the_users_url_rewrites(cli: Cli, small: Small, tmp_path: Path) -> None:
    """Transport settings of the user's global config (insteadOf) still apply to fetch."""
    setup_scenario(small)
    config = tmp_path / "global.gitconfig"
    config.write_text(f'[url "{small.up.path}"]\n\tinsteadOf = https://example.invalid/up\n')
    text = small.manifest_path.read_text().replace("url: ../up", "url: https://example.invalid/up")
    small.manifest_path.write_text(text)
    code, sha, _ = outcome(cli, small, fresh(tmp_path, "w").path, {"GIT_CONFIG_GLOBAL": str(config)})
    assert code == 0 and sha


def test_union_scratch_checkout_and_explain_run_no_filter_and_agree(cli: Cli, demo, tmp_path: Path,
                                                                    marker: Path) -> None:
    """The union's scratch tree is checked out, and explain merges pairs: no smudge filter, driver or
    textconv of the user runs, and explain's plan is the one a clean configuration gives."""
    clean_code, clean = cli.json("explain", "-m", demo.manifest, "--repo", demo.work)
    attributes = tmp_path / "evil.attributes"
    attributes.write_text(EVIL_ATTRIBUTES)
    config = tmp_path / "evil.gitconfig"
    config.write_text(hostile_config(marker, attributes))
    (demo.work / "info").mkdir(exist_ok=True)
    (demo.work / "info" / "attributes").write_text(EVIL_ATTRIBUTES + "*.py -diff\n")
    env = {"GIT_CONFIG_GLOBAL": str(config)}
    code, hostile = cli.json("explain", "-m", demo.manifest, "--repo", demo.work, env=env)
    assert (code, hostile["entries"], hostile["overlaps"]) == (clean_code, clean["entries"], clean["overlaps"])
    result = cli("union", "compose", "wake-path-union", "-m", demo.manifest, "--repo", demo.work, env=env)
    assert result.exit_code == 3, result.stdout + result.stderr     # stops on the genuine overlap
    assert (demo.work / "carrytool" / "union" / "wake-path-union" / "tree").is_dir()
    assert not marker.exists(), "a filter, driver or textconv of the user ran"


def test_a_sha256_repository_is_refused_before_anything_is_written(cli, small, tmp_path) -> None:  # noqa: ANN001
    import subprocess

    repo = tmp_path / "s256.git"
    subprocess.run(["git", "init", "-q", "--bare", "--object-format=sha256", str(repo)], check=True)
    small.manifest([{"pr": 1}])
    small.pr(1, {"b.py": "x = 5\n"})
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    code, report = cli.json("sync", "-m", small.manifest_path, "--repo", repo)
    assert code == 4 and "sha256 repository" in report["error"]["message"], report
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before
