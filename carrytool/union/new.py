"""`carrytool union new`: add a union's carry entry at the end of the manifest (with `--in-place`, where the
first PR it supersedes stands), keeping its layout."""

from __future__ import annotations

import shlex

from carrytool.errors import InputError
from carrytool.manifest.edit import add_union, in_its_line_ends
from carrytool.manifest.load import parse_manifest
from carrytool.manifest.model import Entry, Manifest
from carrytool.manifest.safefile import write_atomic


def parse_paths(values: list[str], prs: list[int]) -> dict[int, list[str]]:
    """`--paths PR=GLOB` values -> {PR: [GLOB, ...]}; each PR must be one of PRS."""
    out: dict[int, list[str]] = {}
    for value in values:
        number, sep, glob = value.partition("=")
        if not sep or not number.strip().isdigit() or not glob:
            raise InputError(f"--paths {value!r}: expected PR=GLOB, e.g. --paths 45612='vllm/v1/worker/*'")
        if int(number) not in prs:
            raise InputError(f"--paths {value!r}: pr/{number} is not one of the union's PRs "
                             f"({', '.join(map(str, prs))})")
        out.setdefault(int(number), []).append(glob)
    return out


def union_place(manifest: Manifest, prs: list[int]) -> Entry | None:
    """The entry a new union superseding PRS goes before: the first of its PRs' entries (sync applies the
    union there, in their place: appended, a PR between them and the end that builds on them was applied
    before the union, conflicted with it and took the PRs' changes out of the branch: helper-133); None
    when none of them is an entry (the union is appended)."""
    return next((e for e in manifest.entries if e.kind == "pr" and e.number in prs), None)


def add_union_entry(manifest: Manifest, name: str, prs: list[int], paths: list[str], *, patch: str | None,
                    invocation: str = "", in_place: bool = False) -> tuple[Manifest, Entry | None]:
    """Add `- carry: NAME` superseding PRS to MANIFEST's file (validated, replaced by rename): at the end of
    `entries`, as the contract says, or, IN_PLACE, before the first PR entry it supersedes (`union_place`);
    return the manifest and that PR entry (None when appended)."""
    if manifest.find_entry(f"carry/{name}") is not None:
        raise InputError(f"carry/{name} is already in {manifest.path}",
                         hint=f"refold it: carrytool union compose {shlex.quote(name)}{invocation}")
    if not prs or len(set(prs)) != len(prs) or any(pr < 1 for pr in prs):
        raise InputError("union new needs distinct PR numbers above 0")
    text = manifest.path.read_bytes().decode("utf-8")
    globs = parse_paths(paths, prs)
    place = union_place(manifest, prs) if in_place else None
    new_text = in_its_line_ends(text, lambda lf: add_union(lf, name, prs, globs, patch=patch,
                                                           before=place.index if place else None))
    updated = parse_manifest(new_text, manifest.path)
    write_atomic(manifest.path, new_text.encode("utf-8"))
    return updated, place
