"""What the landing checks found parsing a composed module, kept by blob (pipeline.keptfindings): explain after
the nightly sync, and the next sync, parse it no more for them, and say exactly what parsing says.
Differential: each run's warnings are compared with those of a run that parses everything."""

from __future__ import annotations

import json
import subprocess

import pytest

from bench.runners import SYNC_KEEPS
from carrytool.pipeline import shadowed
from carrytool.pipeline.keptfindings import KeptFindings
from tests.conftest import Cli, Small

MODULE = "def f0():\n    return 0\n\n\n" + "TABLE = {\n" + \
    "".join(f"    ({n}, 'x'): {n},\n    b'k{n}': {n},\n" for n in range(10)) + "}\n\n\n" + \
    "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(1, 12))
KINDS = ("duplicate-key", "shadowed-definition")


def _between(text: str, anchor: str, block: str) -> str:
    at = text.index(anchor)
    return text[:at] + block + text[at:]


def _corpus(small: Small) -> str:
    """pr/1 and pr/2 each add the key (20, 'x'), the key b'new' and `def added` to one module, apart; pr/2's
    version of it."""
    small.base = small.up.commit({"m.py": MODULE}, "a module", parent="main", ref="refs/heads/main")
    one = _between(_between(MODULE, "    (2, 'x')", "    (20, 'x'): 'one',\n    b'new': 1,\n"),
                   "def f2():", "def added():\n    return 'one'\n\n\n")
    two = _between(_between(MODULE, "    (8, 'x')", "    (20, 'x'): 'two',\n    b'new': 2,\n"),
                   "def f9():", "def added():\n    return 'two'\n\n\n")
    small.pr(1, {"m.py": one})
    small.pr(2, {"m.py": two})
    small.manifest([{"pr": 1}, {"pr": 2}])
    return two


def _counted(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """A list that counts the calls of `shadowed.NAME` (one item per call, each on one blob or module)."""
    made: list[int] = []
    real = getattr(shadowed, name)

    def spy(data: bytes):  # noqa: ANN202
        made.append(1)
        return real(data)

    monkeypatch.setattr(shadowed, name, spy)
    return made


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that counts the modules the checks parse (one item per parse)."""
    return _counted(monkeypatch, "parse_module")


def _scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that counts the blobs the shadowed-definition check scans (one item per scan)."""
    return _counted(monkeypatch, "_scan")


def _warnings(report: dict) -> list[dict]:
    return [w for w in report["warnings"] if w["kind"] in KINDS]


def _run(cli: Cli, small: Small, command: str, *args: str) -> dict:
    code, report = cli.json(command, "-m", small.manifest_path, "--repo", small.work.path, *args)
    assert code == 0, report
    return report


def _fresh(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch, command: str, *args: str) -> dict:
    with monkeypatch.context() as m:
        m.setattr(KeptFindings, "get", lambda self, key: None)
        return _run(cli, small, command, *args)


def test_a_module_parsed_by_sync_is_not_parsed_again(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    parses = _parses(monkeypatch)
    first = _warnings(_run(cli, small, "sync"))
    assert sorted((w["kind"], w.get("key") or w.get("name")) for w in first) == \
        [("duplicate-key", "(20, 'x')"), ("duplicate-key", "b'new'"), ("shadowed-definition", "added")]
    assert len(parses) == 2                  # the one module, once for each check
    [kept] = (small.work.path / "carrytool" / "cache").glob("findings-git*.json")
    assert len(json.loads(kept.read_text())["findings"]) == 3     # and the shadowed check's scan of it
    # the bench's cold explain keeps what a sync wrote, as a reviewer's explain after the nightly sync finds it
    assert all(p.name.startswith(SYNC_KEEPS) for p in kept.parent.iterdir())
    scans = _scans(monkeypatch)
    for command, args in (("sync", ()), ("explain", ("--offline", "--format", "json")), ("sync", ("--dry-run",))):
        parses.clear()
        assert _warnings(_run(cli, small, command, *args)) == first, command
        assert parses == [] and scans == [], command       # the blob not even scanned again
    parses.clear()
    assert _warnings(_fresh(cli, small, monkeypatch, "sync", "--dry-run")) == first and len(parses) == 2


def test_verify_parses_again_and_a_bad_file_only_costs_parses(cli: Cli, small: Small,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    parses = _parses(monkeypatch)
    first = _warnings(_run(cli, small, "sync"))
    parses.clear()
    assert _warnings(_run(cli, small, "verify", "--rebuild")) == first and len(parses) == 2
    [kept] = (small.work.path / "carrytool" / "cache").glob("findings-git*.json")
    data = json.loads(kept.read_text())
    for bad in ({"findings": {key: [["x", "'a'", [1]]] for key in data["findings"]}},     # one line: no finding
                {"findings": {key: [["x", 3, [1, 2]]] for key in data["findings"]}},
                {"findings": {key: "oops" for key in data["findings"]}}, [1, 2], "not json"):
        kept.write_text(bad if isinstance(bad, str) else json.dumps(bad))
        parses.clear()
        assert _warnings(_run(cli, small, "sync", "--dry-run")) == first and len(parses) == 2, bad


def test_a_kept_finding_is_read_with_this_run_s_owners(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same composed blob, landed by other entries: what was found is the blob's, who wrote it this run's."""
    two = _corpus(small)
    first = _warnings(_run(cli, small, "sync"))
    small.pr(3, {"m.py": two})     # pr/2's change, as another PR
    small.manifest([{"pr": 1}, {"pr": 3}])
    parses = _parses(monkeypatch)
    warm = _warnings(_run(cli, small, "sync", "--dry-run"))
    assert parses == []
    assert warm == _warnings(_fresh(cli, small, monkeypatch, "sync", "--dry-run"))
    assert [w["by"] for w in warm] == [["pr/1", "pr/3"]] * 3
    assert json.dumps(warm) == json.dumps(first).replace("pr/2", "pr/3")


def test_a_kept_scan_is_judged_with_this_run_s_owners(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """The blob the scan found `added` defined twice in, composed by one PR alone: one side's own pair, no
    warning, though the scan kept from the night before (two PRs' definitions) is read, not redone."""
    _corpus(small)
    assert [w["name"] for w in _warnings(_run(cli, small, "sync")) if w["kind"] == "shadowed-definition"] == \
        ["added"]
    composed = subprocess.run(["git", "-C", str(small.work.path), "show", "refs/heads/dev:m.py"], check=True,
                              capture_output=True, text=True).stdout
    small.pr(4, {"m.py": composed})
    small.manifest([{"pr": 4}])
    scans = _scans(monkeypatch)
    alone = _run(cli, small, "sync", "--dry-run")
    assert scans == []                      # the same blob: its scan is read back
    assert [w for w in _warnings(alone) if w["kind"] == "shadowed-definition"] == []
    assert _warnings(alone) == _warnings(_fresh(cli, small, monkeypatch, "sync", "--dry-run"))
