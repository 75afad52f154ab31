"""The night before the lock on disk as sync recorded it in --repo (`refs/carrytool/<branch>/nights`): what
`carrytool diff` names when the manifest lies outside any git work tree, where no committed night can be read
(h245: the hint said only "name both locks", though sync keeps the last nights there); and, when it records none
before the lock on disk either, the record looked for and what to run (h259: "no committed night before the lock
on disk" named neither the record nor a next step); and, when the lock on disk is the only committed night and
sync recorded a red night after it, that night and the diff that runs (h265: the hint said to commit the lock,
which was committed)."""

from __future__ import annotations

import shlex
from pathlib import Path

from carrytool.errors import CarryError
from carrytool.gitlayer.git import Git
from carrytool.gitlayer.jsonread import load_json, read_utf8
from carrytool.manifest.load import parse_manifest
from carrytool.pipeline.night_record import nights_ref, recorded_locks


def _recorded_around(manifest: Path, lock_file: Path, repo: Path) -> tuple[str | None, tuple[str, str] | None]:
    """(REV:PATH of the newest night sync recorded in REPO before the lock on disk, (REV:PATH, composed SHA) of
    the newest night it recorded after it: a red night, which wrote no lock); None for either as above."""
    try:
        parsed = parse_manifest(manifest.read_text(encoding="utf-8"), manifest)
        lock = load_json(read_utf8(lock_file))        # too large to hold: ValueError (h257: a MemoryError traceback)
        with Git(repo) as git:
            nights = recorded_locks(parsed, git)
    except (CarryError, OSError, UnicodeDecodeError, ValueError):
        return None, None
    current = lock.get("result") if isinstance(lock, dict) else None
    results = [doc.get("result") for _, doc in nights]
    start = results.index(current) + 1 if current in results else 0
    before = nights[start][0] if start < len(nights) else None     # the records are newest first
    newest = results[0] if results and isinstance(results[0], str) else None
    after = (nights[0][0], newest) if start > 1 and newest else None   # (h265: a red night after the first one)
    return before, after


def _diff_command(old: str, lock_file: Path, manifest: Path, repo: Path) -> str:
    return f"carrytool diff {shlex.quote(old)} {shlex.quote(str(lock_file))} -m {shlex.quote(str(manifest))} " \
           f"--repo {shlex.quote(str(repo))}"


def nights_record_said(manifest: Path, repo: Path) -> str:
    """Where sync records MANIFEST's nights, in words: `refs/carrytool/<branch>/nights in REPO`."""
    try:
        ref = nights_ref(parse_manifest(manifest.read_text(encoding="utf-8"), manifest))
    except (CarryError, OSError, UnicodeDecodeError, ValueError):
        ref = "refs/carrytool/<fork branch>/nights"
    return f"{ref} in {repo}"


def night_before_hint(manifest: Path, lock_file: Path, repo: Path, both: str, *, top: Path | None
                      ) -> tuple[str, str]:
    """(the words that end the error, its hint) when no committed night comes before the lock on disk (TOP: the
    work tree looked in, None: none): the night before as sync recorded it in REPO, when it records one;
    else the record looked for, and to commit the lock after each night (in a work tree) so that the next
    sync's lock has a night to be compared with."""
    before, after = _recorded_around(manifest, lock_file, repo)
    if before is None and after is not None:        # h265: the lock on disk is committed; a red night came after
        record, composed = after
        command = _diff_command(str(lock_file), Path(record), manifest, repo) if top is None else \
            f"git -C {shlex.quote(str(repo))} show {shlex.quote(record)} > night.lock && " \
            + _diff_command(str(lock_file), Path("night.lock"), manifest, repo)
        return (f"; the last sync in --repo composed {composed[:12]} after it and wrote no lock (a red night)",
                f"compare the lock on disk with that night as sync recorded it: `{command}`, or with its report "
                f"(`sync --report FILE`): `{_diff_command(str(lock_file), Path('REPORT.json'), manifest, repo)}`")
    if before is not None:      # in a work tree REV:PATH is read there: the record is written out of --repo first
        command = _diff_command(before, lock_file, manifest, repo) if top is None else \
            f"git -C {shlex.quote(str(repo))} show {shlex.quote(before)} > night.lock && " \
            + _diff_command("night.lock", lock_file, manifest, repo)
        return "", f"compare with the night before as sync recorded it in --repo: `{command}`; or {both}"
    said = f", nor does sync's record of the nights ({nights_record_said(manifest, repo)}) hold one before it"
    again = f"carrytool sync -m {shlex.quote(str(manifest))} --repo {shlex.quote(str(repo))}"
    if top is None:
        return said, f"each `{again}` records its night there: once it holds one before the lock on disk, diff " \
                     f"names it; or {both}"
    inner = lock_file.resolve().relative_to(top.resolve()).as_posix()
    commit = f"git -C {shlex.quote(str(top))} add {shlex.quote(inner)} && git -C {shlex.quote(str(top))} commit"
    return said, f"commit the lock after each night (`{commit}`): after the next `{again}`, `carrytool diff` " \
                 f"compares its lock with that one; or {both}"
