"""A finished fold's Python files that no longer parse: the union's result breaks a file that upstream's version
and each folded PR head's parse (h185: a resolution lost `def f():`, leaving an indented `return x` at module
level; `union continue` and sync exited 0, and the module raised IndentationError). Sync sees the union as one
entry and parses only the pieces of files around hunks, so it is said here, with where to correct it."""

from __future__ import annotations

import symtable
import sys
import warnings

from carrytool.pipeline.hunks import find_block, line_span
from carrytool.pipeline.unbound import loose_names
from carrytool.union.checks import resolutions_in
from carrytool.union.outcome import FoldItem
from carrytool.union.requires_python import declared_python

RUNNING = sys.version_info[:2]


def syntax_error(data: bytes) -> SyntaxError | None:
    """Why the module DATA does not compile's first passes (the parse and the symbol table: what `import` meets
    before any code runs), or None when it does, or when this interpreter cannot say (too deep, too large)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            symtable.symtable(data, "<carried>", "exec")  # bytes: its coding cookie is read
    except SyntaxError as exc:
        return exc
    except ValueError as exc:           # a NUL byte (before 3.12)
        return SyntaxError(str(exc))
    except (RecursionError, MemoryError):
        return None
    return None


class FoldSyntax:
    """Union's check that its result's Python files parse (mixed into fold.Union)."""

    def unparsed(self, state: dict, commit: str, items: list[FoldItem]) -> list[str]:
        """A `warning: ` line for each Python file the union's result (COMMIT) changes that does not parse while
        upstream's version of it and each folded PR head's that changes it parse: Python's message, its line,
        and where to correct it. The unbound-name check (run first) read each such file's symbol table already
        (pipeline.unbound.loose_names, cached): a file it read is not parsed again."""
        upstream = state["upstream"]
        notes = []
        for change, result, diffs in self.python_results(upstream, commit, items):
            path = change.path
            if loose_names(result) is not None:       # its symbol table was built: it parses
                continue
            error = syntax_error(result)
            if error is None:
                continue
            heads = self.heads_at(items, diffs, path)
            before = self.git.file_at(upstream, change.old_path or path)
            versions = [("upstream's", before)] + [(f"{i.id}'s", data) for i, data in heads]
            if any(data is not None and (data == result or syntax_error(data) is not None) for _who, data in versions):
                continue            # a version fails as well: not the fold's doing
            having = [who for who, data in versions if data is not None]
            whose = (f"{', '.join(having[:-1])} and {having[-1]} versions do" if len(having) > 1 else
                     f"{having[0]} version does") if having else "no other version of it exists"
            line = error.lineno or 0
            said = f"the union's result does not parse under Python {_version(RUNNING)}, the Python carrytool " \
                f"runs on ({type(error).__name__}: {error.msg}), while {whose}"
            where = self._broken_where(state, path, result, line)
            newer = self._newer_python(upstream)
            if newer:       # its syntax may be the newer Python's (h194: a PEP 701 f-string, judged by 3.11)
                bound, spec, declared = newer
                notes.append(f"note: {path}:{line}: {said}; the project requires Python {spec} (upstream's "
                             f"{declared}), whose syntax {_version(RUNNING)} may not know: check it with Python "
                             f"{_version(bound)}, and if it does not parse there either, {where}")
            else:
                notes.append(f"warning: {path}:{line}: {said}: importing it fails; {where}")
        return notes

    def _newer_python(self, upstream: str) -> tuple[tuple[int, int], str, str] | None:
        """The Python upstream declares (pyproject.toml's `requires-python`, else setup.cfg's `python_requires`)
        when its lowest is newer than the one running: this one cannot judge that Python's syntax."""
        declared = declared_python(self.git.file_at(upstream, "pyproject.toml"),
                                   self.git.file_at(upstream, "setup.cfg"))
        return declared if declared and declared[0] > RUNNING else None

    def _broken_where(self, state: dict, path: str, result: bytes, line: int) -> str:
        """Where to correct PATH, broken at LINE of RESULT, as a clause: the recorded resolution the fold used that
        holds the line, else the edit recorded that wrote it, else the resolution standing nearest before it (a
        line it left out: Python stumbles on the line after), else an edit recorded for the file that does not
        parse itself; else the merge of the PRs' changes."""
        compose = self.command("compose")
        lines = result.split(b"\n")
        text = lines[line - 1].strip() if 0 < line <= len(lines) else b""
        records = self.store.records_of(self.name, set(state.get("used_keys", [])), path)
        resolutions = [(record, b"\n".join(said for _where, _field, said in resolutions_in(doc, path)))
                       for record, doc in records]
        fixups = [f for f in self.store.load_fixups(self.name) if f.file == path]
        for record, resolution in resolutions:
            if text and text in {row.strip() for row in resolution.split(b"\n")}:
                return f"the line is your recorded resolution {record.absolute()}: correct it there (its " \
                    f"`resolution`), then {compose}"
        for fixup in fixups if text else ():
            if text in _stripped(fixup.result) - _stripped(fixup.base):
                return f"the line is your edit recorded for {fixup.item} in " \
                    f"{self.store.fixup_path(self.name, fixup).absolute()}: correct it there (its " \
                    f"`result`), then {compose}"
        placed = [(start + len(block), start, record) for record, resolution in resolutions
                  for block in [resolution.split(b"\n")] for start in find_block(lines, block)[-1:]
                  if block and start < line]
        if placed:
            end, start, record = max(placed)
            return f"your recorded resolution {record.absolute()} ({line_span(start + 1, end)} of the result) stands just before it: " \
                f"a line it left out? correct it there (its `resolution`), then {compose}"
        for fixup in fixups:
            if fixup.result and syntax_error(fixup.result[1]) is not None and \
                    (fixup.base is None or syntax_error(fixup.base[1]) is None):
                return f"your edit recorded for {fixup.item} in " \
                    f"{self.store.fixup_path(self.name, fixup).absolute()} leaves the file unparseable: correct " \
                    f"it there (its `result`), then {compose}"
        return "no recorded resolution or edit holds the line or stands before it (the PRs' changes merged " \
            "there): correct it at a stop of the fold, or carry the fix as an entry of its own after the union"


def _version(version: tuple[int, int]) -> str:
    return ".".join(map(str, version))


def _stripped(side: tuple[str, bytes] | None) -> set[bytes]:
    return {line.strip() for line in side[1].split(b"\n")} if side else set()
