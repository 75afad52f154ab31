"""The count of files resolved from the store is the fold's, whether it finished in `union compose` or in
`union continue` after a stop (h244, from h239's trial on sqlalchemy: a compose stopped saying "reused from the
store: <file>", and the continue that finished that same fold said no file was resolved from the store)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli
from tests.union.fold_scenario import Fold, resolve_both
from tests.union.test_union_scenarios import by_hand, union


def test_a_file_the_store_resolved_at_the_stop_is_counted_when_continue_finishes(cli: Cli, tmp_path: Path) -> None:
    fold = Fold(tmp_path, extra={"d.py": "d1\nd2\nd3\n"})
    by_hand(cli, fold)                                  # a.py's conflict recorded in the store
    # both PRs pushed again, each also changing d.py: a new conflict there, a.py's as recorded
    fold.up.commit({"d.py": "d1\nd2 by one\nd3\n"}, "one: d", parent=fold.pr1, ref="refs/pull/1/head")
    fold.up.commit({"d.py": "d1\nd2 by two\nd3\n"}, "two: d", parent=fold.pr2, ref="refs/pull/2/head")
    stopped = union(cli, fold, "compose")
    assert stopped.exit_code == 3, stopped.output
    assert "  d.py  pr/1, pr/2" in stopped.stdout, stopped.stdout
    assert "\nso far: 1 conflicted file resolved from the store (a.py); your recorded edit applied in 1 " \
        "file with no conflict (b.py)\n" in stopped.stdout, stopped.stdout
    resolve_both(fold.scratch / "d.py")
    finished = union(cli, fold, "continue")
    assert finished.exit_code == 0, finished.output
    assert "; 1 conflicted file resolved from the store; your recorded edit applied in 1 file with no " \
        "conflict (b.py)\n" in finished.stdout, finished.stdout
    # the same fold again, now with d.py recorded too: both from the store, and nothing asked
    again = union(cli, fold, "compose")
    assert again.exit_code == 0, again.output
    assert "; 2 conflicted files resolved from the store; your recorded edit applied in 1 file with no " \
        "conflict (b.py)\n" in again.stdout, again.stdout
