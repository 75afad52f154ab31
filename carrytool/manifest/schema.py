"""The manifest's JSON Schema, generated from the same key table the loader validates with (manifest.SCHEMA).

Editors use it through a first line `# yaml-language-server: $schema=<path or URL>`; `carrytool schema`
prints it, and the package ships it as `carrytool/schemas/manifest.schema.json` (a test keeps the
shipped file equal to what this module generates).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from carrytool.asserts.spec import CHECKS
from carrytool.manifest.model import SCHEMA, Key

SHIPPED = Path(__file__).parents[1] / "schemas" / "manifest.schema.json"
# An identifier, approximately: the loader takes what str.isidentifier takes, beyond ASCII too (helper-115);
# a pattern any JSON Schema validator reads (no \p{L}) lets every character past ASCII through instead.
_IDENT = "[A-Za-z_\\u0080-\\uffff][A-Za-z0-9_\\u0080-\\uffff]*"
_PATTERNS = {
    "sha": "^[0-9a-fA-F]{7,40}$",
    "name": "^[A-Za-z0-9_][A-Za-z0-9._-]*$",
    "dotted": f"^{_IDENT}(\\.{_IDENT})*$",
    "call": f"^(\\*\\.)?{_IDENT}(\\(\\))?(\\.{_IDENT}(\\(\\))?)*$",
    "branch": "^[^-\\s~^:?*\\[\\\\][^\\s~^:?*\\[\\\\]*$",
    "url": "^[^-\\s]",
    "path": "^(?!/)(?!.*(^|/)\\.\\.(/|$)).+$",
    "pattern": "^(?!/)(?!.*(^|/)\\.\\.(/|$)).+$",
    "ref": "^refs/.*\\{number\\}.*$",
}
_SECTION_TITLES = {"upstream": "Upstream", "fork": "Fork", "identity": "Identity", "policy": "Policy",
                   "precompiled": "Precompiled", "structured_merge": "StructuredMerge", "entry": "Entry",
                   "supersede": "Supersede", "drop": "Drop", "assert": "Assert"}


def _key_schema(key: Key) -> dict[str, Any]:
    doc: dict[str, Any] = {"description": key.doc}
    if key.type == "int":
        doc.update({"type": "integer", "minimum": 0})
        if key.name == "version":
            doc = {"description": key.doc, "const": 1}
        elif key.name == "pr":
            doc["minimum"] = 1
    elif key.type == "bool":
        doc["type"] = "boolean"
    elif key.type == "enum":
        doc["enum"] = list(key.choices)
    elif key.type == "map" and key.items == "args":
        doc.update({"type": "object", "minProperties": 1, "propertyNames": {"pattern": f"^({_IDENT}|[0-9]+)$"},
                    "additionalProperties": {"anyOf": [{"type": "string", "pattern": _PATTERNS["dotted"]},
                                                              {"type": ["boolean", "null"]}]}})
    elif key.type == "map":
        doc = {"$ref": f"#/$defs/{key.items}", "description": key.doc}
    elif key.type == "list":
        doc["type"] = "array"
        if key.items in SCHEMA:
            doc["items"] = {"$ref": f"#/$defs/{key.items}"}
        elif key.items == "supersede":
            doc["items"] = {"$ref": "#/$defs/supersede"}
        else:
            doc["items"] = {"type": "string", **({"pattern": _PATTERNS[key.items]} if key.items in _PATTERNS else {})}
    elif key.type == "sha":
        doc["anyOf"] = [{"type": "string", "pattern": _PATTERNS["sha"]}, {"type": "integer"}]
    elif key.type == "entry":
        doc["anyOf"] = [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 1}]
    else:
        doc["type"] = "string"
        if key.type in _PATTERNS:
            doc["pattern"] = _PATTERNS[key.type]
    if key.default is not None and key.type not in ("list", "map"):
        doc["default"] = key.default
    return doc


def _section(name: str) -> dict[str, Any]:
    keys = SCHEMA[name]
    doc: dict[str, Any] = {
        "title": _SECTION_TITLES.get(name, name),
        "type": "object",
        "additionalProperties": False,
        "properties": {k.name: _key_schema(k) for k in keys},
    }
    required = [k.name for k in keys if k.required]
    if required:
        doc["required"] = required
    return doc


def manifest_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of manifest v1."""
    top = _section("manifest")
    top.update({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "carrytool-manifest-v1",
                "title": "carrytool manifest (version 1)",
                "description": "What a fork carries on top of upstream; see docs/manifest.md."})
    defs = {name: _section(name) for name in SCHEMA if name != "manifest"}
    defs["entry"]["oneOf"] = [{"required": ["pr"], "not": {"required": ["carry"]}},
                              {"required": ["carry"], "not": {"required": ["pr"]},
                               "oneOf": [{"required": ["commit"]}, {"required": ["patch"]}]}]
    supersede = defs.pop("supersede")
    defs["supersede"] = {"description": "A PR number, or {pr, head, paths, drops}.",
                         "oneOf": [{"type": "integer", "minimum": 1}, supersede]}
    defs["drop"]["properties"]["why"]["pattern"] = "\\S"      # the loader refuses an empty or blank why
    defs["assert"]["oneOf"] = [{"required": [check]} for check in CHECKS]
    top["$defs"] = defs
    return top


def render_schema() -> str:
    return json.dumps(manifest_schema(), indent=2) + "\n"
