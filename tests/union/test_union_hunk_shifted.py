"""helper-169's review: a place is the n-th hunk of its key in a file, so when an earlier hunk of the key
stops conflicting, the later ones were judged by another place's record (upstream's line replaced unasked).
A file with not as many hunks of the key as the record names places there is judged by what was true at
every place: it asks."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli
from tests.union.fold_scenario import TwoPrs
from tests.union.test_union_hunk_places import _merge_pr1, _records, _resolve_all

TWO = "def g():\n    x = 1\n    return x\n\n\ndef f():\n    x = 1\n    return x\n"


def test_a_place_that_stops_conflicting_does_not_lend_its_record_to_the_next(cli: Cli, tmp_path: Path) -> None:
    # pr/1 sets f's x to 2, pr/2 both to 3; upstream sets g's x to 2 (same two sides in g and in f)
    f2 = TWO[::-1].replace("x = 1"[::-1], "x = 2"[::-1], 1)[::-1]          # f (the second def) only
    prs = TwoPrs(tmp_path, {"m.py": TWO}, {"m.py": f2}, {"m.py": TWO.replace("x = 1", "x = 3")})
    args = prs.args()
    main = prs.up.commit({"m.py": TWO.replace("x = 1", "x = 2", 1)}, "g is 2", parent=prs.base,
                         ref="refs/heads/main")
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_all(prs.scratch / "m.py", "    x = 3\n", 2)
    assert cli("union", "continue", "u", *args).exit_code == 0
    [record] = _records(prs)       # g (place 0) dropped upstream's x = 2; f (place 1) dropped nothing
    assert [(p["hunk"], p["upstream_removed"]) for p in record["upstream_at"]] == [(0, ["    x = 2"]), (1, [])]
    # upstream merges pr/1 (f's x = 2 is upstream's now) and puts g back to 1: g no longer conflicts
    _merge_pr1(prs, {"m.py": f2}, main)
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    # was 0, the patch replacing f's upstream `x = 2` with `x = 3`: f's hunk judged by g's place
    assert result.exit_code == 3, out
    assert ("m.py: your recorded resolution of a conflict hunk is not replayed: it would drop 1 line upstream main "
            "has there now, which it did not drop as upstream's when you resolved it (upstream merged a PR since?):\n"
            "        x = 2\n") in out, out
    # decided again (pr/2's line over upstream's): recorded at the one place, and the next fold asks nothing
    _resolve_all(prs.scratch / "m.py", "    x = 3\n", 1)
    result = cli("union", "continue", "u", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    [record] = _records(prs)
    assert [(p["hunk"], p["upstream_removed"]) for p in record["upstream_at"]] == [(0, ["    x = 2"])]
    assert "-    x = 2\n+    x = 3\n" in (prs.manifest.parent / "unions" / "u.patch").read_text()
    again = cli("union", "compose", "u", *args)
    assert again.exit_code == 0 and "not replayed" not in again.stdout + again.stderr, again.stdout + again.stderr
