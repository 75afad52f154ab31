"""Where `union new` puts the union (helper-133), and what sync says when a union is not applied."""

from __future__ import annotations

from pathlib import Path

import pytest

from carrytool.errors import ManifestError
from carrytool.manifest.edit import add_union
from tests.conftest import Cli
from tests.union.fold_scenario import UNION, Fold, edited, resolve_both

ADDED = "  - carry: u\n    patch: unions/u.patch\n    supersedes: [1, 2]\n"


def sympy(tmp_path: Path, *, union: str = "") -> Fold:
    """The sympy trial: PRs 1 and 2 (a union's), then pr/3, which changes a.py's line 10 as the union's
    hand resolution does not, and pr/4, a.py's line 22 alone; conflicts are skipped."""
    fold = Fold(tmp_path, union="  - pr: 3\n  - pr: 4\n" + union)
    fold.up.commit({"a.py": edited({10: "line 10 by three\n"})}, "three", parent=fold.base, ref="refs/pull/3/head")
    fold.up.commit({"a.py": edited({22: "line 22 by four\n"})}, "four", parent=fold.base, ref="refs/pull/4/head")
    text = fold.manifest.read_text()
    fold.manifest.write_text(text.replace("entries:\n", "policy: {on_conflict: skip}\nentries:\n"))
    return fold


def fold_by_hand(cli: Cli, fold: Fold, *verb: str) -> bytes:
    result = cli("union", *verb, *fold.args())
    assert result.exit_code == 3, result.stdout + result.stderr
    resolved = resolve_both(fold.scratch / "a.py", outside=b"line 10 by hand\n")
    done = cli("union", "continue", "u", *fold.args())
    assert done.exit_code == 0, done.stdout + done.stderr
    return resolved


def test_union_new_takes_the_place_of_its_first_pr_and_sync_applies_it_there(cli: Cli, tmp_path: Path) -> None:
    """helper-133 (sympy): `union new` appended the union after pr/3, which sync then applied first; the union
    conflicted with it, was skipped, and the two PRs it supersedes were gone from a green run. With
    `--in-place`, in pr/1's place, the union is applied and pr/3, which conflicts with it, is the one skipped;
    pr/4 applies after."""
    fold = sympy(tmp_path)
    before = fold.manifest.read_text()
    result = cli("union", "new", "u", "2", "1", "--in-place", *fold.args())
    # on stdout, before the stop message (helper-146: on stderr it was read after it)
    said = " ".join(result.stdout.split())
    assert said.startswith(f"added carry/u to {fold.manifest}, before pr/1 (the first of its PRs among the entries)") \
        and said.index("added carry/u") < said.index("the fold stopped"), result.stdout
    assert "added carry/u" not in result.stderr
    assert fold.manifest.read_text() == before.replace("  - pr: 1", ADDED.replace("[1, 2]", "[2, 1]") + "  - pr: 1")
    resolved = resolve_both(fold.scratch / "a.py", outside=b"line 10 by hand\n")
    assert cli("union", "continue", "u", *fold.args()).exit_code == 0
    status = cli("union", "status", "u", *fold.args())
    assert status.exit_code == 0 and "up to date" in status.stdout, status.stdout + status.stderr
    code, report = cli.json("sync", *fold.args())
    assert code == 0, report
    states = {e["id"]: (e["status"], e.get("reason")) for e in report["entries"]}
    assert [e["id"] for e in report["entries"]] == ["carry/u", "pr/1", "pr/2", "pr/3", "pr/4"]
    assert states == {"carry/u": ("applied", None), "pr/1": ("skipped", "superseded"),
                      "pr/2": ("skipped", "superseded"), "pr/3": ("conflict", "conflict"), "pr/4": ("applied", None)}
    assert not [w for w in report["warnings"] if w["kind"] == "provided-absent"], report["warnings"]
    assert fold.show("refs/heads/dev", "a.py") == resolved.replace(b"line 22\n", b"line 22 by four\n")
    assert fold.show("refs/heads/dev", "b.py") == b"b1\nb2\nb3\nb4\nb5\nb6 by one\n"
    again = cli("union", "compose", "u", *fold.args())        # a refold in that place asks nothing
    assert again.exit_code == 0, again.stdout + again.stderr


def test_abort_after_union_new_in_a_prs_place_puts_the_manifest_back(cli: Cli, tmp_path: Path) -> None:
    fold = sympy(tmp_path)
    before = fold.manifest.read_bytes()
    assert cli("union", "new", "u", "1", "2", "--in-place", *fold.args()).exit_code == 3
    status = cli("union", "status", "u", *fold.args())
    assert "stopped" in status.stdout or "under way" in status.stdout, status.stdout + status.stderr
    aborted = cli("union", "abort", "u", *fold.args())
    assert aborted.exit_code == 0 and "took carry/u out of" in aborted.stdout, aborted.stdout + aborted.stderr
    assert fold.manifest.read_bytes() == before


def test_a_union_none_of_whose_prs_is_an_entry_is_appended(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path, union="")
    fold.up.commit({"c.txt": "c by seven\n"}, "seven", parent=fold.base, ref="refs/pull/7/head")
    before = fold.manifest.read_text()
    result = cli("union", "new", "v", "7", "--in-place", *fold.args())
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "as the last entry (none of its PRs is an entry)" in " ".join(result.stdout.split())
    assert fold.manifest.read_text().startswith(before + "  - carry: v\n    patch: unions/v.patch\n")



def test_union_new_appends_the_union_by_default_as_the_contract_says(cli: Cli, tmp_path: Path) -> None:
    """The contract: `union new` adds the entry "at the end of `entries`"; `--in-place` is the option."""
    fold = sympy(tmp_path)
    before = fold.manifest.read_text()
    result = cli("union", "new", "u", "2", "1", *fold.args())
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "as the last entry (`--in-place` puts it where its first PR stands)" in " ".join(result.stdout.split())
    assert fold.manifest.read_text().startswith(before) and fold.manifest.read_text().endswith(
        "  - carry: u\n    patch: unions/u.patch\n    supersedes: [2, 1]\n"), fold.manifest.read_text()

@pytest.mark.parametrize(("before", "text", "expected"), [
    # the comment right over pr/2 stays with it; the one after a blank line, and pr/1's own, stay where they are
    (1, "version: 1\nentries:\n  # first\n  - pr: 1  # one\n\n  # about two\n  # more\n  - pr: 2\n  - pr: 3\n",
     "version: 1\nentries:\n  # first\n  - pr: 1  # one\n\n  - carry: u\n    commit: 0000000   # carrytool union "
     "compose sets it\n    supersedes: [2]\n  # about two\n  # more\n  - pr: 2\n  - pr: 3\n"),
    # a block scalar's line that reads like a comment is the value of the entry before, not pr/2's comment
    (1, "entries:\n- pr: 1\n  title: |\n    # not a comment\n- pr: 2\n",
     "entries:\n- pr: 1\n  title: |\n    # not a comment\n- carry: u\n  commit: 0000000   # carrytool union "
     "compose sets it\n  supersedes: [2]\n- pr: 2\n"),
    # the first entry (a comment on the `entries:` line stays there); an entry whose dash is alone on its line
    (0, "entries:   # the list\n    - pr: 2\n", "entries:   # the list\n    - carry: u\n      commit: 0000000   # "
     "carrytool union compose sets it\n      supersedes: [2]\n    - pr: 2\n"),
    (1, "entries:\n    - pr: 1\n    -\n      pr: 2\n", "entries:\n    - pr: 1\n    - carry: u\n      commit: 0000000"
     "   # carrytool union compose sets it\n      supersedes: [2]\n    -\n      pr: 2\n"),
])
def test_add_union_before_an_entry_keeps_the_layout(before: int, text: str, expected: str) -> None:
    assert add_union(text, "u", [2], {}, patch=None, before=before) == expected


def test_add_union_before_an_entry_that_is_not_there_refuses() -> None:
    with pytest.raises(ManifestError):
        add_union("entries:\n- pr: 1\n", "u", [2], {}, patch=None, before=3)


def test_a_union_not_applied_says_its_prs_are_lost(cli: Cli, tmp_path: Path) -> None:
    """The union after pr/3, as `union new` put it before (and as a hand-written manifest may): it conflicts
    with pr/3 and is skipped; pr/1 and pr/2, skipped as superseded, said `by carry/u` as when all is well.
    Each says it is lost with the union, and so does the outcome line, the exit code unchanged (0)."""
    fold = sympy(tmp_path, union=UNION)
    fold_by_hand(cli, fold, "compose", "u")
    result = cli("sync", *fold.args())
    assert result.exit_code == 0, result.stdout + result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.startswith("  ")}
    for pr in ("pr/1", "pr/2"):
        assert "superseded by carry/u, which was not applied (conflict): its change is not in the result (a.py" \
            in rows[pr], result.stdout
    outcome = result.stdout.splitlines()[-1]
    assert outcome.startswith("ok: ") and "; but carry/u was not applied (conflict): the result lacks changes " \
        "of pr/1, pr/2, which it supersedes (see the provided-absent warnings)" in outcome, outcome
    quiet = cli("sync", "-q", *fold.args())
    assert "carry/u was not applied" in quiet.stdout.splitlines()[-1], quiet.stdout
    code, report = cli.json("sync", *fold.args())
    entries = {e["id"]: e for e in report["entries"]}
    assert code == 0 and entries["carry/u"]["status"] == "conflict"
    assert entries["pr/2"]["detail"].startswith("superseded by carry/u, which was not applied (conflict): its "
                                                "change is not in the result (a.py")


def test_a_partial_union_not_applied_says_the_paths_are_lost(cli: Cli, tmp_path: Path) -> None:
    """pr/1 is applied without b.py, which the union provides; the union (pr/2's a.py) conflicts with pr/1's
    a.py and is skipped: b.py's change is in no entry, and pr/1's row says so, not `without b.py` alone."""
    partial = "  - carry: u\n    patch: unions/u.patch\n    supersedes: [2, {pr: 1, paths: [b.py]}]\n"
    fold = sympy(tmp_path, union=partial)
    done = cli("union", "compose", "u", *fold.args())
    assert done.exit_code == 0, done.stdout + done.stderr
    code, report = cli.json("sync", *fold.args())
    entries = {e["id"]: e for e in report["entries"]}
    assert code == 0 and entries["carry/u"]["status"] == "conflict" and entries["pr/1"]["status"] == "applied"
    assert entries["pr/1"]["detail"] == "superseded by carry/u, which was not applied (conflict): its change to " \
        "b.py is not in the result (b.py)", entries["pr/1"]
    result = cli("sync", *fold.args())
    row = next(line for line in result.stdout.splitlines() if line.startswith("  pr/1 "))
    assert "without b.py (from carry/u); superseded by carry/u, which was not applied (conflict)" in row, result.stdout
