"""A hunk's place named by its scope (helper-174): a place was the file's n-th hunk of its key, so when one
hunk of the key stopped conflicting in f() while another started in g() (as many hunks of the key as places
recorded, each shifted), g()'s hunk was judged by f()'s record, and its replay replaced upstream's line
without a word. A place is named by its def/class and its n-th hunk of the key there; a place not recorded
is judged by what was true at every place (it asks)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from carrytool.errors import InputError
from carrytool.union.recorded_upstream import HunkUpstream, Place
from carrytool.union.store import Store
from carrytool.union.upstream_hunks import around_hunks
from tests.conftest import Cli
from tests.union.fold_scenario import TwoPrs
from tests.union.test_union_hunk_places import _records, _resolve_all

THREE = "".join(f"def {name}():\n    x = 1\n    return x\n\n\n" for name in "fgh")


def _set(text: str, **values: int) -> str:
    """THREE with the x of each def named set to its value."""
    out = []
    for block in text.split("\n\n\n"):
        name = block[4:5]
        out.append(block.replace("x = 1", f"x = {values[name]}") if name in values else block)
    return "\n\n\n".join(out)


def test_a_hunk_starting_where_another_stopped_is_not_judged_by_its_record(cli: Cli, tmp_path: Path) -> None:
    # upstream sets f's x to 2; pr/1 sets h's x to 2; pr/2 sets every x to 3: f (upstream vs pr/2) and
    # h (pr/1 vs pr/2) conflict with the same two sides, g merges cleanly
    prs = TwoPrs(tmp_path, {"m.py": THREE}, {"m.py": _set(THREE, h=2)}, {"m.py": _set(THREE, f=3, g=3, h=3)})
    args = prs.args()
    main = prs.up.commit({"m.py": _set(THREE, f=2)}, "f is 2", parent=prs.base, ref="refs/heads/main")
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_all(prs.scratch / "m.py", "    x = 3\n", 2)
    assert cli("union", "continue", "u", *args).exit_code == 0
    [record] = _records(prs)       # f dropped upstream's x = 2; h dropped nothing of upstream's
    assert [(p["hunk"], p["scope"], p["scope_hunk"], p["upstream_removed"]) for p in record["upstream_at"]] == \
        [(0, "f", 0, ["    x = 2"]), (1, "h", 0, [])]
    # upstream puts f back to 1 (f no longer conflicts) and sets g's x to 2: g conflicts, with the same sides
    prs.up.commit({"m.py": _set(THREE, g=2)}, "g is 2, not f", parent=main, ref="refs/heads/main")
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    # was 0, the patch replacing g's upstream `x = 2` with `x = 3`: g's hunk (the first of the key now) judged
    # by f's record (the first then), which dropped upstream's x = 2 there
    assert result.exit_code == 3, out
    assert ("m.py: your recorded resolution of a conflict hunk is not replayed: it would drop 1 line upstream main "
            "has there now, which it did not drop as upstream's when you resolved it (upstream merged a PR since?):\n"
            "        x = 2\n") in out, out
    assert out.count("your recorded resolution of a conflict hunk is not replayed") == 1, out   # g's only
    # decided again (pr/2's line over upstream's; the key's hunk in h is shown too): recorded, and the next fold
    # asks nothing
    _resolve_all(prs.scratch / "m.py", "    x = 3\n", 2)
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    [record] = _records(prs)
    assert [(p["scope"], p["upstream_removed"]) for p in record["upstream_at"]] == [("g", ["    x = 2"]), ("h", [])]
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "not replayed" not in again.stdout + again.stderr, again.stdout + again.stderr


def test_places_named_by_scope_are_kept_and_read_back(tmp_path: Path) -> None:
    store, key = Store(tmp_path, "2.39.0"), "a" * 64
    f_, g_, h_ = HunkUpstream((b"x = 2",), ()), HunkUpstream((), ()), HunkUpstream((b"y",), (b"z",))
    store.record("u", "m.py", key, None, b"x = 3", ["pr/2"], [f_, g_, h_], ["f", "C.g", "C.g"])
    store.record("u", "n.txt", key, None, b"x = 3", ["pr/2"], [h_], [None])
    [doc] = [json.loads(p.read_text()) for p in tmp_path.glob("u/*.json")]
    assert [(p["file"], p["hunk"], p["scope"], p["scope_hunk"]) for p in doc["upstream_at"]] == \
        [("m.py", 0, "f", 0), ("m.py", 1, "C.g", 0), ("m.py", 2, "C.g", 1), ("n.txt", 0, None, 0)]
    recorded = store.load_upstream("u")[key]
    assert recorded.of(Place("m.py", 0, 3, "C.g", 0, 2)) == g_     # by its scope, not its position (f's)
    assert recorded.of(Place("m.py", 2, 3, "f", 0, 1)) == f_
    assert recorded.of(Place("m.py", 0, 3, "h", 0, 1)) == recorded.whole   # a scope not recorded: every place's
    assert recorded.of(Place("m.py", 0, 1, "C.g", 0, 1)) == recorded.whole  # C.g has fewer hunks: which is unknown
    assert recorded.of(Place("n.txt", 0, 1, None, 0, 1)) == h_
    store.record("u", "n.txt", key, None, b"x = 3", ["pr/2"], [h_])          # no scopes: n.txt by position again
    recorded = store.load_upstream("u")[key]
    assert ("n.txt", 0) not in recorded.scopes and recorded.of(Place("n.txt", 0, 1, "k", 0, 1)) == h_
    assert recorded.of(Place("m.py", 1, 3, "C.g", 0, 2)) == g_              # m.py's names kept
    path = next(tmp_path.glob("u/*.json"))
    doc = json.loads(path.read_text())
    doc["upstream_at"][0]["scope_hunk"] = -1
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="scope_hunk"):
        store.load_upstream("u")


@pytest.mark.parametrize(("conflicted", "scopes", "text"), [
    (b"def f():\n<<<<<<< a\n    x = 2\n=======\n    x = 3\n>>>>>>> b\n\n\nclass C:\n    def g(self):\n"
     b"<<<<<<< a\n        y = 2\n=======\n        y = 3\n>>>>>>> b\n\n\n<<<<<<< a\nZ = 1\n=======\nZ = 2\n>>>>>>> b\n",
     ["f", "C.g", "@ y = 2"], ["@ def f():", "@ def g(self):", "@ y = 2"]),
    (b"def f():\n    x = 1\n<<<<<<< a\n=======\n    y = 3\n>>>>>>> b\n\n\nz = 1\n", ["f"],   # an insertion: the line before
     ["@ x = 1"]),
])
def test_a_hunks_scope_is_its_def_on_the_fold_side(conflicted: bytes, scopes: list, text: list) -> None:
    # outside a def/class, and in a file that is not Python, the line before that says something names it
    # (h183's review: unnamed, such places were matched by position)
    assert [a.scope for a in around_hunks(None, conflicted, "m.py")] == scopes
    assert [a.scope for a in around_hunks(None, conflicted, "m.txt")] == text
