"""The YAML parse itself (PyYAML's safe loader, libyaml's when PyYAML has it): values, with the line of every
value and key and each scalar's raw text (`manifest.yamlload`'s YMap and YList). Imported only when a manifest is
parsed: a manifest read before is taken from what that parse gave (`pipeline.keptyaml`)."""

from __future__ import annotations

from typing import Any

import yaml

from carrytool.errors import ManifestError
from carrytool.manifest.ynodes import YList, YMap

MAX_NODES = 200_000   # an alias bomb expands past this long before it hurts
MAX_INT_CHARS = 1000  # Python refuses to read integers past 4,300 digits; a 40-digit SHA must still pass

# libyaml's safe loader when PyYAML has it (same nodes, lines and values, several times faster); a
# document it refuses is read again by the pure-Python one, whose words the errors quote
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def parse_yaml(text: str, source: str) -> Any:
    """Parse one YAML document with the safe loader; return YMap/YList/scalars, or raise ManifestError."""
    # libyaml accepts a few documents the pure loader refuses (tabs as separators, `?` inside flow
    # collections): those go to the pure loader, so a manifest reads the same with or without libyaml
    if _FAST_LOADER is not None and "\t" not in text and "?" not in text:
        try:
            return _load_with(_FAST_LOADER, text, source)
        except ManifestError:
            pass                        # read again below: the error quotes the pure loader's words
    return _load_with(yaml.SafeLoader, text, source)


def _load_with(loader_class: Any, text: str, source: str) -> Any:
    loader = None
    try:
        loader = loader_class(text)
        node = loader.get_single_node()
        if node is None:
            return None
        return _Converter(loader, source).convert(node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        where = f"{source}:{line}" if line else source
        raise ManifestError(f"not valid YAML: {exc.problem or exc.context}", where=where) from None
    except yaml.YAMLError as exc:
        raise ManifestError(f"not valid YAML: {exc}", where=source) from None
    except RecursionError:
        raise ManifestError("the document nests too deeply", where=source) from None
    finally:
        if loader is not None:
            loader.dispose()


class _Converter:
    def __init__(self, loader: yaml.SafeLoader, source: str) -> None:
        self.loader = loader
        self.source = source
        self.count = 0

    def fail(self, node: yaml.Node, message: str) -> ManifestError:
        return ManifestError(message, where=f"{self.source}:{node.start_mark.line + 1}")

    def convert(self, node: yaml.Node, stack: tuple[int, ...]) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(node, "the document expands to too many values (alias bomb?)")
        if id(node) in stack:
            raise self.fail(node, "a recursive alias is not allowed")
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        stack = stack + (id(node),)
        if isinstance(node, yaml.SequenceNode):
            self.check_tag(node, "tag:yaml.org,2002:seq")
            out = YList(self.convert(item, stack) for item in node.value)
            out.line = node.start_mark.line + 1
            out.item_lines = [item.start_mark.line + 1 for item in node.value]
            out.raw = [item.value if isinstance(item, yaml.ScalarNode) else None for item in node.value]
            return out
        if isinstance(node, yaml.MappingNode):
            self.check_tag(node, "tag:yaml.org,2002:map")
            out = YMap()
            out.line = node.start_mark.line + 1
            out.key_lines, out.raw = {}, {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise self.fail(key_node, "merge keys (<<) are not supported in a manifest")
                key = self.scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
                if not isinstance(key, str):
                    raise self.fail(key_node, f"a key must be a string, not {key!r}")
                if key in out:
                    raise self.fail(key_node, f"duplicate key '{key}' (first at line {out.key_lines[key]})")
                out.key_lines[key] = key_node.start_mark.line + 1
                try:
                    out[key] = self.convert(value_node, stack)
                except ManifestError as exc:
                    if isinstance(value_node, yaml.ScalarNode):
                        exc.message = f"'{key}': {exc.message}"      # name the key of a bad scalar
                        exc.args = (exc.message,)
                    raise
                if isinstance(value_node, yaml.ScalarNode):
                    out.raw[key] = value_node.value
            return out
        raise self.fail(node, "unsupported YAML node")

    def check_tag(self, node: yaml.Node, expected: str) -> None:
        if node.tag != expected:
            raise self.fail(node, f"YAML tag {node.tag} is not allowed in a manifest")

    def scalar(self, node: yaml.ScalarNode) -> Any:
        if not node.tag.startswith("tag:yaml.org,2002:") or node.tag.endswith(":binary"):
            raise self.fail(node, f"YAML tag {node.tag} is not allowed in a manifest")
        if node.tag.endswith(":timestamp"):
            return node.value   # a date-like title stays text
        if node.tag.endswith(":int") and len(node.value) > MAX_INT_CHARS:
            raise self.fail(node, f"a number of {len(node.value)} characters is too large")
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            raise self.fail(node, f"cannot read this value: {exc.problem}") from None
