"""sync says when upstream's branch no longer holds the commit the last night composed on (helper-214, on
celery: upstream reset six commits back, sync said nothing; only `diff` did)."""

from __future__ import annotations

from tests.conftest import Cli, Small


def _nights(small: Small) -> tuple[str, str]:
    one = small.up.commit({"b.py": "x = 1\ny = 20\nz = 3\n"}, "one", parent=small.base, ref="refs/heads/main")
    two = small.up.commit({"docs/c.txt": "c2\n"}, "two", parent=one, ref="refs/heads/main")
    small.pr(1, {"a.py": "def f():\n    return 10\n\n\ndef g():\n    return 2\n"})
    small.manifest([{"pr": 1}])
    return one, two


def test_upstream_moved_back_is_said_and_moving_on_is_not(cli: Cli, small: Small) -> None:
    one, two = _nights(small)
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and not [w for w in out["warnings"] if w["kind"] == "upstream-rewound"]
    small.up.git("update-ref", "refs/heads/main", small.base)          # two commits back
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0
    rewound = [w for w in out["warnings"] if w["kind"] == "upstream-rewound"]
    assert [(w["previous"], w["current"], w["gone"]) for w in rewound] == [(two, small.base, 2)]
    assert rewound[0]["message"].startswith(f"upstream main went back to an older commit: {small.base[:12]} does not "
                                            f"hold {two[:12]}, the upstream of the last night's lock (2 commits of it gone")
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q")    # said under --quiet too
    assert "upstream main went back" not in result.stdout           # the lock is tonight's now: said once
    small.up.git("update-ref", "refs/heads/main", two)              # forward again: nothing to say
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0 and not [w for w in out["warnings"] if w["kind"] == "upstream-rewound"]


def test_a_rewritten_upstream_is_said_under_quiet(cli: Cli, small: Small) -> None:
    one, two = _nights(small)
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q").exit_code == 0
    other = small.up.commit({"docs/c.txt": "c3\n"}, "two, rewritten", parent=one, ref="refs/heads/main")
    result = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q")
    assert result.exit_code == 0
    assert f"warning: upstream main was rewritten: {other[:12]} does not hold {two[:12]}" in result.stdout
    locked = cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "--locked", "-q")
    assert locked.exit_code == 0 and "rewritten" not in locked.stdout      # --locked composes the lock's own upstream


def test_offline_an_older_fetch_than_the_lock_is_not_said(cli: Cli, small: Small) -> None:
    """--offline composes upstream as this repository last fetched it: older than a lock made elsewhere (CI) is no
    rewind (h219: "went back ... a force-push, a reset" of an upstream that only moved on); rewritten still is."""
    one, two = _nights(small)
    assert cli("sync", "-m", small.manifest_path, "--repo", small.work.path, "-q").exit_code == 0
    small.work.git("update-ref", "refs/carrytool/dev/upstream", one)       # this clone fetched an older upstream
    code, out = cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert code == 0 and out["upstream"]["sha"] == one, out
    assert not [w for w in out["warnings"] if w["kind"] == "upstream-rewound"]
