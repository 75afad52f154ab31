"""Work that runs in a thread of its own while the caller goes on, and whose outcome the caller takes later.

carrytool overlaps git's work with its own: patches read while composing (Git.prefetch_patches), the
composed pack indexed while the landing checks read (Git.migrate_objects), half of a large batch of
merges in a second merge-tree (Git.merge_trees), explain's parsing beside composing (review.overlap).
Each is a `Later`. Its thread is known until it was joined: a wait that a
Ctrl-C interrupts leaves it known, and the next wait (the one `Git.close` makes before it removes the
scratch directory such a thread reads) joins it again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Later(Generic[T]):
    """WORK, started now in a daemon thread (named NAME); `result` waits for it and returns what it
    returned, or raises what it raised, in the caller's thread."""

    def __init__(self, work: Callable[[], T], *, name: str | None = None) -> None:
        self._outcome: tuple[bool, object] | None = None
        self.thread = threading.Thread(target=self._run, args=(work,), name=name, daemon=True)
        self.thread.start()

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._outcome = (True, work())
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread, by result
            self._outcome = (False, exc)

    def join(self) -> None:
        """Wait for the work to end. Interrupted, the work goes on, and may be joined again."""
        self.thread.join()

    def result(self) -> T:
        """What the work returned (waiting for it first); what it raised is raised here."""
        self.join()
        assert self._outcome is not None
        done, value = self._outcome
        if not done:
            raise value  # type: ignore[misc]
        return value  # type: ignore[return-value]
