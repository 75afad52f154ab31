"""Safe YAML reading that remembers where every value came from (for errors that name a line)."""

from __future__ import annotations

from typing import Any, Protocol

from carrytool.manifest.ynodes import YList, YMap

__all__ = ["Keeper", "YList", "YMap", "load_yaml"]


class Keeper(Protocol):
    """What earlier parses gave, by text (sync's: `pipeline.keptyaml`)."""

    def find(self, text: str) -> YMap | None: ...

    def keep(self, text: str, value: object) -> None: ...


def load_yaml(text: str, source: str, kept: Keeper | None = None) -> Any:
    """Parse one YAML document with the safe loader; return YMap/YList/scalars, or raise ManifestError.
    KEPT (sync's, under the git dir): a manifest whose text was read before is taken from what
    that read gave (`pipeline.keptyaml`), and PyYAML is not even imported."""
    found = kept.find(text) if kept is not None else None
    if found is not None:
        return found
    from carrytool.manifest.yamlparse import parse_yaml

    value = parse_yaml(text, source)
    if kept is not None:
        kept.keep(text, value)
    return value
