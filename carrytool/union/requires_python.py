"""The Python a project declares it runs on, as the lowest `major.minor` its `requires-python` allows: read from
upstream's `pyproject.toml` (`[project]`), else its `setup.cfg` (`[options] python_requires`). carrytool runs
on Python 3.10, which has no tomllib: the one key is read by a small parser that answers only what it is sure
of (a single-line string value of `requires-python` in the `[project]` table, or `project.requires-python` at
the top), else None."""

from __future__ import annotations

import configparser
import re

_TABLE = re.compile(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_KEY = re.compile(r"""\s*(?:(?P<bare>[A-Za-z0-9_.-]+?)|"(?P<quoted>[^"\\]*)")\s*=\s*"""
                  r"""(?:"(?P<basic>[^"\\]*)"|'(?P<literal>[^']*)')\s*(#.*)?$""")
_CLAUSE = re.compile(r"(===|==|~=|>=|<=|!=|>|<)\s*v?(\d+)(?:\.(\d+|\*))?[0-9A-Za-z.*+!-]*")


def pyproject_requires(text: str) -> str | None:
    """`project.requires-python` of a pyproject.toml's TEXT; None when absent or not a one-line string."""
    table = ""
    for line in text.splitlines():
        if line.lstrip().startswith("["):      # a table's header; an array of tables' is none of ours
            header = _TABLE.match(line)
            table = header.group(1).replace('"', "").replace(" ", "") if header else "[["
            continue
        key = _KEY.match(line)
        if not key:
            continue
        name = (key.group("bare") or key.group("quoted") or "").replace(" ", "")
        if (table, name) in (("project", "requires-python"), ("", "project.requires-python")):
            return key.group("basic") if key.group("basic") is not None else key.group("literal")
    return None


def setup_cfg_requires(text: str) -> str | None:
    """`[options] python_requires` of a setup.cfg's TEXT; None when absent or not readable."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
        value = parser.get("options", "python_requires", fallback=None)
    except configparser.Error:
        return None
    return value.strip() if value else None


def lower_bound(spec: str) -> tuple[int, int] | None:
    """The lowest (major, minor) a PEP 440 specifier SPEC (`>=3.12, <4`) allows; None when it names none or is
    not one carrytool reads."""
    bounds = []
    for clause in spec.split(","):
        if not clause.strip():
            continue
        match = _CLAUSE.fullmatch(clause.strip())
        if not match:
            return None
        operator, major, minor = match.group(1), int(match.group(2)), match.group(3)
        if operator in ("===", "==", "~=", ">=", ">"):
            bounds.append((major, int(minor) if minor and minor != "*" else 0))
    return max(bounds) if bounds else None


def declared_python(pyproject: bytes | None, setup_cfg: bytes | None) -> tuple[tuple[int, int], str, str] | None:
    """(the lowest Python the project allows, its specifier, where it is declared) from upstream's PYPROJECT,
    else its SETUP_CFG; None when neither declares one carrytool reads."""
    for data, read, where in ((pyproject, pyproject_requires, "pyproject.toml"),
                              (setup_cfg, setup_cfg_requires, "setup.cfg")):
        if data is None:
            continue
        spec = read(data.decode("utf-8", "replace"))
        bound = lower_bound(spec) if spec else None
        if bound:
            return bound, spec.strip(), where  # type: ignore[union-attr]
    return None
