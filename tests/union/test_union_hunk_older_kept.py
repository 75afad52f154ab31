"""helper-169's review: an older record (no `upstream_kept`) asked about any kept line the file the PR branched
from had anywhere (a keep-both resolution's `return None`, upstream unchanged: every fold stopped). It asks
only about lines upstream lost since the PR branched."""
from __future__ import annotations

from pathlib import Path

from carrytool.union.recorded_upstream import HunkUpstream
from carrytool.union.upstream_hunks import around_hunks, judge
from tests.conftest import Cli
from tests.union.fold_scenario import TwoPrs
from tests.union.test_union_hunk_places import _older

BASE = "def f(x):\n    if x:\n        return x\n    return None\n"


def test_an_older_keep_both_record_replays_unasked(cli: Cli, tmp_path: Path) -> None:
    one = BASE + "\n\ndef a():\n    return None\n"
    two = BASE + "\n\ndef b():\n    return None\n"
    prs = TwoPrs(tmp_path, {"m.py": BASE}, {"m.py": one}, {"m.py": two})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    path = prs.scratch / "m.py"
    text = path.read_text()
    start, end = text.index("<<<<<<<"), text.index(">>>>>>>")
    end = text.index("\n", end) + 1
    path.write_text(text[:start] + "def a():\n    return None\n\n\ndef b():\n" + text[end:])
    r = cli("union", "continue", "u", *args)
    assert r.exit_code == 0, r.stdout + r.stderr
    [rec] = (prs.manifest.parent / "resolutions" / "u").glob("*.json")
    _older(rec)                                   # a record of carrytool before helper-162
    again = cli("union", "compose", "u", *args)   # upstream exactly as recorded
    # was 3: "it would keep 1 line of the file the PR branched from ... (upstream deleted them since?): return None"
    assert again.exit_code == 0 and "not replayed" not in again.stdout + again.stderr, again.stdout + again.stderr


def test_a_kept_line_upstream_still_has_is_not_asked_about() -> None:
    base = b"def f(x):\n    if x:\n        return x\n    return None\n"
    conflict = base + b"\n\n<<<<<<< ours\ndef a():\n=======\ndef b():\n>>>>>>> theirs\n    return None\n"
    [now] = around_hunks(base, conflict)
    resolution = b"def a():\n    return None\n\n\ndef b():"
    assert not judge(now, resolution, HunkUpstream(), ())                           # upstream lost nothing
    assert judge(now, resolution, HunkUpstream(), (b"    return None",)).puts_back == (b"    return None",)
