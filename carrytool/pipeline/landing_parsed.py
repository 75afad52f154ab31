"""The landing checks that parse the composed modules: shadowed definitions, duplicate dict keys and names
left unbound, each owned line blamed on the entry that landed it (a mixin of landing._Accountant). Each
imports its check (and the parsing code under it) when it has a file to look at: a sync whose PRs add no
definition or key, and override nothing, loads none of them (tests/test_startup.py)."""

from __future__ import annotations

from carrytool.pipeline.landing_records import Owner
from carrytool.pipeline.plan import Step
from carrytool.pipeline.pyadds import defined_names, written_keys


class _ParsedChecks:
    def account_shadowed(self) -> None:
        """A definition an entry landed that the composed module defines again in the same scope, by another
        entry or upstream (pipeline.shadowed): both hunks landed, and one of them is dead code. A warning:
        nothing was dropped, and the composed file is what the merges made."""
        if not self.tip or not self.defining:
            return
        from carrytool.pipeline.shadowed import shadowed_definitions

        owners: dict[str, dict[int, tuple[str, frozenset[str]]]] = {}
        for path in dict.fromkeys(self.renamed.get(p, p) for p in sorted(self.defining)):   # a later step moved it
            owners[path] = {line: (self.applied[step].id, self._redefined(step, hunk))
                            for line, (step, hunk) in self.ledger.get(path, {}).items()}
        self.result.warnings += shadowed_definitions(self.git, self.tip, owners, self.findings)

    def account_duplicate_keys(self) -> None:
        """A key an entry landed in a dict display that the composed module writes again in the same display,
        by another entry or upstream (pipeline.dictkeys): the later value wins, the earlier is dead. A warning,
        as `account_shadowed`'s."""
        if not self.tip or not self.keying:
            return
        from carrytool.pipeline.dictkeys import duplicate_keys

        removed: dict[Owner, tuple[str, frozenset[object]]] = {}      # each hunk's keys, read once
        for owner in {o for p in self.keying for o in self.ledger.get(self.renamed.get(p, p), {}).values()}:
            step, hunk = owner
            removed[owner] = (self.applied[step].id, written_keys(self.entries[step].own[hunk].removed))
        owners = {path: {line: removed[owner] for line, owner in self.ledger.get(path, {}).items()}
                  for path in dict.fromkeys(self.renamed.get(p, p) for p in sorted(self.keying))}
        self.result.warnings += duplicate_keys(self.git, self.tip, owners, self.findings)

    def account_unbound(self) -> None:
        """A name the composed module loads that nothing binds any more, where an `on_conflict: theirs` step
        overrode upstream lines (pipeline.unbound): bound (or unused) before that step and in the entry's own
        version, unbound after it and at the tip. The binding the step's resolution dropped is named."""
        if not self.overridden:
            return
        from carrytool.pipeline.unbound import loose_names, unbound_names

        for index, path in self.overridden:
            at = self.renamed.get(path, path)
            tip = self.git.file_at(self.tip, at) if self.tip else None     # type: ignore[arg-type]
            loose = unbound_names(tip) if tip is not None else None
            if not loose:
                continue
            step = self.applied[index]
            versions = [self.git.file_at(commit, path) if commit else None   # type: ignore[arg-type]
                        for commit in (step.commit if step.commit != self.tip else None, step.parent, step.head)]
            after, before, own = [loose_names(data) if data is not None else frozenset() for data in versions]
            if after is None or before is None or own is None:
                continue
            for name, line in sorted(loose.items(), key=lambda item: item[1]):
                if (versions[0] is None or name in after) and name not in before and name not in own:
                    self.result.warnings.append(self._unbound(step, at, name, line, versions[1]))

    def _unbound(self, step: Step, path: str, name: str, line: int, before: bytes | None) -> dict[str, object]:
        from carrytool.pipeline.unbound import binding_line

        bound = binding_line(before, name) if before is not None else None
        text = before.split(b"\n")[bound - 1].strip().decode("utf-8", "replace") if before and bound else None
        dropped = f" dropped `{text}` (line {bound} before it)" if text else " dropped its binding"
        return {"kind": "unbound-name", "entry": step.id, "file": path, "name": name, "line": line,
                "dropped": {"line": bound, "text": text} if text else None,
                "message": f"{path} uses {name} at line {line}, which nothing binds any more: {step.id} "
                           f"(on_conflict: {step.resolution}){dropped}; the module raises NameError when line "
                           f"{line} runs"}

    def _redefined(self, step: int, hunk: int) -> frozenset[str]:
        """The names hunk HUNK of applied step STEP removes a definition of: a def line it rewrites (a new
        signature) defines nothing new (helper-106: upstream's own pair was blamed on the PR)."""
        key = (step, hunk)
        found = self._removed_names.get(key)
        if found is None:
            found = self._removed_names[key] = defined_names(self.entries[step].own[hunk].removed)
        return found
