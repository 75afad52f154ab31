"""`wait_exit`: waiting for a git process to end with a timeout, without Popen's polling sleeps."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from carrytool.gitlayer import env
from carrytool.gitlayer.env import wait_exit


def _sleeper(seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no pidfd here: Popen's own wait is used")
def test_it_waits_without_polling_and_times_out_as_popen_does(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sleep(_seconds: float) -> None:
        raise AssertionError("Popen polled (slept) while waiting")

    monkeypatch.setattr(subprocess.time, "sleep", no_sleep)
    ending = _sleeper(0.2)
    wait_exit(ending, 30)                         # Popen.wait(timeout) would sleep in steps here
    assert ending.returncode == 0
    wait_exit(ending, 30)                         # already waited for: at once
    slow = _sleeper(30)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_exit(slow, 0.1)
        assert slow.poll() is None
    finally:
        slow.kill()
        slow.wait()


def test_without_pidfd_it_is_popen_s_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(env.os, "pidfd_open", raising=False)
    ending = _sleeper(0.05)
    wait_exit(ending, 30)
    assert ending.returncode == 0
    slow = _sleeper(30)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_exit(slow, 0.1)
    finally:
        slow.kill()
        slow.wait()
