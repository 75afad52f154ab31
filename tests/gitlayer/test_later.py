"""Later: work in a thread of its own whose outcome the caller takes afterwards, in its own thread."""

from __future__ import annotations

import threading

import pytest

from carrytool.gitlayer.later import Later


def test_the_result_is_what_the_work_returned_once_it_ended() -> None:
    go = threading.Event()
    job = Later(lambda: (go.wait(5), threading.current_thread().name)[1], name="carrytool-test")
    assert job.thread.is_alive()
    go.set()
    assert job.result() == "carrytool-test" and not job.thread.is_alive()
    assert job.result() == "carrytool-test"          # asked again: the same answer


def test_what_the_work_raised_is_raised_in_the_callers_thread() -> None:
    def work() -> None:
        raise KeyError("in the thread")

    job = Later(work)
    with pytest.raises(KeyError, match="in the thread"):
        job.result()
    with pytest.raises(KeyboardInterrupt):
        Later(lambda: (_ for _ in ()).throw(KeyboardInterrupt)).result()   # even what is no Exception


def test_an_interrupted_join_leaves_the_work_running_and_joinable() -> None:
    go = threading.Event()
    job = Later(lambda: go.wait(5))
    join = job.thread.join

    def interrupted(*args: object) -> None:
        job.thread.join = join               # type: ignore[method-assign]
        raise KeyboardInterrupt

    job.thread.join = interrupted            # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        job.result()
    assert job.thread.is_alive()
    go.set()
    assert job.result() is True and not job.thread.is_alive()
