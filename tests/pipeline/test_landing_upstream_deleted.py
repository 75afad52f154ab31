"""A PR's deletion that upstream made too is landed, also when an earlier entry changed the file (h254).

On huggingface/peft, pr/3360 deletes the unused `r_miss = module.miss_r[adapter_name]`, which upstream also
deleted since the PR's base (#3567); alone it landed 10/10 (the file then is the PR's head), but after pr/3379,
which changes a line four above, sync said "lost: pr/3360's hunk conversion.py:63 did not land" and the night
was red, while the composed file lacks the line as the PR wants.
"""

from __future__ import annotations

from tests.conftest import Cli, Small
from tests.pipeline.test_sync import by_id, sync

BODY = "".join(f"    v{i} = {i}\n" for i in range(1, 21))
BASE = f"def f():\n{BODY}    return v1\n"


def test_a_deletion_upstream_made_too_lands_after_an_earlier_entry(cli: Cli, small: Small) -> None:
    base = small.up.commit({"m.py": BASE}, "m", parent="main", ref="refs/heads/main")
    small.up.commit({"m.py": BASE.replace("    v10 = 10\n", "")}, "upstream drops v10", parent=base,
                    ref="refs/heads/main")
    small.pr(1, {"m.py": BASE.replace("    v6 = 6\n", "    v6 = 60\n")}, parent=base)
    small.pr(2, {"m.py": BASE.replace("    v10 = 10\n", "").replace("    v18 = 18\n", "    v18 = 180\n")},
             parent=base)
    for entries in ([{"pr": 2}], [{"pr": 1}, {"pr": 2}]):
        small.manifest(entries)
        code, report = sync(cli, small, "--dry-run")
        assert code == 0, (entries, by_id(report)["pr/2"].get("landing"))
        landing = by_id(report)["pr/2"]["landing"]
        assert (landing["hunks"], landing["landed"], landing["dropped"]) == (2, 2, []), (entries, landing)



DOC = ('def skew():\n    """\n    Compute the skewness.\n\n\n    See scipy.stats for more information.\n\n'
       '    Parameters\n    ----------\n    bias : bool\n    """\n' + "".join(f"    v{i} = {i}\n" for i in range(1, 21))
       + "    return v1\n")


def test_a_blank_line_deletion_upstream_made_too_lands(cli: Cli, small: Small) -> None:
    """h258 (pola-rs/polars): pr/28708 deletes the second of two blank lines in `Expr.skew`'s docstring,
    which upstream had deleted too since the PR's base. The file is full of blank lines, so "none of its
    lines left to delete" never held, and sync said "lost: pr/28708's hunk expr.py:10094 (Expr.skew) did
    not land" (a red night) while the composed file has the docstring as the PR wants."""
    base = small.up.commit({"m.py": DOC}, "m", parent="main", ref="refs/heads/main")
    small.up.commit({"m.py": DOC.replace("more information.\n\n\n", "more information.\n\n")
                     .replace("\n\n\n    See", "\n\n    See").replace("    v3 = 3\n", "    v3 = 30\n")},
                    "upstream drops a blank line", parent=base, ref="refs/heads/main")
    small.pr(1, {"m.py": DOC.replace("\n\n\n    See", "\n\n    See").replace("    v18 = 18\n", "    v18 = 180\n")},
             parent=base)
    small.manifest([{"pr": 1}])
    code, report = sync(cli, small, "--dry-run")
    landing = by_id(report)["pr/1"]["landing"]
    assert code == 0, landing
    assert (landing["hunks"], landing["landed"], landing["dropped"]) == (2, 2, []), landing
