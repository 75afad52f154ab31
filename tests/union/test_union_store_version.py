"""The resolution store's version (`store.json`'s `store`) is read, not only written (h187): a store written by
a newer carrytool (a record format this one does not know, e.g. per-place resolutions read by a carrytool that
replays the top-level `resolution` everywhere) is refused, never replayed wrongly nor rewritten downward; an
unreadable store.json is refused; a store without store.json (made by hand) folds as before."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from carrytool import __version__
from carrytool.errors import InputError
from carrytool.union.resolutions import Fixup
from carrytool.union.store import STORE_VERSION, Store
from tests.conftest import Cli
from tests.union.fold_scenario import TwoPrs
from tests.union.test_union_hunk_each_place import TWO, _composed, _resolve_each


def _folded(cli: Cli, tmp_path: Path) -> tuple[TwoPrs, str]:
    """A union whose key is resolved differently at two places (per-place resolutions in the store)."""
    prs = TwoPrs(tmp_path, {"m.py": TWO}, {"m.py": TWO.replace("x = 1", "x = 2")},
                 {"m.py": TWO.replace("x = 1", "x = 3")})
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _resolve_each(prs.scratch / "m.py", "    x = 3\n", "    x = 2\n")
    return prs, _composed(cli("union", "continue", "u", *prs.args()))


def test_a_store_of_a_newer_carrytool_is_refused_and_left_as_it_is(cli: Cli, tmp_path: Path) -> None:
    prs, _ = _folded(cli, tmp_path)
    meta = prs.manifest.parent / "resolutions" / "store.json"
    assert json.loads(meta.read_text())["store"] == STORE_VERSION == 1     # per-place resolutions: still 1
    newer = json.dumps({"store": STORE_VERSION + 1, "carrytool": "9.0.0"}) + "\n"
    meta.write_text(newer)
    for command in ("compose", "status"):
        result = cli("union", command, "u", *prs.args())
        out = result.stdout + result.stderr
        assert result.exit_code == 2, out
        assert f"{meta}: the resolution store was written by carrytool 9.0.0: store version {STORE_VERSION + 1}, " \
               f"this carrytool ({__version__}) reads version {STORE_VERSION} and older" in out, out
        assert "hint: upgrade carrytool to 9.0.0 or later" in out, out
    assert meta.read_text() == newer            # never rewritten downward


@pytest.mark.parametrize("text", ["{", "[1]\n", '{"store": "1"}\n', '{"store": true}\n', '{"git": "2.39"}\n',
                                  '{"store": 0}\n'])
def test_an_unreadable_store_json_is_refused(tmp_path: Path, text: str) -> None:
    (tmp_path / "u").mkdir(parents=True)
    (tmp_path / "store.json").write_text(text)
    store = Store(tmp_path, "2.39")
    for read in (store.load, store.load_fixups, store.load_upstream, lambda _union: store.preflight()):
        with pytest.raises(InputError) as caught:
            read("u")
        assert str(tmp_path / "store.json") in str(caught.value) and "git checkout --" in str(caught.value)
    assert (tmp_path / "store.json").read_text() == text


def test_a_store_without_store_json_folds_as_before(cli: Cli, tmp_path: Path) -> None:
    prs, first = _folded(cli, tmp_path)
    meta = prs.manifest.parent / "resolutions" / "store.json"
    meta.unlink()                               # a store made by hand
    again = cli("union", "compose", "u", *prs.args())
    assert _composed(again) == first and "not replayed" not in again.stdout + again.stderr


def test_a_write_into_a_newer_store_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    store = Store(tmp_path, "2.39")
    (tmp_path / "store.json").write_text(json.dumps({"store": STORE_VERSION + 1}))
    with pytest.raises(InputError):
        store.record_fixup("u", Fixup("pr/1", "a.py", ("100644", b"a\n"), ("100644", b"b\n"), None, None))
    assert json.loads((tmp_path / "store.json").read_text())["store"] == STORE_VERSION + 1
    assert not (tmp_path / "u").exists()        # refused before writing anything
