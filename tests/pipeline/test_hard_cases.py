"""Hard git cases compose correctly and every hunk is accounted for (no false drops)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli, Small
from tests.gitrepo import init_repo
from tests.pipeline.test_sync import by_id, sync


def ok(cli: Cli, small: Small, entries: list) -> dict:
    small.manifest(entries)
    code, report = sync(cli, small)
    assert code == 0, json.dumps(report, indent=1)
    for entry in report["entries"]:
        landing = entry.get("landing")
        if landing:
            assert landing["dropped"] == [] and landing["clobbered"] == [], entry
            assert landing["landed"] + sum(p["hunks"] for p in landing.get("provided", [])) == landing["hunks"]
    return report


def test_rename_with_edit_next_to_an_edit_of_the_original(cli: Cli, small: Small) -> None:
    big = "".join(f"row {i}\n" for i in range(60))
    small.base = small.up.commit({"lib/old.py": big}, "big", parent="main", ref="refs/heads/main")
    small.pr(1, {"lib/old.py": None, "lib/new.py": big.replace("row 1\n", "row one\n")})
    small.pr(2, {"lib/old.py": big.replace("row 50\n", "row fifty\n")})
    report = ok(cli, small, [{"pr": 1}, {"pr": 2}])
    content = small.work.git("show", f"{report['result']['sha']}:lib/new.py")
    assert "row one" in content and "row fifty" in content


def test_deletion_mode_change_and_symlink(cli: Cli, small: Small) -> None:
    small.up.commit({"run.sh": "#!/bin/sh\necho hi\n"}, "script", parent="main", ref="refs/heads/main")
    small.base = small.up.rev("main")
    small.pr(1, {"docs/c.txt": None})
    small.pr(2, {"run.sh": "#!/bin/sh\necho hi\n"}, message="chmod +x")
    small.up.commit({"run.sh": "#!/bin/sh\necho hi\n"}, "chmod +x", parent=small.base, ref="refs/pull/2/head",
                    modes={"run.sh": "100755"})
    small.up.commit({"link": "b.py"}, "symlink", parent=small.base, ref="refs/pull/3/head", modes={"link": "120000"})
    report = ok(cli, small, [{"pr": 1}, {"pr": 2}, {"pr": 3}])
    tip = report["result"]["sha"]
    tree = small.work.git("ls-tree", "-r", tip)
    assert "docs/c.txt" not in tree
    assert "100755 blob" in [line for line in tree.splitlines() if line.endswith("run.sh")][0]
    assert "120000 blob" in [line for line in tree.splitlines() if line.endswith("link")][0]


def test_binary_files_compose_and_count(cli: Cli, small: Small) -> None:
    small.pr(1, {"img.bin": bytes(range(256)) * 4})
    small.pr(2, {"other.bin": b"\x00\xff" * 100})
    report = ok(cli, small, [{"pr": 1}, {"pr": 2}])
    assert by_id(report)["pr/1"]["landing"]["hunks"] == 1


def test_crlf_and_non_utf8_names_and_contents(cli: Cli, small: Small) -> None:
    small.base = small.up.commit({"win.txt": "a\r\nb\r\nc\r\n"}, "crlf", parent="main", ref="refs/heads/main")
    small.pr(1, {"win.txt": "a\r\nB\r\nc\r\n"})
    latin = "caf\udce9.txt"          # the byte 0xE9 in a file name: not UTF-8
    small.pr(2, {latin: b"r\xe9sum\xe9\n", "b.py": "x = 1\ny = 2\nz = '\xe9'\n".encode("latin-1")})
    report = ok(cli, small, [{"pr": 1}, {"pr": 2}])
    tip = report["result"]["sha"]
    assert small.work.git("cat-file", "-p", f"{tip}:win.txt") == "a\r\nB\r\nc"
    assert latin in by_id(report)["pr/2"]["files"]


def test_empty_pr_and_ten_thousand_line_diff(cli: Cli, small: Small) -> None:
    small.pr(1, {"docs/c.txt": "c\n"})
    small.pr(2, {"huge.txt": "".join(f"generated line {i}\n" for i in range(10_000))})
    report = ok(cli, small, [{"pr": 1}, {"pr": 2}])
    assert by_id(report)["pr/1"]["reason"] == "redundant"
    assert by_id(report)["pr/2"]["landing"]["landed"] == 1


def test_submodule_pointer(cli: Cli, small: Small) -> None:
    sub = small.up.commit({"x": "y"}, "a commit to point at")
    small.up.commit({"vendor/lib": sub}, "add a submodule pointer", parent=small.base,
                    ref="refs/pull/1/head", modes={"vendor/lib": "160000"})
    report = ok(cli, small, [{"pr": 1}])
    assert f"160000 commit {sub}\tvendor/lib" in small.work.git("ls-tree", "-r", report["result"]["sha"])


def test_pr_based_on_a_commit_upstream_later_rewrote(cli: Cli, small: Small, tmp_path: Path) -> None:
    first = small.up.commit({"docs/c.txt": "c v1\n"}, "upstream v1", parent=small.base, ref="refs/heads/main")
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"}, parent=first)
    # upstream force-pushed: v1 replaced by v1' (a different commit with the same change)
    rewritten = small.up.commit({"docs/c.txt": "c v1\n"}, "upstream v1 (rewritten)", parent=small.base,
                                ref="refs/heads/main")
    assert rewritten != first
    report = ok(cli, small, [{"pr": 1}])
    tip = report["result"]["sha"]
    assert small.work.git("show", f"{tip}:b.py").startswith("x = 10")
    assert small.work.git("show", f"{tip}:docs/c.txt") == "c v1"
    assert by_id(report)["pr/1"]["base"] == small.base


def test_bare_and_non_bare_repositories_give_one_sha(cli: Cli, small: Small, tmp_path: Path) -> None:
    small.pr(1, {"b.py": "x = 10\ny = 2\nz = 3\n"})
    report = ok(cli, small, [{"pr": 1}])
    other = init_repo(tmp_path / "nonbare")
    code, again = cli.json("sync", "-m", small.manifest_path, "--repo", other.path)
    assert code == 0 and again["result"]["sha"] == report["result"]["sha"]
