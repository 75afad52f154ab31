"""Next-step commands as printed: shell-quoted, repeating the `-m` and `--repo` the user gave.

A command the user copies from the output must run the same way from any directory, so the manifest
and repository options are repeated as absolute paths (and left out when they were the defaults).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def union_new_command(invocation: Invocation, entry_ids: Sequence[str]) -> str | None:
    """Return `carrytool union new union-A-B A B` (numbers ascending) to fold the PRs ENTRY_IDS into a new union,
    as bisect and explain's union suggestion print it; None when one of them is not a PR (a carry cannot be
    superseded)."""
    if not entry_ids or not all(i.startswith("pr/") for i in entry_ids):
        return None
    numbers = sorted((i.removeprefix("pr/") for i in entry_ids), key=int)
    return invocation.command("union", "new", f"union-{'-'.join(numbers)}", *numbers)


def suggestion_command(suggestion: Mapping[str, Any], invocation: Invocation) -> str | None:
    """Return the command that carries out one of explain's suggestions: `union new` for a union of PRs (a fold
    into an existing union, or a group holding a fork carry, has none)."""
    if suggestion.get("kind") != "union":
        return None
    return union_new_command(invocation, suggestion.get("entries") or [])


def with_suggestion_commands(report: dict[str, Any], invocation: Invocation) -> dict[str, Any]:
    """Return explain's JSON REPORT with `command` on each suggestion that has one (also in the stories)."""
    said: dict[int, dict[str, Any]] = {}

    def commanded(item: dict[str, Any]) -> dict[str, Any]:
        if id(item) not in said:
            command = suggestion_command(item, invocation)
            said[id(item)] = {**item, "command": command} if command else item
        return said[id(item)]

    out = {**report, "suggestions": [commanded(s) for s in report.get("suggestions", [])]}
    if "stories" in report:
        out["stories"] = [{**story, "suggestions": [commanded(s) for s in story.get("suggestions", [])]}
                          for story in report["stories"]]
    return out
