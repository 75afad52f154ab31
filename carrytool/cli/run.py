"""Running a command body: a CarryError is its exit code and one line, an interrupt (Ctrl-C, SIGTERM) exit
130 and what it left, never a traceback; notes on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

import typer

from carrytool.cli.options import _invocation, _State
from carrytool.errors import CarryError


def _diag(message: str) -> None:
    if not _State.quiet:
        _say(message)


def _say(message: str) -> None:
    """A note said even with -q: what a union fold tells (an edit it could not apply, a resolution it did not
    need, the manifest it left as it was) is about the user's work (helper-98: -q hid them all)."""
    from carrytool.render.safe import printable

    print(printable(message), file=sys.stderr)


def _run(body: Callable[[], int], *, interrupted: str = "nothing was written") -> None:
    """Run a command body; map CarryError to its exit code with a message, never a traceback. INTERRUPTED:
    what an interrupt (Ctrl-C) leaves, in words."""
    try:
        code = body()
    except CarryError as exc:
        from carrytool.gitlayer.urls import redact
        from carrytool.render.safe import printable

        # no credential of a URL, ever; control characters escaped; hints repeat the user's -m/--repo
        print(f"carrytool: error: {printable(_invocation().rewrite(redact(str(exc))))}", file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt as exc:
        _interrupted(exc, interrupted)
    except Exception as exc:
        # what an interrupt raised on its way out (a thread starting, a pipe closed under a read: helper-103)
        cause = _interrupt_in(exc)
        if cause is None:
            raise
        _interrupted(cause, interrupted)
    raise typer.Exit(code)


def _interrupted(exc: KeyboardInterrupt, otherwise: str) -> NoReturn:
    print(f"carrytool: interrupted{_by(exc)}; {_said(exc, otherwise)}", file=sys.stderr)
    exc.carrytool_said = True        # type: ignore[attr-defined]  # (main says it when nothing else did)
    raise typer.Exit(130) from None


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job cancelled, `timeout`): handled as Ctrl-C is, so that every clean-up runs (helper-108:
    without it the process ended on the spot, and bisect's temporary tree stayed)."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _by(exc: BaseException) -> str:
    return " (SIGTERM)" if isinstance(exc, Terminated) else ""


def _said(exc: BaseException, otherwise: str) -> str:
    """What the run had done when interrupted: what the code it interrupted noted on the exception
    (`carrytool_done`: sync, after the branch moved or while it pushed), else OTHERWISE."""
    return getattr(exc, "carrytool_done", None) or otherwise


def _interrupt_in(exc: BaseException) -> KeyboardInterrupt | None:
    """The interrupt (Ctrl-C, SIGTERM) being handled when EXC was raised: the first in its context chain."""
    seen: set[int] = set()
    found: BaseException | None = exc
    while found is not None and id(found) not in seen:
        if isinstance(found, KeyboardInterrupt):
            return found
        seen.add(id(found))
        found = found.__context__
    return None
