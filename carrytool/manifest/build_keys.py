"""Checking a manifest mapping against the key table (manifest.SCHEMA): unknown and missing keys, each
value's type, and the errors that name key path and line; for build._Builder."""

from __future__ import annotations

import difflib
import re
from typing import Any

from carrytool.errors import ManifestError
from carrytool.manifest.model import _HEX, SCHEMA, Key
from carrytool.manifest.yamlload import YList, YMap

MAX_INT = 2**63 - 1     # PR numbers and counts: what every forge and git can hold


class _Keys:
    """A mapping's keys and values checked against SCHEMA, and the errors that name key path and line (a
    mixin of build._Builder)."""

    # -- error helpers ---------------------------------------------------------------------------------
    def fail(self, keypath: str, line: int | None, message: str, hint: str | None = None) -> ManifestError:
        where = f"{self.path}:{line}" if line else str(self.path)
        return ManifestError(f"{keypath}: {message}" if keypath else message, where=where, hint=hint)

    def section(self, data: Any, name: str, keypath: str, line: int | None) -> YMap:
        problems = self.section_problems(data, name, keypath, line)
        if problems:
            raise ManifestError.of([error for _, error in problems])
        return data

    def section_problems(self, data: Any, name: str, keypath: str,
                         line: int | None) -> list[tuple[str, ManifestError]]:
        """Return every (key, error) of a mapping: unknown keys, missing required keys, wrong types."""
        if not isinstance(data, YMap):
            return [("", self.fail(keypath, getattr(data, "line", line), f"must be a mapping, got {_kind(data)}"))]
        keys = {k.name: k for k in SCHEMA[name]}
        problems: list[tuple[str, ManifestError]] = []
        for key in data:
            if key not in keys:
                close = difflib.get_close_matches(key, list(keys), n=1)
                hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(keys)}"
                problems.append((key, self.fail(_join(keypath, key), data.key_lines[key], f"unknown key '{key}'",
                                                hint)))
        for key in keys.values():
            if key.required and key.name not in data:
                problems.append((key.name, self.fail(_join(keypath, key.name), data.line,
                                                     f"is required (in {keypath or 'the manifest'})")))
        for key, value in data.items():
            if key in keys:
                try:
                    self.check_type(keys[key], value, _join(keypath, key), data.key_lines[key], data.raw.get(key))
                except ManifestError as exc:
                    problems.append((key, exc))
        return problems

    def check_type(self, key: Key, value: Any, keypath: str, line: int, raw: str | None) -> None:
        expected = {"int": "an integer", "bool": "true or false", "map": "a mapping", "list": "a list"}
        if key.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.fail(keypath, line, f"must be {expected['int']}, got {_show(value, raw)}")
            if value < 0:
                raise self.fail(keypath, line, f"must not be negative, got {value}")
            if value > MAX_INT:
                raise self.fail(keypath, line, f"is too large ({len(str(value))} digits; at most {MAX_INT})")
        elif key.type == "bool":
            if not isinstance(value, bool):
                raise self.fail(keypath, line, f"must be {expected['bool']}, got {_show(value, raw)}")
        elif key.type == "map":
            if not isinstance(value, YMap):
                raise self.fail(keypath, line, f"must be {expected['map']}, got {_kind(value)}")
        elif key.type == "list":
            if not isinstance(value, YList):
                raise self.fail(keypath, line, f"must be {expected['list']}, got {_kind(value)}")
        elif key.type == "entry":      # `entry: 14260` is read as a number by YAML (helper-91: refused)
            # a number as written in decimal digits (helper-93: 0x1F read as pr/31, 010 as pr/8)
            text = raw if raw is not None and isinstance(value, int) else str(value)
            if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip() \
                    or (isinstance(value, int) and not re.fullmatch(r"[0-9]+", text)):
                raise self.fail(keypath, line, f"must be an entry (pr/N, carry/NAME, or a bare PR number in decimal "
                                               f"digits or carry name), got {_show(value, raw)}")
        elif key.type == "sha":
            text = raw if raw is not None and not isinstance(value, str) else value
            if not isinstance(text, (str, int)) or isinstance(text, bool) or not _HEX.match(str(text)):
                raise self.fail(keypath, line, f"must be a commit SHA of 7 to 40 hex digits, got {_show(value, raw)}")
        else:
            if not isinstance(value, str):
                raise self.fail(keypath, line, f"must be a string, got {_show(value, raw)}")
            if key.type == "enum" and value not in key.choices:
                raise self.fail(keypath, line, f"must be one of {', '.join(key.choices)}, got '{value}'")
            if key.type in ("str", "name", "dotted", "call", "regex") and not value.strip():
                # (helper-115: an empty `matches` passed check: an empty expression matches every file)
                raise self.fail(keypath, line, "must not be empty", hint="write the text or expression the file "
                                "must have" if keypath.rsplit(".", 1)[-1] in ("contains", "absent", "matches") else None)

    def text_value(self, data: YMap, key: str) -> str | None:
        """A sha-like value as text, even when YAML read digits as a number."""
        if key not in data:
            return None
        value = data[key]
        return (value if isinstance(value, str) else data.raw.get(key, str(value))).lower()


def _join(keypath: str, key: str) -> str:
    return f"{keypath}.{key}" if keypath else key


def _kind(value: Any) -> str:
    if isinstance(value, YMap) or isinstance(value, dict):
        return "a mapping"
    if isinstance(value, YList) or isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    return f"{type(value).__name__} {value!r}"


def _show(value: Any, raw: str | None) -> str:
    if isinstance(value, (YMap, YList, dict, list)) or value is None:
        return _kind(value)
    text = repr(raw if raw is not None else value)
    return text if len(text) <= 60 else text[:57] + "..."
