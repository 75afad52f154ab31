"""The state of a fold under way (`<git-dir>/carrytool/union/<name>/state.json`): written atomically,
checked field by field when read, so a truncated or edited file is an error naming it, never a traceback."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from carrytool.errors import InputError
from carrytool.gitlayer.jsonread import read_json
from carrytool.gitlayer.objects import common_ends
from carrytool.manifest.safefile import write_atomic

STATE_VERSION = 2
_ITEM_KEYS = frozenset({"pr", "head", "base", "paths", "title"})


def save_state(path: Path, state: dict[str, Any]) -> None:
    """Replace PATH with STATE in one rename (a kill leaves the old state or the new one)."""
    write_atomic(path, (json.dumps({**state, "version": STATE_VERSION}, indent=2) + "\n").encode())


def load_state(path: Path, *, hint: str) -> dict[str, Any]:
    """Read and check the state at PATH; InputError (naming PATH, HINT) when it is not a valid state."""
    try:
        doc = read_json(path)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: the fold's state is unreadable ({exc})", hint=hint) from None
    problem = _problem(doc)
    if problem:
        raise InputError(f"{path}: the fold's state is corrupt ({problem})", hint=hint)
    return doc


def _problem(doc: Any) -> str | None:
    if not isinstance(doc, dict) or doc.get("version") != STATE_VERSION:
        return f"not a version {STATE_VERSION} state"
    checks = {"name": str, "upstream": str, "tip": str, "scratch": str, "next": int, "items": list,
              "touched": dict, "reused": list, "used_keys": list}
    for key, kind in checks.items():
        if not isinstance(doc.get(key), kind):
            return f"'{key}' is missing or not a {kind.__name__}"
    if not isinstance(doc.get("manifest", ""), str):
        return "'manifest' is not a path"
    for item in doc["items"]:        # (each is a FoldItem's fields: no other key, paths strings; h246)
        if not isinstance(item, dict) or set(item) - _ITEM_KEYS or not _number(item.get("pr")) \
                or not all(isinstance(item.get(k), str) for k in ("head", "base")) \
                or not isinstance(item.get("paths"), list) or not all(isinstance(p, str) for p in item["paths"]) \
                or not isinstance(item.get("title"), (str, type(None))):
            return "an item is not {pr, head, base, paths, title}"
    if not 0 <= doc["next"] <= len(doc["items"]):
        return "'next' is out of range"
    conflict = doc.get("conflict")
    if conflict is not None:
        if not isinstance(conflict, dict) or not _number(conflict.get("pr")) \
                or not all(isinstance(conflict.get(k), str) for k in ("tree", "pre", "shown")) \
                or not isinstance(conflict.get("files"), list):
            return "'conflict' is not {pr, tree, pre, shown, files}"
        for item in conflict["files"]:
            if not isinstance(item, dict) or not isinstance(item.get("file"), str) \
                    or item.get("kind") not in ("content", "other", "fixup") \
                    or not isinstance(item.get("entries"), list):
                return "a conflicted file is not {file, kind, entries}"
        waiting = conflict.get("waiting", [])
        if not isinstance(waiting, list) or not all(isinstance(path, str) for path in waiting):
            return "'conflict.waiting' is not a list of paths"
    return None


def _number(value: object) -> bool:
    """Whether VALUE is a PR number as a fold writes it: an int, not a bool (Python's True is an int: pr/True)."""
    return isinstance(value, int) and not isinstance(value, bool)


def manifest_edit(before: bytes, written: bytes) -> dict[str, Any]:
    """What `union new` changed in the manifest (BEFORE -> WRITTEN), as a stopped fold's state keeps it for `abort`
    to take the entry out again: WRITTEN's digest, and BEFORE as WRITTEN less the bytes the edit put in (a common
    prefix and suffix kept by length, the bytes between as BEFORE had them, and BEFORE's digest). The rest of the
    manifest is not copied into the git dir: a credential in one of its URLs stays where the user put it."""
    prefix, suffix = common_ends(before, written)
    return {"written": hashlib.sha256(written).hexdigest(), "before_sha256": hashlib.sha256(before).hexdigest(),
            "prefix": prefix, "suffix": suffix,
            "between": base64.b64encode(before[prefix:len(before) - suffix]).decode()}


def manifest_before(edit: dict[str, Any], current: bytes) -> bytes:
    """The manifest as it was before `union new`, from CURRENT (what that command wrote) and EDIT
    (`manifest_edit`; a state an earlier carrytool wrote kept the whole of it, `before`). ValueError (or KeyError,
    TypeError) when EDIT does not give it back from CURRENT: CURRENT is not what `union new` wrote."""
    if "before" in edit:
        return base64.b64decode(str(edit["before"]), validate=True)
    prefix, suffix = edit["prefix"], edit["suffix"]
    if type(prefix) is not int or type(suffix) is not int or prefix < 0 or suffix < 0 or prefix + suffix > len(current):
        raise ValueError("not an edit of this manifest")
    before = current[:prefix] + base64.b64decode(str(edit["between"]), validate=True) + current[len(current) - suffix:]
    if hashlib.sha256(before).hexdigest() != edit["before_sha256"]:
        raise ValueError("not an edit of this manifest")
    return before
