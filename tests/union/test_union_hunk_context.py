"""A place known by the lines around it, not its position (h185's trial on sqlalchemy): one conflict met at two
attribute lists of a class body (`first`, `second`), resolved differently at each, was recorded as `scope: C`
and its n-th hunk of the key there; both PRs then stopped touching `first` and started touching `third`, and a
refold (status "a refold would ask nothing", compose and sync exit 0) replayed `first`'s resolution at
`second` and `second`'s at `third`. Each place also keeps the lines that say something around it on the fold's
side (`before`, `after`): a place is met where those lines still are (one line of them may have changed, a
line changed gone from the file), and a hunk where no recorded place's lines are is new: the fold asks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from carrytool.union.recorded_upstream import HunkUpstream, Place, RecordedUpstream
from tests.conftest import Cli
from tests.union.fold_scenario import TwoPrs
from tests.union.test_union_hunk_each_place import _composed, _resolve_each
from tests.union.test_union_hunk_renamed_place import _sections, _show

STOPPED = "not met at the places recorded"
NAMES = ("first", "second", "third")


def _body(header: str, values: dict[str, str] | None = None, extra: str = "") -> str:
    """HEADER (`class C:`, `def C():`) and a list for each of NAMES, its element as VALUES say (`'a'`), six
    comment lines after each; EXTRA: a line above the header."""
    values = values or {}
    return extra + header + "\n" + "".join(
        f"    {n} = [\n        '{values.get(n, 'a')}',\n        'k',\n        'z',\n    ]\n"
        + "".join(f"    # {n} filler {i}\n" for i in range(6)) for n in NAMES)


def _folded(cli: Cli, tmp_path: Path, header: str) -> TwoPrs:
    """pr/1 and pr/2 setting `first` and `second` (to 'b', 'c'), resolved `first` to pr/1's, `second` to pr/2's,
    each with a comment saying so."""
    prs = TwoPrs(tmp_path, {"m.py": _body(header)}, {"m.py": _body(header, {"first": "b", "second": "b"})},
                 {"m.py": _body(header, {"first": "c", "second": "c"})})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "m.py", "        'b',  # first: pr/1\n", "        'c',  # second: pr/2\n")
    first = _composed(cli("union", "continue", "u", *args))
    assert _composed(cli("union", "compose", "u", *args)) == first
    return prs


def _resolved(header: str, values: dict[str, str], extra: str = "") -> str:
    """The file with each list's element resolved to VALUES' lines (a name left out keeps 'a')."""
    text = _body(header, extra=extra)
    for name, line in values.items():
        text = text.replace(f"    {name} = [\n        'a',\n", f"    {name} = [\n        {line}\n")
    return text


@pytest.mark.parametrize("header", ["class C:", "def C():"])
def test_places_that_shift_in_one_scope_are_not_replayed_at_each_other(cli: Cli, tmp_path: Path,
                                                                       header: str) -> None:
    prs = _folded(cli, tmp_path, header)
    for ref, value in (("refs/pull/1/head", "b"), ("refs/pull/2/head", "c")):
        prs.up.commit({"m.py": _body(header, {"second": value, "third": value})}, "second and third",
                      parent=prs.base, ref=ref)
    status = cli("union", "status", "u", *prs.args())
    assert "a refold would ask nothing" not in status.stdout, status.stdout     # was said
    result = cli("union", "compose", "u", *prs.args())
    out = result.stdout + result.stderr
    # was exit 0, `second = ['b',  # first: pr/1` and `third = ['c',  # second: pr/2`
    assert result.exit_code == 3 and STOPPED in out, out
    assert "# first: pr/1" not in (prs.scratch / "m.py").read_text()
    assert "m.py's hunk 2 of it (in C, after `third = [`) is at no place recorded" in out, out
    assert "m.py  pr/1, pr/2  (2 hunks whose recorded resolutions differ by place" in out, out


def test_a_faithful_refold_replays_each_place(cli: Cli, tmp_path: Path) -> None:
    # upstream edits far from the places (a line above the class, a filler between them), and pr/1 moves inside
    # its place (`'k'` -> `'k2'`, a line after the hunk): each place is still met where its lines are
    header = "class C:"
    prs = _folded(cli, tmp_path, header)
    far = _body(header, extra="import os\n").replace("# first filler 3", "# first filler three")
    main = prs.up.commit({"m.py": far}, "far", parent=prs.base, ref="refs/heads/main")
    result = cli("union", "compose", "u", *prs.args())
    out = result.stdout + result.stderr
    assert result.exit_code == 0 and "not replayed" not in out, out
    want = _resolved(header, {"first": "'b',  # first: pr/1", "second": "'c',  # second: pr/2"}, "import os\n") \
        .replace("# first filler 3", "# first filler three")
    assert _show(prs, _composed(result), "m.py") == want
    moved = _body(header, {"first": "b", "second": "b"}, "import os\n").replace("# first filler 3",
                                                                                  "# first filler three")
    prs.up.commit({"m.py": moved.replace("        'k',\n    ]\n    # first", "        'k2',\n    ]\n    # first")},
                  "one: k2", parent=main, ref="refs/pull/1/head")
    result = cli("union", "compose", "u", *prs.args())
    out = result.stdout + result.stderr
    assert result.exit_code == 0 and "not replayed" not in out, out
    assert _show(prs, _composed(result), "m.py") == want.replace("        'k',\n    ]\n    # first",
                                                                  "        'k2',\n    ]\n    # first")


def test_places_unchanged_keep_their_lines_in_the_record(cli: Cli, tmp_path: Path) -> None:
    prs = _folded(cli, tmp_path, "class C:")
    [path] = sorted((prs.manifest.parent / "resolutions" / "u").glob("*.json"))
    places = json.loads(path.read_text())["upstream_at"]
    assert [(p["before"], p["after"]) for p in places] == [
        (["first = [", "class C:"], ["'k',", "'z',", "# first filler 0"]),
        (["second = [", "# first filler 5", "# first filler 4"], ["'k',", "'z',", "# second filler 0"])]


def _folded_then_a_renamed(cli: Cli, tmp_path: Path) -> tuple[TwoPrs, list[str]]:
    """[a] and [b] resolved apart (timeout 10 and 20), then upstream renames `name = a` to `name = alpha`."""
    prs = TwoPrs(tmp_path, {"c.cfg": _sections("anb")}, {"c.cfg": _sections("anb", {"a": 10, "b": 10})},
                 {"c.cfg": _sections("anb", {"a": 20, "b": 20})})
    args = prs.args()
    assert cli("union", "compose", "u", *args).exit_code == 3
    _resolve_each(prs.scratch / "c.cfg", "timeout = 10\n", "timeout = 20\n")
    _composed(cli("union", "continue", "u", *args))
    prs.up.commit({"c.cfg": _sections("anb", renamed={"a": "alpha"})}, "rename a", parent=prs.base,
                  ref="refs/heads/main")
    return prs, args


def test_a_place_moved_to_a_new_section_after_its_line_was_edited_asks(cli: Cli, tmp_path: Path) -> None:
    # h190's open case: upstream edits `name = a` (the line that named [a]'s place) and the PRs move from [a] to
    # [n], between [a] and [b]: as many hunks, [b] met as recorded, a's line gone: paired by order, [n] got [a]'s
    # resolution, exit 0. [n]'s lines are not [a]'s: it asks
    prs, args = _folded_then_a_renamed(cli, tmp_path)
    for ref, value in (("refs/pull/1/head", 10), ("refs/pull/2/head", 20)):
        prs.up.commit({"c.cfg": _sections("anb", {"n": value, "b": value}, {"a": "alpha"})}, "n, not a",
                      parent=prs.base, ref=ref)
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 3 and STOPPED in out, out                   # was exit 0, [n] timeout = 10
    assert "c.cfg's hunk 1 of it (after `name = n`) is at no place recorded" in out, out


def test_a_renamed_line_with_its_section_kept_still_replays(cli: Cli, tmp_path: Path) -> None:
    # h190's case again, with the sections' lines recorded: [a]'s line edited, its section header kept
    prs, args = _folded_then_a_renamed(cli, tmp_path)
    result = cli("union", "compose", "u", *args)
    out = result.stdout + result.stderr
    assert result.exit_code == 0 and "not replayed" not in out, out
    assert _show(prs, _composed(result), "c.cfg") == _sections("anb", {"a": 10, "b": 20}, {"a": "alpha"})


def _recorded(*contexts: tuple[tuple[str, ...], tuple[str, ...]]) -> RecordedUpstream:
    at = {("m.py", n): HunkUpstream((), ()) for n in range(len(contexts))}
    return RecordedUpstream(HunkUpstream(), at, {("m.py", n): ("C", n) for n in range(len(contexts))},
                            {("m.py", n): b"%d" % n for n in range(len(contexts))},
                            {("m.py", n): context for n, context in enumerate(contexts)})


def _now(*contexts: tuple[tuple[str, ...], tuple[str, ...]]) -> list[Place]:
    return [Place("m.py", n, len(contexts), "C", n, len(contexts), context) for n, context in enumerate(contexts)]


A = (("first = [", "class C:"), ("'k',", "'z',", "# first 0"))
B = (("second = [", "# first 5", "# first 4"), ("'k',", "'z',", "# second 0"))
T = (("third = [", "# second 5", "# second 4"), ("'k',", "'z',", "# third 0"))
LINES = {f"@ {line}" for line in ("first = [", "class C:", "second = [", "third = [", "'k',", "'z',", "# first 0",
                                  "# first 4", "# first 5", "# second 0", "# second 4", "# second 5", "# third 0")}


@pytest.mark.parametrize(("then", "now", "lines", "placed"), [
    ((A, B), (A, B), LINES, [0, 1]),                                              # as recorded
    ((A, B), (B, T), LINES, [1, None]),                                           # h185: shifted by one
    ((A, B), (T, A), LINES, [None, 0]),
    ((A, B), ((("first = [", "class C:", "import os"), A[1]), B), LINES, [0, 1]),  # a line above, far
    ((A, B), ((("first = [", "x = 1", "class C:"), A[1]), B), LINES, [0, 1]),      # a line inserted near
    ((A, B), (((A[0][0], "class D:"), A[1]), B), LINES - {"@ class C:"}, [0, 1]),  # class C: edited, gone
    ((A, B), (((A[0][0], "class D:"), A[1]), B), LINES, [None, 1]),                # class C: still in the file
    ((A, B), ((("first = [", "class D:"), ("'k',", "'y',", "# first 0")), B), LINES, [None, 1]),  # C still here
    ((A, B), ((("first = [", "class D:"), ("'k',", "'y',", "# first 0")), B), LINES - {"@ class C:", "@ 'z',"},
     [0, 1]),                                                                    # a line each side, both gone
    ((A, B), ((("first = [", "y = 1", "x = 1"), A[1]), B), LINES, [None, 1]),      # two lines inserted
    ((A, B), ((("first = [", "class C:"), ("'k',", "'z',")), B), LINES, [None, 1]),  # a line deleted, still here
    ((A, A), (A, A), LINES, [0, 1]),                                              # alike: by position, as met
    ((A, A), (A,), LINES, [None]),                                                # alike: which one is it?
    ((A, B), (A, A), LINES, [0, None]),                                           # two with A's: by position
    ((A, B), ((("first = [", "x = 1", "class C:"), A[1]), A), LINES, [None, None]),  # near A and A: unsure
])
def test_a_place_is_met_where_its_lines_are(then: tuple, now: tuple, lines: set, placed: list) -> None:
    found = _recorded(*then).placed(_now(*now), lines)
    assert [None if at is None else at[1] for at in found.at] == placed


def _strip_lines(prs: TwoPrs, **put: object) -> None:
    """The record's places without `before` and `after` (a record made before h191), or with PUT."""
    [path] = sorted((prs.manifest.parent / "resolutions" / "u").glob("*.json"))
    doc = json.loads(path.read_text())
    for place in doc["upstream_at"]:
        place.pop("before"), place.pop("after")
        place.update(put)
    path.write_text(json.dumps(doc))


def test_an_older_record_without_the_lines_is_named_as_before(cli: Cli, tmp_path: Path) -> None:
    prs = _folded(cli, tmp_path, "class C:")
    first = _composed(cli("union", "compose", "u", *prs.args()))
    _strip_lines(prs)
    again = cli("union", "compose", "u", *prs.args())
    assert _composed(again) == first and "not replayed" not in again.stdout + again.stderr


def test_a_malformed_place_lines_field_names_the_record(cli: Cli, tmp_path: Path) -> None:
    prs = _folded(cli, tmp_path, "class C:")
    _strip_lines(prs, before="first = [", after=[])
    result = cli("union", "compose", "u", *prs.args())
    out = result.stdout + result.stderr
    assert result.exit_code == 2 and "'before' and 'after' must be lists of at most 3 strings" in out, out
