"""What explain's overlap map keeps per pair and per entry, kept short for PRs built on one branch (h188:
cold explain of 60 polars PRs, a dozen on one 350-file branch, described 99,857 identical hunks of which the
report shows 50 a pair, and scanned a 350-file PR's changes once per shared path)."""

from __future__ import annotations

import pytest

from carrytool.gitlayer.git import Change
from carrytool.manifest.model import Entry
from carrytool.pipeline.hunks import Hunk
from carrytool.review import overlap as overlap_module
from carrytool.review.evidence import EntryFacts, Sources
from carrytool.review.overlap import _classify, _compare, _hunk_keys


def _hunk(path: str, line: int, text: str) -> Hunk:
    return Hunk(path, line, 1, line, 1, (b"old",), (text.encode(),))


def _facts(number: int, hunks: list[Hunk]) -> EntryFacts:
    return EntryFacts(Entry("pr", number=number), None, hunks=hunks)


def test_a_pair_describes_the_identical_hunks_it_shows_and_counts_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first IDENTICAL_SHOWN identical hunks, in the earlier entry's diff order, are described; the
    pair knows how many there are, and its JSON is the one of describing every one."""
    monkeypatch.setattr(overlap_module, "IDENTICAL_SHOWN", 3)
    shared = [_hunk(f"m{i}.txt", i + 1, f"same {i}") for i in range(10)]
    a = _facts(1, [_hunk("a.txt", 1, "only a"), *shared, _hunk("m0.txt", 40, "blank?")])
    b = _facts(2, [*reversed(shared), _hunk("b.txt", 1, "only b")])     # the later lists them the other way
    ids: dict[tuple, int] = {}
    keys_a, keys_b = _hunk_keys(a, ids), _hunk_keys(b, ids)
    files, (described, total), scopes = _compare(a, b, keys_a, keys_b, Sources.__new__(Sources))
    assert described == [{"file": f"m{i}.txt", "lines": [i + 1, i + 1]} for i in range(3)] and total == 10
    data = _classify(a, b, [], (files, (described, total), scopes)).to_json()
    assert data["identical_hunks"] == described and data["identical_hunks_total"] == 10
    assert data["kinds"] == ["identical-hunk", "same-file"]
    few = _classify(a, b, [], (files, (described[:2], 2), scopes)).to_json()
    assert few["identical_hunks"] == described[:2] and "identical_hunks_total" not in few


def _change(path: str, oid: str, old_path: str | None = None, status: str = "M") -> Change:
    return Change(status, path, old_path, "100644", "100644", "1" * 40, oid)


def test_the_changes_at_a_path_are_those_the_whole_list_names_in_its_order() -> None:
    """EntryFacts.changes_at (the key by which entries that change a path alike share its scopes) indexes the
    changes once, by path and old path, and gives what a scan of the whole list gives, in its order."""
    facts = EntryFacts(Entry("pr", number=1), None, changes=[
        _change("a.py", "2" * 40), _change("b.py", "3" * 40, old_path="old/b.py", status="R"),
        _change("c.py", "4" * 40), _change("a.py", "5" * 40)])

    def scan(paths: set[str]) -> tuple[Change, ...]:
        return tuple(c for c in facts.changes if c.path in paths or c.old_path in paths)

    for paths in ({"a.py"}, {"old/b.py"}, {"b.py"}, {"c.py", "a.py"}, {"old/b.py", "c.py"}, {"none.py"}):
        assert facts.changes_at(paths) == scan(paths), paths
    facts.changes.append(_change("d.py", "6" * 40, old_path="a.py", status="R"))    # the list grew: read again
    assert facts.changes_at({"a.py"}) == scan({"a.py"}) and len(scan({"a.py"})) == 3
    facts.changes = [_change("a.py", "7" * 40)]                                     # another list, same length
    assert facts.changes_at({"c.py"}) == () and facts.changes_at({"a.py"}) == scan({"a.py"})
