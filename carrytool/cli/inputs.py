"""What a command reads and refuses: the manifest, the repository, --report and --format checked first."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from carrytool.errors import CarryError


def _load(manifest: Optional[Path]):  # noqa: ANN202
    from carrytool.manifest.load import load_manifest, manifest_path

    return load_manifest(manifest_path(manifest))


def _load_kept(manifest: Optional[Path], repo: Path):  # noqa: ANN202
    """The repository (quarantined, as sync opens it), the manifest read with what an earlier run parsing the
    same text kept under its git dir (`pipeline.keptyaml`), and that keeper (`save` it when the command keeps
    what it learned). A bad manifest is the error named first, as `_load` then `_open_git` name them."""
    from carrytool.manifest.load import load_manifest, manifest_path
    from carrytool.pipeline.keptyaml import KeptYaml

    try:
        git = _open_git(repo, quarantine=True)
    except CarryError:
        _load(manifest)
        raise
    try:
        kept = KeptYaml(git.common_dir / "carrytool" / "cache", git.version)
        return git, load_manifest(manifest_path(manifest), kept), kept
    except BaseException:
        git.close()
        raise


def _open_git(repo: Path, *, quarantine: bool = False):  # noqa: ANN202
    from carrytool.gitlayer.git import Git

    # a --repo the user named is that repository; the default (`.`) is found from a folder inside it, as git does
    return Git(repo, quarantine=quarantine, exact=repo != Path("."))


def _check_report(path: Optional[Path], manifest: Optional[Path]) -> None:
    """A --report path that can never be written, or that holds a file of the user's, is refused before
    anything runs or moves."""
    from carrytool.manifest.load import manifest_path
    from carrytool.pipeline.report import check_report_path

    check_report_path(path, manifest_path(manifest))


def _check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise _usage(f"--format must be one of {', '.join(allowed)}, got '{fmt}'")


def _usage(message: str) -> CarryError:
    from carrytool.errors import InputError

    return InputError(message)
