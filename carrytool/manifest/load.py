"""Find and read the manifest: the path rule (-m, $CARRYTOOL_MANIFEST, default) and the validated load."""

from __future__ import annotations

import os
from pathlib import Path

from carrytool.errors import ManifestError
from carrytool.manifest.build import build_manifest
from carrytool.manifest.model import DEFAULT_MANIFEST, Manifest
from carrytool.manifest.yamlload import Keeper, load_yaml


def manifest_path(option: str | Path | None) -> Path:
    """The manifest to read: -m/--manifest, else $CARRYTOOL_MANIFEST, else carries/manifest.yaml."""
    chosen = option or os.environ.get("CARRYTOOL_MANIFEST") or DEFAULT_MANIFEST
    return Path(chosen)


def load_manifest(path: str | Path, kept: Keeper | None = None) -> Manifest:
    """Read and validate the manifest at PATH; raise ManifestError naming key path and line. KEPT: what an
    earlier parse of the same text gave (sync's, `pipeline.keptyaml`); validated all the same."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ManifestError(f"no manifest at {path}", hint="pass -m FILE, set CARRYTOOL_MANIFEST, or create "
                            f"{DEFAULT_MANIFEST} (see docs/manifest.md)") from None
    except OSError as exc:
        raise ManifestError(f"cannot read the manifest {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"the manifest is not UTF-8 (byte {exc.start})", where=str(path)) from None
    return parse_manifest(text, path, kept)


def parse_manifest(text: str, path: Path, kept: Keeper | None = None) -> Manifest:
    """Validate manifest TEXT (read from PATH) and build the Manifest."""
    return build_manifest(load_yaml(text, str(path), kept), text, path)
