"""The errors carrytool raises; each class maps to one exit code of the contract (see cli.py)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_VERIFY = 1
EXIT_INPUT = 2
EXIT_CONFLICT = 3
EXIT_ENV = 4


class CarryError(Exception):
    """Base of every error carrytool reports to a user.

    `message` says what is wrong, `where` where (file:line, entry id, path) and `hint` the next command.
    """

    exit_code = EXIT_INPUT

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class InputError(CarryError):
    """Bad input: a manifest, a lock, an entry or a command-line value (exit 2)."""

    exit_code = EXIT_INPUT


class ManifestError(InputError):
    """The manifest is not valid v1 (exit 2).

    One error, or several found in one pass (`errors`, in manifest order): then the first one is this
    error's own message and place, and `str()` lists up to `SHOWN` of them and counts the rest.
    """

    SHOWN = 50

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None,
                 errors: list[ManifestError] | None = None) -> None:
        super().__init__(message, where=where, hint=hint)
        self.errors: list[ManifestError] = errors or [self]

    @classmethod
    def of(cls, errors: list[ManifestError]) -> ManifestError:
        """Return one error standing for ERRORS (flattened; the first gives message, place and hint)."""
        flat = [one for error in errors for one in error.errors]
        if len(flat) == 1:
            return flat[0]
        first = flat[0]
        return cls(first.message, where=first.where, hint=first.hint, errors=flat)

    def __str__(self) -> str:
        if len(self.errors) == 1:
            return super().__str__()
        shown = [CarryError.__str__(error).replace("\n", "\n  ") for error in self.errors[:self.SHOWN]]
        more = len(self.errors) - len(shown)
        tail = [f"... and {more} more"] if more else []
        return f"{len(self.errors)} errors in the manifest:\n  " + "\n  ".join(shown + tail)


class LockMismatch(InputError):
    """`--locked` was asked for, but the lock does not match the manifest (exit 2)."""


class UnknownRef(InputError):
    """A PR, commit or pinned head that cannot be found (exit 2)."""


class PolicyViolation(InputError):
    """An entry edits a path another entry owns, or a carry touches precompiled paths (exit 2)."""


class VerificationFailed(CarryError):
    """A check failed: an assert, a dropped or clobbered hunk, a union scope violation (exit 1)."""

    exit_code = EXIT_VERIFY


class ConflictError(CarryError):
    """An entry conflicts under `on_conflict: fail` (exit 3)."""

    exit_code = EXIT_CONFLICT


class EnvironmentProblem(CarryError):
    """The environment stops us: git missing or too old, network, locks, checked-out branch (exit 4)."""

    exit_code = EXIT_ENV


class GitError(EnvironmentProblem):
    """A git command failed in a way the user's environment has to fix (exit 4)."""

    def __init__(self, message: str, *, stderr: str = "", where: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, where=where, hint=hint)
        self.stderr = stderr

    def __str__(self) -> str:
        text = super().__str__()
        detail = self.stderr.strip()
        if detail:
            text += "\n  git said: " + "\n            ".join(_said(detail.splitlines()))
        return text


def _said(lines: list[str]) -> list[str]:
    """The last six lines of git's stderr before any usage text it printed (after `fatal: need two commit
    ranges`, say, git prints its whole usage: the reason would scroll away); a tab (push --porcelain
    separates its fields with them) is a space, not an escaped control character."""
    usage = next((n for n, line in enumerate(lines) if line.startswith("usage: ")), len(lines))
    kept = [line for line in lines[:usage] if line.strip()] or lines
    return [line.replace("\t", " ") for line in kept[-6:]]


class FetchError(GitError):
    """A fetch from a remote failed (exit 4)."""


class PushError(GitError):
    """A push failed or lost its lease (exit 4)."""


class LockHeld(EnvironmentProblem):
    """Another carrytool process holds the repository's lock (exit 4)."""


class FoldUnderWay(EnvironmentProblem):
    """A fold of the union is stopped, not yet continued or aborted: its state holds the union (exit 4, as a
    held lock; helper-128: it was the conflict code, 3). MANIFEST: the one that fold was started from (None:
    a state written before it was recorded)."""

    def __init__(self, message: str, *, hint: str | None = None, manifest: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.manifest = manifest


class RefMoved(EnvironmentProblem):
    """A ref changed under us between reading and writing it (exit 4)."""
