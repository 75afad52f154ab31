"""A fold's state, a resolution record, the store's version file and the scratch tree's marker holding text that
is not JSON: nested 100,000 deep (RecursionError, a traceback and exit 70: h237; they caught ValueError alone),
not UTF-8, or truncated. The state and the store's files are exit 2 naming the file; the marker, as unreadable
as ever, is a scratch tree whose files carrytool no longer knows, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.union.fold_scenario import Fold, fresh_fold, resolve_both

UNREADABLE = {"deep": ("[" * 100_000 + "]" * 100_000).encode(), "not-utf8": b'{"version": "\xff"}',
              "truncated": b'{"version": 2, "name": "u", "ups'}


@pytest.fixture
def fold(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Fold:
    return fresh_fold(tmp_path_factory, tmp_path)


def union(cli: Cli, fold: Fold, verb: str, *args: str):
    return cli("union", verb, "u", *args, *fold.args())


@pytest.mark.parametrize("kind", UNREADABLE)
def test_an_unreadable_fold_state_is_bad_input_naming_it(cli: Cli, fold: Fold, kind: str) -> None:
    assert union(cli, fold, "compose").exit_code == 3
    state = fold.work / "carrytool" / "union" / "u" / "state.json"
    state.write_bytes(UNREADABLE[kind])
    result = union(cli, fold, "continue")
    assert result.exit_code == 2, result.output
    assert f"{state}: the fold's state is unreadable (" in " ".join(result.stderr.split()), result.stderr
    assert ("nested too deep to read" in result.stderr) == (kind == "deep")
    _code, status = cli.json("union", "status", "u", *fold.args())
    assert "the fold's state is unreadable (" in status[0]["fold"]["corrupt"], status    # only abort named
    assert union(cli, fold, "abort").exit_code == 0          # abort works on a corrupt state


@pytest.mark.parametrize("kind", UNREADABLE)
def test_an_unreadable_resolution_record_is_bad_input_naming_it(cli: Cli, fold: Fold, kind: str) -> None:
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    records = sorted((fold.manifest.parent / "resolutions" / "u").glob("*.json"))
    assert records
    records[0].write_bytes(UNREADABLE[kind])
    result = union(cli, fold, "compose")
    assert result.exit_code == 2, result.output
    assert f"{records[0]}: not a valid resolution record (unreadable JSON: " in " ".join(result.stderr.split())


@pytest.mark.parametrize("kind", UNREADABLE)
def test_an_unreadable_store_version_file_is_bad_input_naming_it(cli: Cli, fold: Fold, kind: str) -> None:
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    meta = fold.manifest.parent / "resolutions" / "store.json"
    meta.write_bytes(UNREADABLE[kind])
    result = union(cli, fold, "compose")
    assert result.exit_code == 2, result.output
    flat = " ".join(result.stderr.split())
    assert f"{meta}: not a valid resolution store version file (unreadable JSON: " in flat, flat


@pytest.mark.parametrize("kind", UNREADABLE)
def test_an_unreadable_scratch_marker_is_no_crash(cli: Cli, fold: Fold, kind: str) -> None:
    assert union(cli, fold, "compose").exit_code == 3
    (fold.scratch / ".carrytool-scratch").write_bytes(UNREADABLE[kind])
    result = union(cli, fold, "abort")
    assert result.exit_code == 0, result.output


WRONG_SHAPES = {"a path not a string": lambda s: s["items"][0].update(paths=[None]),
                "an item with a key no fold item has": lambda s: s["items"][1].update(extra=1),
                "the manifest not a string": lambda s: s.update(manifest=7),
                "a PR number true (a bool is an int to Python: pr/True)": lambda s: s["items"][0].update(pr=True)}


@pytest.mark.parametrize("edit", WRONG_SHAPES)
def test_a_fold_state_of_the_wrong_shape_is_bad_input_naming_it(cli: Cli, fold: Fold, edit: str) -> None:
    """JSON, but not a state a fold writes (h246: each was a traceback, exit 70, in `continue` or `status`)."""
    import json

    assert union(cli, fold, "compose").exit_code == 3
    state = fold.work / "carrytool" / "union" / "u" / "state.json"
    doc = json.loads(state.read_text())
    WRONG_SHAPES[edit](doc)
    state.write_text(json.dumps(doc))
    resolve_both(fold.scratch / "a.py")
    result = union(cli, fold, "continue")
    assert result.exit_code == 2, result.output
    assert f"{state}: the fold's state is corrupt (" in " ".join(result.stderr.split()), result.stderr
    code, status = cli.json("union", "status", "u", *fold.args())
    assert "the fold's state is corrupt (" in status[0]["fold"]["corrupt"], status
    assert union(cli, fold, "abort").exit_code == 0


@pytest.mark.parametrize("edit", ["scope of another type", "scope left out"])
def test_a_record_place_scope_of_the_wrong_shape_is_bad_input_naming_it(cli: Cli, fold: Fold, edit: str) -> None:
    """An `upstream_at` place naming its `scope_hunk` but no `scope` (h246: a KeyError, exit 70, in union status)
    is as malformed as one whose scope is a number."""
    import json

    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py")
    assert union(cli, fold, "continue").exit_code == 0
    record = sorted((fold.manifest.parent / "resolutions" / "u").glob("*.json"))[0]
    doc = json.loads(record.read_text())
    place = doc["upstream_at"][0]
    assert "scope_hunk" in place
    if edit == "scope left out":
        del place["scope"]
    else:
        place["scope"] = 7
    record.write_text(json.dumps(doc))
    for verb in ("status", "compose"):
        result = union(cli, fold, verb, "--offline")
        assert result.exit_code == 2, result.output
        assert f"{record}: not a valid resolution record (an 'upstream_at' place's 'scope' must be" in \
            " ".join(result.stderr.split()), result.stderr


def test_a_scratch_marker_naming_no_file_name_is_no_crash(cli: Cli, fold: Fold) -> None:
    """A marker listing a name no file can have (a lone surrogate, a NUL: a hand edit) ended `union abort` in a
    UnicodeEncodeError or ValueError, exit 70, the fold left half aborted (h246). Such a name is no file of
    carrytool's; the others listed go as ever."""
    import json

    assert union(cli, fold, "compose").exit_code == 3
    marker = fold.scratch / ".carrytool-scratch"
    doc = json.loads(marker.read_text())
    assert "a.py" in doc["files"]
    doc["files"] = ["\ud800", "b.py\x00", *doc["files"]]
    marker.write_text(json.dumps(doc))
    result = union(cli, fold, "abort")
    assert result.exit_code == 0, result.output
    assert not (fold.scratch / "a.py").exists() and not (fold.work / "carrytool" / "union" / "u" / "state.json").exists()
