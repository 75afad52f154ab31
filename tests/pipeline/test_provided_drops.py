"""account_drops and drop_hint: a union's hunks left out, split by the `drops` its supersedes declare (helper-135)."""

from __future__ import annotations

from carrytool.manifest.model import Drop, Supersede
from carrytool.pipeline.drops import account_drops, drop_hint
from carrytool.pipeline.leftout import LeftOut

SLEEP = LeftOut("pr/1", "w.py", (7, 7), ("Worker.sleep",))
WAKE = LeftOut("pr/1", "w.py", (24, 26), ("Worker.wake_up", "Worker.wake_up.inner"))
OTHER = LeftOut("pr/2", "w.py", (30, 30), ("Worker.wake_up",))


def test_a_drop_covers_its_prs_hunks_in_its_scope_and_a_hunk_two_drops_cover_leaves_neither_stale() -> None:
    wake, whole, never = Drop("w.py", "a", "Worker.wake_up"), Drop("w.py", "b", "Worker"), Drop("x.py", "c")
    drops = account_drops([SLEEP, WAKE, OTHER], [Supersede(1, drops=(wake, whole, never)), Supersede(2)])
    assert drops.absent == (OTHER,)                       # pr/2 declares nothing: pr/1's drops are not its
    assert drops.dropped == ((SLEEP, whole), (WAKE, wake))
    assert drops.stale == ((1, never),)


def test_the_hint_is_the_yaml_for_the_item_as_it_is_written() -> None:
    assert drop_hint(WAKE, [Supersede(1)]) == \
        'write its supersedes item as `{pr: 1, drops: [{file: w.py, in: Worker.wake_up, why: "..."}]}`'
    assert drop_hint(SLEEP, [Supersede(1, head="abcdef1")]) == \
        'add `drops: [{file: w.py, in: Worker.sleep, why: "..."}]` to its supersedes item (pr: 1)'
    assert drop_hint(LeftOut("pr/1", "true", (1, 1), ()), [Supersede(1, drops=(Drop("x", "y"),))]) == \
        'add `{file: "true", why: "..."}` to the `drops:` of its supersedes item (pr: 1)'
