"""A recorded edit held back at a stop (it did not apply beside the new hunks) and not in the file as the user
left it: `union continue` refuses until the user redoes it or drops it by name (h198's sympy trial, h202:
`continue` exited 0 keeping it in the store, and the next refold with the same inputs stopped on it again)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.union.fold_scenario import A_BASE, Fold, TwoPrs, edited, fresh_fold, resolve_both

TAKE_THEIRS = re.compile(rb"<<<<<<< [^\n]*\n.*?=======\n(.*?)>>>>>>> [^\n]*\n", re.S)


@pytest.fixture
def fold(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Fold:
    return fresh_fold(tmp_path_factory, tmp_path)


def union(cli: Cli, fold: Fold, verb: str, *args: str):
    return cli("union", verb, "u", *args, *fold.args())


def _fixups(fold: Fold) -> list[dict]:
    folder = fold.manifest.parent / "resolutions" / "u" / "fixups"
    return sorted((json.loads(p.read_text()) for p in folder.glob("*.json")), key=lambda d: (d["item"], d["file"]))


def holding_back(cli: Cli, fold: Fold):
    """Stop, resolve a.py with line 10 edited by hand (outside the hunks), continue; pr/2 then moves onto line
    10, and the refold stops and holds the edit back: its result."""
    assert union(cli, fold, "compose").exit_code == 3
    resolve_both(fold.scratch / "a.py", outside=b"line 10 edited by hand\n")
    assert union(cli, fold, "continue").exit_code == 0
    fold.up.commit({"a.py": edited({3: "line 3 by two\n", 10: "line 10 by two v2\n", 15: "line 15 by two, v2\n"})},
                   "two: v2", parent=fold.pr2, ref="refs/pull/2/head")
    stop = union(cli, fold, "compose")
    assert stop.exit_code == 3 and "does not apply beside the new hunks" in stop.output, stop.output
    return stop


def held_back(cli: Cli, fold: Fold) -> bytes:
    """holding_back, then the new hunk resolved as pr/2 has it. Return that file."""
    stop = holding_back(cli, fold)
    assert "--drop-edit a.py" in stop.output
    resolved = TAKE_THEIRS.sub(rb"\1", (fold.scratch / "a.py").read_bytes())
    (fold.scratch / "a.py").write_bytes(resolved)
    return resolved


def test_continue_refuses_while_a_held_back_edit_is_neither_redone_nor_dropped(cli: Cli, fold: Fold) -> None:
    held_back(cli, fold)
    before = _fixups(fold)
    result = union(cli, fold, "continue")
    assert result.exit_code == 3, result.output
    assert "a.py: your recorded edit outside the conflict hunks (pr/2) is not in the file as you left it" \
        in result.output
    assert "@@ -9,3 +9,3 @@\n line 9\n-line 10\n+line 10 edited by hand\n line 11\n" in result.output
    assert "nothing was recorded" in result.output
    assert f"redo it in {fold.scratch / 'a.py'}, then: carrytool union continue u" in result.output
    assert f"carrytool union continue u --drop-edit a.py -m {fold.manifest}" in result.output
    assert _fixups(fold) == before and (fold.scratch / "a.py").exists()     # still stopped, the store untouched


@pytest.mark.parametrize("how", ["redo", "drop", "redo-another-way"])
def test_a_held_back_edit_redone_or_dropped_refolds_without_a_stop(cli: Cli, fold: Fold, how: str) -> None:
    resolved = held_back(cli, fold)
    if how == "redo":
        resolved = resolved.replace(b"line 10 by two v2\n", b"line 10 edited by hand\n")
    elif how == "redo-another-way":     # pr/2's line 10 and the edit, together: not the recorded edit's text
        resolved = resolved.replace(b"line 10 by two v2\n", b"line 10 by two v2, edited by hand\n")
    (fold.scratch / "a.py").write_bytes(resolved)
    if how == "redo-another-way":
        assert union(cli, fold, "continue").exit_code == 3     # the old edit does not apply: dropped by name
    result = union(cli, fold, "continue", *(["--drop-edit", "a.py"] if how != "redo" else []))
    assert result.exit_code == 0, result.output
    assert "is not in the file as you left it" not in result.output
    dropped = "a.py: your recorded edit outside the conflict hunks (pr/2) is dropped from the store, as you asked"
    assert result.output.count(dropped) == (how != "redo"), result.output
    if how == "drop":
        assert "-line 10\n+line 10 edited by hand\n" in result.output        # what goes, shown once
        assert [d for d in _fixups(fold) if d["file"] == "a.py"] == []
    assert fold.show(fold.ref(), "a.py") == resolved
    again = union(cli, fold, "compose")
    assert again.exit_code == 0, again.output
    assert fold.show(fold.ref(), "a.py") == resolved
    assert "recorded edit" not in again.output and "dropped" not in again.output     # said once, at continue


def test_drop_edit_names_only_a_held_back_edit(cli: Cli, fold: Fold) -> None:
    held_back(cli, fold)
    result = union(cli, fold, "continue", "--drop-edit", "b.py")
    assert result.exit_code == 2, result.output
    assert "b.py: no recorded edit is held back there at this stop (held back: a.py)" in result.output
    assert (fold.scratch / "a.py").exists()


def test_drop_edit_refusal_hint_keeps_the_other_options_given(cli: Cli, fold: Fold) -> None:
    """h236: the refusal of a --drop-edit naming no held-back edit printed `carrytool union continue NAME -m ...`
    without the --take and the valid --drop-edit the user gave: run as printed, it refused the leftover again or
    stopped on the held-back edit."""
    held_back(cli, fold)
    result = union(cli, fold, "continue", "--drop-edit", "a.py", "--drop-edit", "b.py", "--take", "a.py.orig")
    assert result.exit_code == 2, result.output
    hint = [line for line in result.output.splitlines() if "names a held-back edit to drop" in line]
    assert len(hint) == 1 and " --drop-edit a.py --take a.py.orig " in hint[0], result.output
    assert "b.py --" not in hint[0] and not hint[0].rstrip().endswith("b.py"), hint


@pytest.mark.parametrize("form", ["absolute", "dot"])
def test_drop_edit_takes_the_path_as_the_refusal_printed_it(cli: Cli, fold: Fold, form: str) -> None:
    """The refusal says "redo it in <scratch>/a.py": `--drop-edit` given that path (or `./a.py`) drops the edit, as
    `--take` takes a leftover by its printed path (h226); it was refused, "no recorded edit is held back there"."""
    resolved = held_back(cli, fold)
    refused = union(cli, fold, "continue")
    assert refused.exit_code == 3 and f"redo it in {fold.scratch / 'a.py'}," in refused.output, refused.output
    path = str(fold.scratch / "a.py") if form == "absolute" else "./a.py"
    result = union(cli, fold, "continue", "--drop-edit", path)
    assert result.exit_code == 0, result.output
    assert "a.py: your recorded edit outside the conflict hunks (pr/2) is dropped from the store" in result.output
    assert [d for d in _fixups(fold) if d["file"] == "a.py"] == [] and fold.show(fold.ref(), "a.py") == resolved


def test_a_drop_killed_after_it_recorded_goes_on_when_run_again(cli: Cli, fold: Fold) -> None:
    """The store lost the edit before the kill: the same command, run again, still names it and goes on."""
    import signal

    resolved = held_back(cli, fold)
    command = ["union", "continue", "u", "--drop-edit", "a.py", *fold.args()]
    proc = fold.run(*command, env={"CARRYTOOL_CRASH_AT": "continue:recorded"})
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr)
    proc = fold.run(*command)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert fold.show(fold.ref(), "a.py") == resolved
    assert union(cli, fold, "compose").exit_code == 0


@pytest.mark.parametrize("leftover", [False, True], ids=["drops", "drops-and-a-take"])
def test_the_refusals_commands_keep_the_drops_already_given(tmp_path: Path, cli: Cli, leftover: bool) -> None:
    """Edits held back in two files; the user drops one and forgets the other: the refusal's commands carry the
    drop already given, and the printed one runs (h209: it named d.py alone, and run as printed refused again on
    a.py, back and forth). So too a leftover taken on purpose (`--take`): the commands forgot it, and run as
    printed, the leftover was refused."""
    files = ("a.py", "d.py")
    two = TwoPrs(tmp_path, {f: A_BASE for f in files},
                 {f: edited({3: "line 3 by one\n", 15: "line 15 by one\n"}) for f in files},
                 {f: edited({3: "line 3 by two\n", 15: "line 15 by two\n"}) for f in files})

    def run(verb: str, *args: str):
        return cli("union", verb, "u", *args, *two.args())

    assert run("compose").exit_code == 3
    for name in files:
        resolve_both(two.scratch / name, outside=f"line 10 edited in {name}\n".encode())
    assert run("continue").exit_code == 0
    two.up.commit({f: edited({3: "line 3 by two\n", 10: "line 10 by two v2\n", 15: "line 15 by two, v2\n"})
                   for f in files}, "two: v2", parent=two.pr2, ref="refs/pull/2/head")
    assert run("compose").exit_code == 3
    for name in files:
        (two.scratch / name).write_bytes(TAKE_THEIRS.sub(rb"\1", (two.scratch / name).read_bytes()))
    takes = ("--take", "notes.txt~") if leftover else ()
    if leftover:
        (two.scratch / "notes.txt~").write_text("kept on purpose\n")
    refused = run("continue", "--drop-edit", "a.py", *takes)
    assert refused.exit_code == 3, refused.output
    assert "a.py: your recorded edit" not in refused.output and "d.py: your recorded edit" in refused.output
    flat = " ".join(refused.output.split())
    printed = re.search(r"drop it from the store: (carrytool union continue .*? --repo \S+)", flat)
    assert printed and "--drop-edit a.py --drop-edit d.py" in printed.group(1), refused.output
    take = " --take 'notes.txt~'" if leftover else ""
    assert f"then: carrytool union continue u --drop-edit a.py{take} -m" in flat, refused.output
    assert (take in printed.group(1)) if leftover else "--take" not in printed.group(1), refused.output
    again = cli(*shlex.split(printed.group(1))[1:])
    assert again.exit_code == 0, again.output
    assert run("compose").exit_code == 0


def test_the_stops_drop_notice_prints_the_whole_command_and_it_runs(cli: Cli, fold: Fold) -> None:
    """The stop's notice on a recorded edit that does not apply beside the new hunks named `union continue
    --drop-edit a.py`, without carrytool, the union's name or the -m/--repo the stop's own hint repeats (h237):
    pasted, it did not run. It prints the command as the hint does, and that command drops the edit."""
    stop = holding_back(cli, fold)
    command = f"carrytool union continue u --drop-edit a.py -m {fold.manifest} --repo {fold.work}"
    flat = " ".join(stop.output.split())
    assert f"or drop it: `{command}` (`union continue` refuses while it is neither)" in flat, stop.output
    assert f"then: carrytool union continue u -m {fold.manifest} --repo {fold.work}" in flat     # the hint's form
    (fold.scratch / "a.py").write_bytes(TAKE_THEIRS.sub(rb"\1", (fold.scratch / "a.py").read_bytes()))
    result = cli(*shlex.split(command)[1:])
    assert result.exit_code == 0, result.output
    assert "a.py: your recorded edit outside the conflict hunks (pr/2) is dropped from the store" in result.output
    assert [d for d in _fixups(fold) if d["file"] == "a.py"] == []
