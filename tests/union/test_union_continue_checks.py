"""What `union continue` (and a `union compose` that finishes) says of the union it made, and what `union status`
says of a fold under way (helper-147 found, on huggingface/peft; helper-150):

- a PR's file the union leaves as upstream has it is one whole-file item, hinted and warned as sync will (the
  hints were one per hunk, with `in:`, which sync then called stale while the file stayed provided-absent), and
  a scoped drop of such a file is not said to be "carried now";
- a name the union's result loads that nothing binds, where upstream and the PRs bind it or do not load it (a
  typo in a resolution, `pruned_tensor / densty`, passed continue and sync): a warning with the likely fix;
- a stopped fold's status names `continue`/`abort`, not `compose` (which refuses while a fold is under way);
- a recorded edit that changes nothing is said so and leaves the store, never "It was:" and nothing."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from carrytool.pipeline.unbound import introduced
from carrytool.union.resolutions import ConflictHunk, split_conflicts
from tests.conftest import Cli
from tests.union.fold_scenario import Fold, TwoPrs, edited, resolve_both
from tests.union.test_union_left_out import AGENT, _method


def _both(path: Path) -> None:
    """Resolve every conflict hunk of PATH as its two sides, one after the other."""
    parts = split_conflicts(path.read_bytes())
    assert parts is not None
    path.write_bytes(b"\n".join(p.ours + b"\n" + p.theirs if isinstance(p, ConflictHunk) else p for p in parts))


def _warnings(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("warning: ")]


# -- a PR's file the union does not change: one item, as sync says it ----------------------------------------------

PAD = "".join(f"    def test_pad{k}(self):\n        assert {k}\n\n" for k in range(4))
TESTS = "class TestAgent:\n    def test_a(self):\n        assert 1\n\n" + PAD + \
    "    def test_b(self):\n        assert 2\n"
TESTS_1 = TESTS.replace("        assert 1\n", "        assert 1\n        assert 'a'\n") \
               .replace("        assert 2\n", "        assert 2\n        assert 'b'\n")


def _left_alone(cli: Cli, root: Path) -> tuple[TwoPrs, str]:
    """pr/1 adds `reset` to agent.py and a line to each of two tests of tests/t.py, pr/2 `describe` where `reset`
    goes: the fold stops on agent.py (pr/2), kept whole; tests/t.py is put back as upstream has it. The continue's
    output."""
    prs = TwoPrs(root, {"agent.py": AGENT, "tests/t.py": TESTS},
                 {"agent.py": _method('    def reset(self) -> None:\n        self.name = "x"\n'),
                  "tests/t.py": TESTS_1},
                 {"agent.py": _method('    def describe(self) -> str:\n        return self.name\n')})
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _both(prs.scratch / "agent.py")
    (prs.scratch / "tests" / "t.py").write_text(TESTS)
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0, result.output
    return prs, result.stdout + result.stderr


def test_continue_hints_a_file_the_union_leaves_alone_whole_as_sync_does(cli: Cli, tmp_path: Path) -> None:
    prs, output = _left_alone(cli, tmp_path)
    [warning] = _warnings(output)
    assert warning.startswith("warning: the union does not change tests/t.py, which pr/1 changes: ")
    hint = f'write its supersedes item as `{{pr: 1, head: {prs.pr1}, drops: [{{file: tests/t.py, why: "..."}}]}}`'
    assert warning.endswith(hint) and "in: " not in output
    # sync says the same, with the same hint, against the manifest as continue left it
    text = prs.manifest.read_text()
    assert "{pr: 1, head: " in text
    prs.manifest.write_text(text.replace(f"{{pr: 1, head: {prs.pr1}}}", "1"))
    code, report = cli.json("sync", "--dry-run", *prs.args())
    assert code == 0, report
    [absent] = [w for w in report["warnings"] if w["kind"] == "provided-absent"]
    assert absent["file"] == "tests/t.py" and "lines" not in absent and absent["message"].endswith(hint)


def test_the_hint_pasted_satisfies_sync(cli: Cli, tmp_path: Path) -> None:
    prs, _output = _left_alone(cli, tmp_path)
    text = prs.manifest.read_text()
    prs.manifest.write_text(text.replace(f"{{pr: 1, head: {prs.pr1}}}", f"{{pr: 1, head: {prs.pr1}, drops: "
                                                                        "[{file: tests/t.py, why: upstream's tests}]}"))
    code, report = cli.json("sync", "--dry-run", *prs.args())
    assert code == 0, report
    assert [w["kind"] for w in report["warnings"] if w["kind"] in ("provided-absent", "stale-drop")] == []
    union = next(e for e in report["entries"] if e["id"] == "carry/u")
    assert union["dropped_on_purpose"] == [{"pr": 1, "file": "tests/t.py", "lines": None, "scopes": [], "in": None,
                                            "why": "upstream's tests"}]
    status = cli("union", "status", "u", *prs.args())
    assert "dropped on purpose: pr/1's change to tests/t.py (the whole file): upstream's tests" in status.stderr
    assert not _warnings(status.stderr), status.stderr


def test_a_scoped_drop_of_a_file_left_alone_is_not_said_to_be_carried(cli: Cli, tmp_path: Path) -> None:
    """helper-147: the drops continue hinted (one per def, `in:`) gave two stale-drops that said the union
    "lacks none of them verbatim: it carries them now", beside the file's provided-absent."""
    prs, _output = _left_alone(cli, tmp_path)
    text = prs.manifest.read_text()
    prs.manifest.write_text(text.replace(f"{{pr: 1, head: {prs.pr1}}}", f"{{pr: 1, head: {prs.pr1}, drops: "
                                                                        "[{file: tests/t.py, in: TestAgent.test_a, "
                                                                        "why: not wanted}]}"))
    code, report = cli.json("sync", "--dry-run", *prs.args())
    assert code == 0, report
    assert [w["file"] for w in report["warnings"] if w["kind"] == "provided-absent"] == ["tests/t.py"]
    [stale] = [w for w in report["warnings"] if w["kind"] == "stale-drop"]
    assert "carries them now" not in stale["message"]
    assert "but the union does not change tests/t.py at all: pr/1's whole change there is left out" in stale["message"]
    assert stale["message"].endswith("write the drop without `in`: `{file: tests/t.py, why: \"not wanted\"}`")
    said = cli("union", "status", "u", *prs.args()).stderr
    assert "warning: pr/1's drop of tests/t.py in TestAgent.test_a (manifest line 9) covers nothing: the union " \
           "does not change tests/t.py at all" in said and "carries them now" not in said
    assert "warning: the union does not change tests/t.py" in said


# -- a name the union leaves unbound ---------------------------------------------------------------------------------

SCALE = ("import os\n\n\ndef scale(values, density):\n    out = []\n    for v in values:\n"
         "        out.append(v / density)\n    return out\n")


def _typo(cli: Cli, root: Path) -> tuple[TwoPrs, str]:
    """pr/1 and pr/2 rewrite one line of scale(); the stop is resolved with a typo (`densty`)."""
    prs = TwoPrs(root, {"m.py": SCALE},
                 {"m.py": SCALE.replace("v / density)", "v / density if density else 0.0)")},
                 {"m.py": SCALE.replace("v / density)", "float(v) / density)")})
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    shown = (prs.scratch / "m.py").read_text()
    (prs.scratch / "m.py").write_text(re.sub(r"<<<<<<< [^\n]*\n.*?>>>>>>> [^\n]*\n",
                                             "        out.append(float(v) / densty if density else 0.0)\n", shown,
                                             flags=re.S))
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0, result.output        # a warning, not a refusal
    return prs, result.stdout + result.stderr


def test_a_typo_in_a_resolution_is_warned_with_the_likely_fix_and_where_to_make_it(cli: Cli, tmp_path: Path) -> None:
    prs, output = _typo(cli, tmp_path)
    [warning] = _warnings(output)
    records = sorted((prs.manifest.parent / "resolutions" / "u").glob("*.json"))
    assert len(records) == 1
    assert warning.startswith("warning: m.py:7: the union loads `densty`, which nothing binds in the file "
                              "(upstream's, pr/1's and pr/2's versions each bind it or do not load it: the fold "
                              "made it unbound); NameError when line 7 runs. Likely fix: `density`, which the file "
                              f"binds (a typo?); the line is your recorded resolution {records[0]}: correct it there "
                              "(its `resolution`), then carrytool union compose u ")
    # as the warning says: corrected in the record, the next fold has it and says nothing
    doc = json.loads(records[0].read_text())
    doc["resolution"] = doc["resolution"].replace("densty", "density")
    records[0].write_text(json.dumps(doc))
    again = cli("union", "compose", "u", *prs.args())
    assert again.exit_code == 0 and not _warnings(again.stdout + again.stderr), again.output
    assert "float(v) / density if density" in (prs.manifest.parent / "unions" / "u.patch").read_text()


def test_a_compose_that_replays_the_typo_warns_too_and_sync_is_unchanged(cli: Cli, tmp_path: Path) -> None:
    prs, _output = _typo(cli, tmp_path)
    moved = prs.up.commit({"m.py": SCALE.replace("v / density)", "float(v) / density)") + "\n\nX = 1\n"}, "two again",
                          parent=prs.pr2, ref="refs/pull/2/head")
    result = cli("union", "compose", "u", *prs.args())
    assert result.exit_code == 0 and moved[:12] in result.stdout, result.output
    assert [w.split(" the union loads ")[1][:8] for w in _warnings(result.stderr)] == ["`densty`"]
    code, report = cli.json("sync", "--dry-run", *prs.args())
    assert code == 0, report


def test_two_prs_that_merge_cleanly_into_an_unbound_name_are_warned(cli: Cli, tmp_path: Path) -> None:
    """pr/1 stops using sys and drops its import, pr/2 uses sys elsewhere: git merges them cleanly."""
    pad = "".join(f"def pad{k}():\n    return {k}\n\n\n" for k in range(4))
    base = "import os\nimport sys\n\n\ndef a():\n    return sys.argv\n\n\n" + pad + "def b():\n    return 1\n"
    prs = TwoPrs(tmp_path, {"m.py": base},
                 {"m.py": base.replace("import sys\n", "").replace("return sys.argv", "return []")},
                 {"m.py": base.replace("    return 1\n", "    return sys.maxsize\n")})
    result = cli("union", "compose", "u", *prs.args())
    assert result.exit_code == 0, result.output
    [warning] = _warnings(result.stderr)
    assert re.match(r"warning: m\.py:\d+: the union loads `sys`, which nothing binds", warning), warning
    assert "Likely fix: bring back its binding, `import sys` (line 2 of upstream's version); no recorded " \
           "resolution or edit has the line or dropped the name (the PRs' changes merged there)" in warning


def test_an_import_a_resolution_dropped_is_warned_where_the_resolution_is(cli: Cli, tmp_path: Path) -> None:
    """helper-147's save-union: the import block conflicted (pr/3251 added PeftWarning, pr/3509 PeftModel), the
    stop was resolved to pr/3509's side, and pr/3251's test using PeftWarning stayed: sync said nothing."""
    pad = "".join(f"def pad{k}():\n    return {k}\n\n\n" for k in range(4))
    base = "from os import (\n    path,\n    sep,\n)\n\n\ndef a():\n    return path\n\n\n" + pad + \
        "def b():\n    return sep\n"
    prs = TwoPrs(tmp_path, {"m.py": base},
                 {"m.py": base.replace("    sep,\n", "    sep,\n    getcwd,\n")
                                .replace("return sep", "return getcwd()")},
                 {"m.py": base.replace("    sep,\n", "    sep,\n    environ,\n")
                                .replace("return path", "return environ")})
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    shown = (prs.scratch / "m.py").read_text()
    (prs.scratch / "m.py").write_text(re.sub(r"<<<<<<< [^\n]*\n.*?>>>>>>> [^\n]*\n", "    environ,\n", shown,
                                             flags=re.S))
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0, result.output
    # the dropped side is left out too (helper-158: two insertions at one place, keeping both was possible)
    [lost, warning] = sorted(_warnings(result.stderr), key=lambda w: "unbound" in w or "loads" in w)
    assert "the union lacks pr/1's hunk m.py:4, in no region it reconciled (another PR it folds inserts lines " \
        "there too, and both could be kept" in lost and "sync will warn provided-absent" in lost, lost
    [record] = sorted((prs.manifest.parent / "resolutions" / "u").glob("*.json"))
    assert re.match(r"warning: m\.py:\d+: the union loads `getcwd`, which nothing binds", warning), warning
    assert "Likely fix: bring back its binding, `from os import getcwd` (line 1 of pr/1's head); a conflict you " \
           f"resolved there had `getcwd` and your resolution has not (the binding dropped?): correct it in {record} " \
           "(its `resolution`), then carrytool union compose u -m" in warning


def test_an_unbound_name_upstream_already_has_or_a_star_import_says_nothing(cli: Cli, tmp_path: Path) -> None:
    for name, prelude in (("old", "def legacy():\n    return missing_upstream\n\n\n"), ("star", "from os import *\n")):
        prs = TwoPrs(tmp_path / name, {"m.py": prelude + SCALE},
                     {"m.py": prelude + SCALE.replace("v / density)", "v / density if density else 0.0)")},
                     {"m.py": prelude + SCALE.replace("v / density)", "float(v) / density)")})
        assert cli("union", "compose", "u", *prs.args()).exit_code == 3
        shown = (prs.scratch / "m.py").read_text()
        (prs.scratch / "m.py").write_text(re.sub(r"<<<<<<< [^\n]*\n.*?>>>>>>> [^\n]*\n",
                                                 "        out.append(float(v) / density or missing_upstream)\n",
                                                 shown, flags=re.S))
        result = cli("union", "continue", "u", *prs.args())
        assert result.exit_code == 0 and not _warnings(result.stdout + result.stderr), (name, result.output)


QUIET = {
    "builtins": "def f(x):\n    print(__file__)\n    return len(x) + int(x)\n",
    "global": "def f():\n    global counter\n    counter = 1\n\n\ndef g():\n    return counter\n",
    "nonlocal": "def f():\n    total = 0\n\n    def g():\n        nonlocal total\n        total += 1\n"
                "        return total\n    return g\n",
    "class body": "class K:\n    size = 3\n    double = size * 2\n    pair = (size, double)\n",
    "comprehension": "def f(rows):\n    return [cell for row in rows for cell in row if cell] + "
                     "[k for k in {v: v for v in rows}]\n",
    "except as": "def f():\n    try:\n        return 1\n    except ValueError as err:\n        return err\n",
    "walrus": "def f(xs):\n    if (n := len(xs)) > 1:\n        return n\n    return [y for x in xs if (y := x)], y\n",
    "match": "def f(p):\n    match p:\n        case [a, b]:\n            return a + b\n        case {'k': v}:\n"
             "            return v\n        case str() as s:\n            return s\n        case _:\n"
             "            return p\n",
    "del": "tmp = 1\ndel tmp\n\n\ndef f():\n    return tmp\n",
    "conditional import": "from typing import TYPE_CHECKING\ntry:\n    import json\nexcept ImportError:\n"
                          "    json = None\n"
                          "if TYPE_CHECKING:\n    from os import PathLike\n\n\ndef f(p: 'PathLike') -> str:\n"
                          "    return json.dumps(PathLike)\n",
}


@pytest.mark.parametrize("case", sorted(QUIET))
def test_what_python_binds_is_no_unbound_name(case: str) -> None:
    assert introduced(QUIET[case].encode(), [b""]) == {}


def test_a_star_import_says_nothing_of_the_file_and_a_name_bound_elsewhere_is_not_news() -> None:
    assert introduced(b"from os.path import *\n\n\ndef f():\n    return join(typo_here)\n", [b""]) is None
    assert introduced(b"def f():\n    return typo_here\n", [b"from os.path import *\n"]) is None
    assert introduced(b"def f():\n    return typo_here\n", [b""]) == {"typo_here": 2}
    assert introduced(b"def f():\n    return typo_here\n", [b"def g():\n    return typo_here\n"]) == {}
    assert introduced(b"def f():\n    return typo_here\n", [None, b"typo_here = 1\n"]) == {"typo_here": 2}


# -- union status while a fold is under way ---------------------------------------------------------------------------

def test_status_of_a_stopped_fold_names_continue_and_abort_not_compose(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path)
    assert cli("union", "compose", "u", *fold.args()).exit_code == 3
    options = " ".join(shlex.quote(str(a)) for a in fold.args())
    status = cli("union", "status", "u", *fold.args())
    assert status.exit_code == 0, status.output
    assert "up to date" not in status.stdout and "carrytool union compose" not in status.stdout, status.stdout
    assert "  a fold is under way, stopped at pr/2 on a conflict: a.py\n" in status.stdout
    assert f"  resolve it in the scratch tree ({fold.scratch}), then:  carrytool union continue u {options}\n" \
        in status.stdout
    assert f"  or drop it:  carrytool union abort u {options}\n" in status.stdout
    code, [doc] = cli.json("union", "status", "u", *fold.args())
    assert code == 0 and doc["under_way"] is True
    assert doc["fold"] == {"stopped": True, "at": "pr/2", "files": [{"file": "a.py", "kind": "content",
                                                                     "entries": ["pr/1", "pr/2"],
                                                                     "now": "unresolved"}],
                           "scratch": str(fold.scratch), "manifest": str(fold.manifest.resolve()), "corrupt": None,
                           "continue": f"carrytool union continue u {options}",
                           "abort": f"carrytool union abort u {options}"}
    resolve_both(fold.scratch / "a.py")
    pasted = cli(*shlex.split(doc["fold"]["continue"])[1:])
    assert pasted.exit_code == 0, pasted.output
    code, [doc] = cli.json("union", "status", "u", *fold.args())
    assert doc["under_way"] is False and doc["fold"] is None


def test_status_of_a_stopped_fold_says_where_each_conflicted_file_stands(cli: Cli, tmp_path: Path) -> None:
    """A conflicted file deleted, made a link or a directory in the scratch tree: status says continue will
    refuse it (union.taken) and how to go on, before the user runs continue; a resolved one is said so."""
    fold = Fold(tmp_path)
    assert cli("union", "compose", "u", *fold.args()).exit_code == 3
    options = " ".join(shlex.quote(str(a)) for a in fold.args())
    go_on = f"carrytool union continue u {options}"
    target = fold.scratch / "a.py"
    conflicted = target.read_bytes()

    def now() -> tuple[str, str]:
        status = cli("union", "status", "u", *fold.args())
        assert status.exit_code == 0, status.output
        code, [doc] = cli.json("union", "status", "u", *fold.args())
        assert code == 0
        [item] = doc["fold"]["files"]
        return item["now"], status.stdout

    state, text = now()
    assert state == "unresolved" and "    a.py:" not in text        # one file, unresolved: as before
    target.unlink()
    state, text = now()
    assert state == "gone"
    assert ("    a.py: gone from the scratch tree: continue refuses it (both sides' changes to it would be dropped); "
            f"restore it, or drop it from the union on purpose:  {go_on} --take a.py\n") in text
    assert cli("union", "continue", "u", *fold.args()).exit_code == 3        # as status said
    target.symlink_to("b.py")
    state, text = now()
    assert state == "link" and "    a.py: a symbolic link in the scratch tree now: continue refuses it" in text
    target.unlink()
    target.mkdir()
    (target / "x").write_text("x\n")
    state, text = now()
    assert state == "directory" and "    a.py: a directory in the scratch tree now: continue refuses it" in text
    (target / "x").unlink()
    target.rmdir()
    target.write_bytes(conflicted)
    resolve_both(target)
    state, text = now()
    assert state == "resolved" and "    a.py: resolved (no conflict markers left)\n" in text
    assert cli("union", "continue", "u", *fold.args()).exit_code == 0


def test_status_of_a_fold_whose_state_is_corrupt_names_abort(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path)
    assert cli("union", "compose", "u", *fold.args()).exit_code == 3
    (fold.work / "carrytool" / "union" / "u" / "state.json").write_text("{")
    status = cli("union", "status", "u", *fold.args())
    assert status.exit_code == 0, status.output
    assert "a fold is under way, but its state is unusable" in status.stdout
    assert "carrytool union abort u -m" in status.stdout and "union continue" not in status.stdout


# -- a recorded edit that changes nothing ------------------------------------------------------------------------------

def _fixups(fold: Fold) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((fold.manifest.parent / "resolutions" / "u" / "fixups")
                                                      .glob("*.json"))]


def _edit_then_move(cli: Cli, fold: Fold) -> None:
    """b.py edited at the stop (b2 deleted: recorded for pr/2 where the file merged); then pr/1 rewrites b2, so
    that the edit no longer applies: the refold stops on b.py with both versions."""
    assert cli("union", "compose", "u", *fold.args()).exit_code == 3
    resolve_both(fold.scratch / "a.py")
    (fold.scratch / "b.py").write_text("b1\nb3\nb4\nb5\nb6 by one\n")
    assert cli("union", "continue", "u", *fold.args()).exit_code == 0
    fold.up.commit({"b.py": "b1\nb2 changed by one\nb3\nb4\nb5\nb6 by one\n"}, "one: b2", parent=fold.pr1,
                   ref="refs/pull/1/head")
    result = cli("union", "compose", "u", *fold.args())
    assert result.exit_code == 3 and "your recorded edit outside the hunks no longer applies" in result.stdout


def test_an_edit_given_up_at_its_stop_leaves_the_store_and_is_said_to(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path)
    _edit_then_move(cli, fold)
    (fold.scratch / "b.py").write_text("b1\nb2 changed by one\nb3\nb4\nb5\nb6 by one\n")   # the fold's version
    result = cli("union", "continue", "u", *fold.args())
    assert result.exit_code == 0, result.output
    assert "b.py: you left the file as the fold had it, without your recorded edit (pr/2): the edit is removed " \
           "from the store" in result.stderr
    assert [d["file"] for d in _fixups(fold)] == []
    # pr/2 now deletes b.py: the stop on that conflict shows no edit of the past (there is none)
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 15: "line 15 by two\n"}), "b.py": None}, "two: drop b.py",
                   parent=fold.pr2, ref="refs/pull/2/head")
    again = cli("union", "compose", "u", *fold.args())
    assert again.exit_code == 3 and "b.py  pr/1, pr/2  (not a content conflict" in again.stdout, again.output
    assert "recorded edit" not in again.stderr, again.stderr


def _noop_record(fold: Fold) -> Path:
    """The store as carrytool kept it before: b.py's edit given up at its stop, recorded as an edit that
    changes nothing (`conflict: fixup`, base and result the same)."""
    [path] = sorted((fold.manifest.parent / "resolutions" / "u" / "fixups").glob("*.json"))
    doc = json.loads(path.read_text())
    doc["base"] = doc["result"] = {"mode": "100644", "text": "b1\nb2 changed by one\nb3\nb4\nb5\nb6 by one\n"}
    doc["conflict"] = "fixup"
    path.write_text(json.dumps(doc))
    return path


def test_a_kept_edit_that_changes_nothing_is_said_so_at_a_stop_and_replaced(cli: Cli, tmp_path: Path) -> None:
    """helper-147: "your recorded edit (pr/3111) was made where the file merged ... It was:" and nothing."""
    fold = Fold(tmp_path)
    _edit_then_move(cli, fold)
    assert cli("union", "abort", "u", *fold.args()).exit_code == 0
    record = _noop_record(fold)
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 15: "line 15 by two\n"}), "b.py": None}, "two: drop b.py",
                   parent=fold.pr2, ref="refs/pull/2/head")
    result = cli("union", "compose", "u", *fold.args())
    assert result.exit_code == 3, result.output
    assert "b.py: the edit recorded there for pr/2 changes nothing (at an earlier stop you left the file as the " \
           "fold had it), so it settles nothing here and there is nothing to redo: decide the file; `union " \
           "continue` records what you leave in its place" in result.stderr
    assert "It was:" not in result.stderr
    (fold.scratch / "b.py").unlink()           # pr/2's deletion taken
    assert cli("union", "continue", "u", *fold.args()).exit_code == 0
    [doc] = _fixups(fold)
    assert doc["conflict"] == "other" and doc["result"] is None and record.exists()


def test_a_fold_that_finishes_removes_a_kept_edit_that_changes_nothing(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path)
    _edit_then_move(cli, fold)
    assert cli("union", "abort", "u", *fold.args()).exit_code == 0
    record = _noop_record(fold)
    result = cli("union", "compose", "u", *fold.args())
    assert result.exit_code == 0, result.output
    assert "b.py: removed the edit recorded there for pr/2 from the store: it changes nothing" in result.stderr
    assert not record.exists()
    assert fold.show(fold.ref(), "b.py") == b"b1\nb2 changed by one\nb3\nb4\nb5\nb6 by one\n"
