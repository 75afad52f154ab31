"""Next-step commands as printed: shell-quoted, repeating the `-m` and `--repo` the user gave.

A command the user copies from the output must run the same way from any directory, so the manifest
and repository options are repeated as absolute paths (and left out when they were the defaults).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

_IN_TEXT = re.compile(r"`carrytool ([a-z-]+)((?: [^`]*)?)`")
_OWN_OPTIONS = ("sync", "verify", "explain", "check", "union")   # the others print their own
_GIVEN = ("-m", "--manifest", "--repo")


@dataclass(frozen=True)
class Invocation:
    """The `-m` and `--repo` of the running command (None: the default was used)."""

    manifest: Path | None = None
    repo: Path | None = None

    @classmethod
    def of(cls, manifest: Path | None, repo: Path | None) -> Invocation:
        """Return the invocation for the options as parsed (`--repo .` is the default)."""
        return cls(manifest.resolve() if manifest else None,
                   repo.resolve() if repo is not None and repo != Path(".") else None)

    def options(self) -> list[str]:
        """Return the options a next-step command repeats."""
        out = ["-m", str(self.manifest)] if self.manifest else []
        return out + (["--repo", str(self.repo)] if self.repo else [])

    def command(self, *words: str) -> str:
        """Return `carrytool WORDS... [-m M] [--repo R]`, quoted for a POSIX shell."""
        return shlex.join(["carrytool", *words, *self.options()])

    def rewrite(self, text: str) -> str:
        """Return TEXT with every `` `carrytool sync|verify|explain|check|union ...` `` given this invocation's
        options (one that names its own `-m` or `--repo` is left as it is)."""
        if not self.options():
            return text

        def complete(match: re.Match[str]) -> str:
            if match.group(1) not in _OWN_OPTIONS:
                return match.group(0)
            try:
                words = shlex.split(match.group(2))
            except ValueError:
                return match.group(0)
            if any(word.split("=")[0] in _GIVEN for word in words):     # a command that says its own
                return match.group(0)
            return f"`{self.command(match.group(1), *words)}`"

        return _IN_TEXT.sub(complete, text)
