"""explain's pair merges run in a merge-tree process of their own while sync's plan is composed: the
report is the one the merges give when they run after composing, in the run's own merge-tree."""

from __future__ import annotations

import inspect
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from carrytool.gitlayer.git import Change, Git, LaterMerges
from carrytool.gitlayer.mergepipe import MergePipe
from carrytool.manifest.model import Entry
from carrytool.pipeline import sync
from carrytool.pipeline.hunks import Hunk
from carrytool.pipeline.keptmerges import KeptMerges
from carrytool.review import explain as explain_module
from carrytool.review import overlap as overlap_module
from carrytool.review.evidence import EntryFacts, Sources
from carrytool.review.overlap import StartedOverlaps
from carrytool.review.overlap_pairs import PairMerger
from tests.conftest import Cli, Small
from tests.review.test_explain_upstream_has import A, build
from tests.review.test_pair_decisions import _pair_batches
from tests.review.test_reduced_pairs import _corpus


def test_pair_merges_beside_composing_give_the_same_report(cli: Cli, small: Small,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    started: list[int] = []
    real = LaterMerges.add

    def spy(self: LaterMerges, pairs):  # noqa: ANN001, ANN202 - merges sent as they are known
        assert self._git._merge_pipe is not None    # composing has its own
        if not started:
            started.append(0)
        started[0] += len(pairs)
        return real(self, pairs)

    events: list[str] = []
    real_patches = Git.diff_patches

    def patches(self: Git, pairs):  # noqa: ANN001, ANN202
        events.append(f"patches {len(pairs)}")
        return real_patches(self, pairs)

    def spy_later(self: LaterMerges, pairs):  # noqa: ANN001, ANN202
        if pairs and "pairs" not in events:
            events.append("pairs")
        return spy(self, pairs)

    order: list[str] = []      # a pair merge prepared; a chunk of them sent to git
    real_prepare, real_send = PairMerger._on_shared_files, LaterMerges._send
    monkeypatch.setattr(PairMerger, "_on_shared_files",
                        lambda self, job, pair: (order.append("prepare"), real_prepare(self, job, pair))[1])
    monkeypatch.setattr(LaterMerges, "_send", lambda self, chunks: (order.append("send"), real_send(self, chunks))[1])
    real_later = Git.patches_later

    def patches_later(self: Git, pairs):  # noqa: ANN001, ANN202
        events.append(f"patches later {len(pairs)}")
        return real_later(self, pairs)

    monkeypatch.setattr(LaterMerges, "add", spy_later)
    monkeypatch.setattr(Git, "diff_patches", patches)
    monkeypatch.setattr(Git, "patches_later", patches_later)
    code, beside = cli.json(*args)
    assert started and started[0] >= 15              # every decidable pair of the corpus, to the one process
    # every entry's patch started first, then the pairs: the hunks are parsed in explain's thread, and the
    # foreground only reads the landing's patches (none of the nine at once)
    assert events[:2] == ["patches later 9", "pairs"] and "patches 9" not in events, events
    # git has the first chunk while the next pairs are prepared, not once every pair is
    assert "send" in order and order.index("send") < len(order) - 1 - order[::-1].index("prepare")
    monkeypatch.setattr(PairMerger, "concurrently", False)
    started.clear()
    after_code, after = cli.json(*args)
    assert not started
    assert (code, beside) == (after_code, after)
    assert any(o["kind"] == "conflict" for o in beside["overlaps"]) and beside["plan"]["pairs_merged"] >= 15


def test_the_entries_patches_are_read_while_git_merges_them_onto_upstream(cli: Cli, small: Small,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """explain's diff-tree of every entry's patch starts before the merges onto upstream, so git reads the
    hunks on another core while they merge; the hunks come from that process, parsed in explain's thread
    (none is read in the foreground)."""
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    events: list[str] = []
    real_later, real_merges, real_read = Git.patches_later, Git.merge_trees, Git._read_patches

    def patches_later(self: Git, pairs):  # noqa: ANN001, ANN202
        events.append(f"patches later {len(pairs)}")
        return real_later(self, pairs)

    def merges(self: Git, pairs, **kwargs):  # noqa: ANN001, ANN003, ANN202
        events.append("merges")
        return real_merges(self, pairs, **kwargs)

    def read(self: Git, trees):  # noqa: ANN001, ANN202
        events.append(f"read {len(trees)}")
        return real_read(self, trees)

    real_account = sync.account

    def account(git: Git, steps, *tip):  # noqa: ANN001, ANN002, ANN202
        events.append("landing")
        return real_account(git, steps, *tip)

    monkeypatch.setattr(Git, "patches_later", patches_later)
    monkeypatch.setattr(Git, "merge_trees", merges)
    monkeypatch.setattr(Git, "_read_patches", read)
    monkeypatch.setattr(sync, "account", account)
    code, found = cli.json(*args)
    assert events[:2] == ["patches later 9", "merges"], events      # every entry's patch, then the merges alone
    before_landing = events[:events.index("landing")]         # (landing reads the composed commits' diffs)
    assert not [e for e in before_landing if e.startswith("read")], events     # none in the foreground
    assert code == 0 and found["overlaps"] and all(o["files"] for o in found["overlaps"])


def test_blame_reads_regions_from_the_merges_made_and_decides_the_same(cli: Cli, small: Small,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the later entry of a pair conflicts with upstream alone, explain weighs the earlier one by
    blame's rule from the conflict regions of the two merges it already made, not from two more merges."""
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    merged: list[tuple] = []
    real = Git.merge_contents_many

    def spy(self: Git, triples):  # noqa: ANN001, ANN202
        merged.extend(triples)
        return real(self, triples)

    monkeypatch.setattr(Git, "merge_contents_many", spy)
    monkeypatch.setattr("carrytool.pipeline.compose_conflicts.meets_conflict_many",      # sync's own asks
                        lambda *a, other_trees, **k: [False] * len(other_trees))
    monkeypatch.setattr("carrytool.pipeline.compose_conflicts.regions_differ", lambda *a, **k: False)
    code, read = cli.json(*args)
    assert merged == []
    monkeypatch.setattr(PairMerger, "regions_from_merges", False)
    again_code, again = cli.json(*args)
    assert len(merged) >= 2                     # the pairs in question: pr/2 and pr/4, pr/9 beside others
    assert (code, read["overlaps"]) == (again_code, again["overlaps"])


def test_prs_merged_alone_as_composing_merges_them_give_the_same_report(cli: Cli, small: Small,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """explain merges each PR alone onto upstream in the form composing uses (a stand-in with upstream's
    tree whose only parent is the PR's sole merge base): composing then finds those answers kept and
    sends git none of them again; the report is the one of merging onto upstream itself."""
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    sent: list[int] = []       # the batches sent to the run's merge-tree (the pair merges have their own)
    real = MergePipe.send_many

    def spy(self: MergePipe, lines):  # noqa: ANN001, ANN202
        sent.append(len(lines))
        return real(self, lines)

    monkeypatch.setattr(MergePipe, "send_many", spy)
    monkeypatch.setattr("carrytool.gitlayer.treemerge._cores", lambda: 1)    # one process per batch: countable
    monkeypatch.setattr(KeptMerges, "get", lambda self, key: None)    # both runs merge every chained merge
    monkeypatch.setattr(PairMerger, "alone_directly", False)          # every PR alone merged (tested on its own)
    code, shared = cli.json(*args)
    shared_sent = list(sent)
    monkeypatch.setattr(PairMerger, "share_with_compose", False)
    sent.clear()
    own_code, own = cli.json(*args)
    # explain's nine, then composing asks again those of the nine it cannot write directly into
    # upstream's tree (see Composer._onto_upstream_directly) ... which it no longer sends when shared
    assert sent[0] == 9 and shared_sent[:1] == sent[:1] and 0 < sent[1] <= 9
    assert shared_sent[1:] == sent[2:]
    assert (code, shared) == (own_code, own)


def test_scopes_parsed_in_a_thread_beside_composing_give_the_same_report(cli: Cli, small: Small,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """explain parses the scopes (compare) in a thread of its own while the main thread composes; that
    thread never speaks to the run's git processes (every blob it parses is read first, by a cat-file
    process of its own) and the report is the one of comparing in the main thread. Python's switch interval is back to what it was afterwards."""
    _scoped_corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    compared_in: list[str] = []
    read_in: list[str] = []
    real_compare, real_read = StartedOverlaps.compare, Git.read_object

    def compare(self: StartedOverlaps, sources):  # noqa: ANN001, ANN202
        compared_in.append(threading.current_thread().name)
        return real_compare(self, sources)

    def read_object(self: Git, name: str):  # noqa: ANN202
        read_in.append(threading.current_thread().name)
        return real_read(self, name)

    blobs_in: list[tuple[str, int]] = []
    real_later = Git.blob_reader_later

    def blob_reader_later(self: Git):  # noqa: ANN202
        read = real_later(self)

        def run(oids):  # noqa: ANN001, ANN202
            found = read(oids)
            blobs_in.append((threading.current_thread().name, len(found)))
            return found
        return run

    monkeypatch.setattr(StartedOverlaps, "compare", compare)
    monkeypatch.setattr(Git, "read_object", read_object)
    monkeypatch.setattr(Git, "blob_reader_later", blob_reader_later)
    monkeypatch.setattr(Git, "read_blobs", lambda *a: pytest.fail("blobs read in the foreground"))
    interval = sys.getswitchinterval()
    code, threaded = cli.json(*args)
    assert compared_in == ["carrytool-compare"] and not {"carrytool-compare", "carrytool-blobs"} & set(read_in)
    # its own process, while git writes the patches: every blob the hunks name was among those
    assert len(blobs_in) == 1 and blobs_in[0][0] == "carrytool-blobs" and blobs_in[0][1] >= 3
    assert sys.getswitchinterval() == interval
    assert any(o["scopes"] for o in threaded["overlaps"])          # the thread did parse something
    monkeypatch.setattr(StartedOverlaps, "concurrently", False)
    compared_in.clear()
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")    # parsed again, not read back
    again_code, again = cli.json(*args)
    assert compared_in == [threading.main_thread().name]
    assert (code, threaded) == (again_code, again)


def test_the_scopes_of_files_diffs_share_are_parsed_while_git_merges_the_entries_alone(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """explain's parsing starts before the entries are merged alone onto upstream (whose answers the pairs need):
    a thread sets the hunks and parses the scopes of the files two entries' diffs share, and the pairs' thread
    finds them parsed. It parses exactly what comparing the pairs parses, no more (pkg/u.py: the first of its
    two PRs changes a module-level line, so the second's scopes there are never asked), and the report is the
    one of parsing after the merges."""
    _scoped_corpus(small, module_level=True)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    parsed: list[tuple[str, str, str, int]] = []     # (thread, entry, path, first line) of each hunk's scopes read
    events: list[str] = []
    real_scopes_of, real_alone, real_ahead = EntryFacts.scopes_of, PairMerger.alone, overlap_module._HeadStart.__init__

    def scopes_of(self: EntryFacts, hunk: Hunk, sources: Sources) -> list[str]:
        if id(hunk) not in self._scopes:
            parsed.append((threading.current_thread().name, self.id, hunk.path, hunk.new_start))
        return real_scopes_of(self, hunk, sources)

    def alone(self: PairMerger, order):  # noqa: ANN001, ANN202
        events.append("alone")
        return real_alone(self, order)

    def ahead(self, *a, **k) -> None:  # noqa: ANN001, ANN002, ANN003
        events.append("ahead")
        real_ahead(self, *a, **k)

    monkeypatch.setattr(EntryFacts, "scopes_of", scopes_of)
    monkeypatch.setattr(PairMerger, "alone", alone)
    monkeypatch.setattr(overlap_module._HeadStart, "__init__", ahead)
    code, early = cli.json(*args)
    assert events == ["ahead", "alone"]
    assert {t for t, *_ in parsed} == {"carrytool-ahead"}          # every scope the pairs need, parsed ahead
    assert any(p == "pkg/u.py" for _t, _e, p, _l in parsed) and ("pr/6", "pkg/u.py") not in \
        {(e, p) for _t, e, p, _l in parsed}
    assert any(o["entries"] == ["pr/5", "pr/6"] and not o["scopes"] for o in early["overlaps"])
    first = sorted(item[1:] for item in parsed)
    monkeypatch.setattr(StartedOverlaps, "parse_ahead", False)
    parsed.clear()
    events.clear()
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")    # parsed again, not read back
    again_code, again = cli.json(*args)
    assert events == ["alone"] and {t for t, *_ in parsed} == {"carrytool-compare"}
    assert sorted(item[1:] for item in parsed) == first             # the same parsing, no more
    assert (code, early) == (again_code, again)


def test_the_thread_reads_each_shared_files_blobs_once_per_entry(cli: Cli, small: Small,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """explain's parsing reads the blobs it will parse in a process of its own, started before git merges the
    entries alone (the head start): first those the changes name (both sides of each Python file an entry's
    diff shares with another's), while git writes the patches; then, with the hunks, each entry's blobs of each
    such file (a pair shares no other). Each entry's blobs of a file are asked once however many pairs share it
    (not once per pair): the same blobs the pairs name, all among the first."""
    _scoped_corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    asked: list[tuple[str, str]] = []
    real_blobs_in = EntryFacts.blobs_in

    def blobs_in(self: EntryFacts, path: str) -> set[str]:
        asked.append((self.id, path))
        return real_blobs_in(self, path)

    preloaded: list[list[str]] = []
    made: list[str] = []
    started: list[StartedOverlaps] = []
    real_preload, real_compare_later = Sources.preload_later, StartedOverlaps.compare_later

    def compare_later(self: StartedOverlaps, sources: Sources, hunks=None) -> None:  # noqa: ANN001
        started.append(self)
        real_compare_later(self, sources, hunks)

    def preload_later(self: Sources):  # noqa: ANN202
        made.append(threading.current_thread().name)
        fill = real_preload(self)
        return lambda oids: (preloaded.append(list(oids)), fill(preloaded[-1]))[1]

    monkeypatch.setattr(EntryFacts, "blobs_in", blobs_in)
    monkeypatch.setattr(Sources, "preload_later", preload_later)
    monkeypatch.setattr(StartedOverlaps, "compare_later", compare_later)
    code, report = cli.json(*args)
    assert code in (0, 3) and len(preloaded) == 2 and len(started) == 1 and made == ["MainThread"]   # one process
    assert asked and len(asked) == len(set(asked))                  # once per entry and file
    overlaps = started[0]
    by_pair = {oid for i, j in overlaps.pairs for path in set(overlaps.order[i].files) & set(overlaps.order[j].files)
               for oid in real_blobs_in(overlaps.order[i], path) | real_blobs_in(overlaps.order[j], path)}
    assert preloaded[1] == sorted(by_pair) and len(by_pair) >= 3 and by_pair <= set(preloaded[0])
    assert sum(1 for i, j in overlaps.pairs for f in (i, j) if overlaps.order[f].id == asked[0][0]) >= 2


def test_a_hunks_change_is_the_first_at_its_path_and_follows_the_list() -> None:
    def change(path: str, oid: str) -> Change:
        return Change("M", path, None, "100644", "100644", "1" * 40, oid)

    def hunk(path: str) -> Hunk:
        return Hunk(path, 1, 1, 1, 1)

    facts = EntryFacts(Entry("pr", number=1), None, changes=[change("a.py", "2" * 40), change("b.py", "3" * 40),
                                                             change("a.py", "4" * 40)])
    assert facts.change_of(hunk("a.py")).new_oid == "2" * 40 and facts.change_of(hunk("c.py")) is None
    facts.changes.append(change("c.py", "5" * 40))                 # the list grew: asked again
    assert facts.change_of(hunk("c.py")).new_oid == "5" * 40
    facts.changes = [change("a.py", "6" * 40)]                     # another list of the same length
    assert facts.change_of(hunk("a.py")).new_oid == "6" * 40 and facts.change_of(hunk("b.py")) is None


def _method(name: str, edits: dict[int, str]) -> str:
    return f"    def {name}(self):\n" + "".join(f"        {edits.get(i, f'{name}_{i} = {i}')}\n" for i in range(6)) + "\n"


def _module(edits: dict[str, dict[int, str]]) -> str:
    """A class of three methods and a function, each line of which a PR may replace."""
    return "class Worker:\n" + "".join(_method(m, edits.get(m, {})) for m in ("a", "b", "c")) + \
        "\ndef helper():\n" + "".join(f"    {edits.get('helper', {}).get(i, f'h_{i} = {i}')}\n" for i in range(6))


_TOP = "LIMIT = 0\nNAME = 'n'\n\n"      # module-level lines above pkg/u.py's class


def _scoped_corpus(small: Small, module_level: bool = False) -> None:
    """PRs that edit Python files in the same methods, in others, and in the same lines (a conflict).
    MODULE_LEVEL: two more, 5 and 6, that share pkg/u.py: 5 changes a module-level line (no scope), 6 a line
    of `helper`."""
    files = {"pkg/w.py": _module({}), "pkg/v.py": _module({})}
    if module_level:
        files["pkg/u.py"] = _TOP + _module({})
    base = small.up.commit(files, "files", parent="main", ref="refs/heads/main")
    small.up.commit({"pkg/w.py": _module({"c": {5: "upstream = 1"}})}, "upstream", parent=base,
                    ref="refs/heads/main")
    plan = {1: {"pkg/w.py": {"a": {1: "one = 1"}}, "pkg/v.py": {"helper": {2: "one = 1"}}},
            2: {"pkg/w.py": {"a": {4: "two = 2"}, "b": {0: "two = 2"}}},
            3: {"pkg/w.py": {"b": {0: "three = 3"}}, "pkg/v.py": {"helper": {4: "three = 3"}}},
            4: {"pkg/v.py": {"c": {3: "four = 4"}}}}
    for number, edits in plan.items():
        small.up.commit({path: _module(edit) for path, edit in edits.items()}, f"pr {number}", parent=base,
                        ref=f"refs/pull/{number}/head")
    if module_level:
        small.up.commit({"pkg/u.py": _TOP.replace("0", "5") + _module({})}, "pr 5", parent=base,
                        ref="refs/pull/5/head")
        small.up.commit({"pkg/u.py": _TOP + _module({"helper": {1: "six = 6"}})}, "pr 6", parent=base,
                        ref="refs/pull/6/head")
    small.manifest([{"pr": n} for n in [*plan, *((5, 6) if module_level else ())]], policy={"on_conflict": "skip"})


def _moving_corpus(small: Small) -> None:
    """PRs that rename files, one built on an upstream that moved a file the others change (their changes land
    on a path one diff does not name), a stack of two (h273)."""
    files = {f"pkg/{name}.py": _module({}) for name in ("a", "r", "m", "s", "t")}
    base = small.up.commit(files, "files", parent="main", ref="refs/heads/main")
    up = small.up.commit({"pkg/m.py": None, "pkg/m2.py": _module({})}, "upstream moves m", parent=base,
                         ref="refs/heads/main")
    pr = small.up.commit
    pr({"pkg/a.py": _module({"a": {1: "x1 = 1"}}), "pkg/r.py": None, "pkg/r2.py": _module({"b": {2: "x1 = 1"}})},
       "pr 1 renames r", parent=base, ref="refs/pull/1/head")
    pr({"pkg/a.py": _module({"a": {3: "x2 = 2"}}), "pkg/r.py": _module({"b": {4: "x2 = 2"}})},
       "pr 2", parent=base, ref="refs/pull/2/head")
    pr({"pkg/r2.py": _module({"c": {1: "x3 = 3"}}), "pkg/m.py": _module({"helper": {2: "x3 = 3"}})},
       "pr 3 adds r2", parent=base, ref="refs/pull/3/head")
    pr({"pkg/m2.py": _module({"helper": {3: "x4 = 4"}}), "pkg/s.py": _module({"a": {0: "x4 = 4"}})},
       "pr 4 on upstream, m2", parent=up, ref="refs/pull/4/head")
    first = pr({"pkg/s.py": _module({"b": {1: "x5 = 5"}}), "pkg/t.py": _module({"c": {1: "x5 = 5"}})},
               "pr 5", parent=base, ref="refs/pull/5/head")
    pr({"pkg/s.py": _module({"b": {1: "x5 = 5"}, "c": {2: "x6 = 6"}}), "pkg/t.py": _module({"c": {1: "x5 = 5"}})},
       "pr 6 stacked on 5", parent=first, ref="refs/pull/6/head")
    pr({"pkg/t.py": None, "pkg/t_new.py": _module({"a": {0: "x7 = 7"}}), "pkg/a.py": _module({"b": {0: "x7"}})},
       "pr 7 renames t", parent=base, ref="refs/pull/7/head")
    small.manifest([{"pr": n} for n in range(1, 8)], policy={"on_conflict": "skip"})


def test_the_parsing_threads_never_ask_the_runs_git(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the head start's thread nor the pairs' asks anything of the run's Git (its long-lived processes
    answer the thread that composes): a pair that shares a path one of its diffs does not name (upstream moved the
    file) is told which of its own files that is in the main thread (h273: the pairs' thread read upstream's tree
    for it). The report is the one of parsing after the merges, in the main thread."""
    _moving_corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    asked: list[tuple[str, str]] = []
    for name, value in list(vars(Git).items()) + [(n, v) for k in Git.__mro__[1:] for n, v in vars(k).items()]:
        if not callable(value) or name.startswith("__") or not hasattr(Git, name) or \
                isinstance(inspect.getattr_static(Git, name), (staticmethod, classmethod, property)):
            continue

        def spy(*a, _real=getattr(Git, name), _name=name, **k):  # noqa: ANN002, ANN003, ANN202
            if threading.current_thread().name in ("carrytool-ahead", "carrytool-compare"):
                asked.append((threading.current_thread().name, _name))
            return _real(*a, **k)
        monkeypatch.setattr(Git, name, spy)
    told: list[str] = []
    real_own = PairMerger.own_paths

    def own_paths(self: PairMerger, item: EntryFacts, files):  # noqa: ANN001, ANN202
        told.append(threading.current_thread().name)
        return real_own(self, item, files)
    monkeypatch.setattr(PairMerger, "own_paths", own_paths)
    code, threaded = cli.json(*args)
    assert asked == [] and told and set(told) == {"MainThread"}
    monkeypatch.setattr(StartedOverlaps, "concurrently", False)
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")    # parsed again, not read back
    assert cli.json(*args) == (code, threaded)


@pytest.mark.parametrize("window", ["carrytool-ahead", "carrytool-compare"])
def test_a_ctrl_c_as_a_parsing_thread_starts_leaves_the_switch_interval_as_it_was(
        cli: Cli, small: Small, window: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C between lowering Python's switch interval and keeping the thread that puts it back (h273: the
    head start's, then the pairs' thread, each interrupted right after it started): explain stops (130), no
    thread is left and the interval is what it was."""
    _scoped_corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    real = Git.join_at_close

    def join_at_close(self: Git, thread: threading.Thread) -> None:
        real(self, thread)
        if thread.name == window:
            raise KeyboardInterrupt
    monkeypatch.setattr(Git, "join_at_close", join_at_close)
    interval = sys.getswitchinterval()
    result = cli(*args, "--format", "json")
    assert result.exit_code == 130 and sys.getswitchinterval() == interval
    assert not any(t.name.startswith("carrytool-") and t.name != "carrytool-blobs" or t.name == "carrytool-blobs"
                   and t.is_alive() for t in threading.enumerate())


def test_an_error_while_git_merges_alone_stops_the_head_start_before_its_next_file(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the merges alone raise goes on once the head start's thread has stopped, which parses no further file
    then (h273: a Ctrl-C waited for every shared file's scopes)."""
    _scoped_corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    entered, go = threading.Event(), threading.Event()
    paths: list[str] = []
    real_scopes_in, real_stop = EntryFacts.scopes_in, overlap_module._HeadStart.stop

    def scopes_in(self: EntryFacts, path: str, sources: Sources) -> frozenset[str]:
        if threading.current_thread().name == "carrytool-ahead":
            if not paths:
                entered.set()
                go.wait(10)
            paths.append(path)
        return real_scopes_in(self, path, sources)

    def stop(self, *, soon: bool = False) -> None:  # noqa: ANN001
        if soon:
            self.halt.set()
        go.set()
        real_stop(self, soon=soon)

    def alone(self: PairMerger, order):  # noqa: ANN001, ANN202
        assert entered.wait(10)
        raise RuntimeError("boom in the merges alone")

    monkeypatch.setattr(EntryFacts, "scopes_in", scopes_in)
    monkeypatch.setattr(overlap_module._HeadStart, "stop", stop)
    monkeypatch.setattr(PairMerger, "alone", alone)
    interval = sys.getswitchinterval()
    with pytest.raises(RuntimeError, match="boom in the merges alone"):
        cli.json(*args)
    assert len(set(paths)) == 1 and sys.getswitchinterval() == interval     # two shared files: the first only
    assert not any(t.name == "carrytool-ahead" for t in threading.enumerate())


@pytest.mark.parametrize("where", ["thread", "ahead", "alone", "composing"])
def test_a_failure_beside_the_parsing_thread_stops_it_and_is_raised(cli: Cli, small: Small, where: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """What the parsing thread raises reaches explain's caller (in its head start, before the merges alone, or
    later); what the merges alone or composing raise meanwhile waits for the thread to stop first. Either way
    no thread is left behind and the switch interval is restored."""
    _corpus(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache", ignore_errors=True)

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"boom in {threading.current_thread().name}")

    if where == "thread":
        monkeypatch.setattr("carrytool.review.overlap._compare", boom)
        expected = "boom in carrytool-compare"
    elif where == "ahead":
        monkeypatch.setattr("carrytool.review.overlap._scopes_ahead", boom)
        expected = "boom in carrytool-ahead"
    elif where == "alone":
        monkeypatch.setattr(PairMerger, "alone", boom)
        expected = "boom in MainThread"
    else:
        monkeypatch.setattr("carrytool.pipeline.sync.stale_folds", boom)   # the first step of composing
        expected = "boom in MainThread"
    interval = sys.getswitchinterval()
    with pytest.raises(RuntimeError, match=expected):
        cli.json(*args)
    assert sys.getswitchinterval() == interval
    assert not any(t.name in ("carrytool-compare", "carrytool-ahead") for t in threading.enumerate())


def _upstream_has_some(small: Small) -> None:
    """PRs 1 and 4 are on upstream already (cherry-picked there); 2 conflicts with upstream alone where 1
    changed the file, 3 edits elsewhere in it, 5 conflicts with 3, and 4 has a second file 2 touches."""
    def body(edits: dict[int, str]) -> str:
        return "".join(f"{edits.get(i, f'line {i}')}\n" for i in range(30))

    base = small.up.commit({"pkg/a.txt": body({}), "pkg/b.txt": body({})}, "files", parent="main",
                           ref="refs/heads/main")
    pr1 = {"pkg/a.txt": body({5: "pr 1"})}
    pr4 = {"pkg/a.txt": body({25: "pr 4"}), "pkg/b.txt": body({3: "pr 4"})}
    small.up.commit({"pkg/a.txt": body({5: "pr 1", 25: "pr 4", 15: "upstream"}), "pkg/b.txt": body({3: "pr 4"})},
                    "upstream takes pr 1 and pr 4", parent=base, ref="refs/heads/main")
    heads = {1: pr1, 2: {"pkg/a.txt": body({5: "pr 2"}), "pkg/b.txt": body({20: "pr 2"})},
             3: {"pkg/a.txt": body({10: "pr 3"})}, 4: pr4, 5: {"pkg/a.txt": body({10: "pr 5"})}}
    for number, files in heads.items():
        small.up.commit(files, f"pr {number}", parent=base, ref=f"refs/pull/{number}/head")
    small.manifest([{"pr": n} for n in heads], policy={"on_conflict": "skip"})


def test_pairs_whose_first_changes_nothing_on_upstream_are_decided_without_a_merge(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PR upstream already has, merged alone, gives upstream's tree: a later PR merged onto it is that
    PR's own merge onto upstream, which cannot conflict by the earlier one. Those pairs are decided without
    merging, and the report is the one of merging them."""
    _upstream_has_some(small)
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    merged = _pair_batches(monkeypatch)
    code, settled = cli.json(*args)
    reasons = {e["id"]: e.get("reason") for e in settled["entries"]}
    assert reasons["pr/1"] == reasons["pr/4"] == "merged-upstream"
    pairs = settled["plan"]["pairs_merged"]
    monkeypatch.setattr(PairMerger, "settle_unchanged", False)
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")      # no decision kept: merged again
    again_code, again = cli.json(*args)
    # all ten pairs share a.txt; pr/1 or pr/4 is the first (the earlier entry merged alone, or the other
    # when the earlier conflicts with upstream alone, as pr/2 does) of (1,2) (1,3) (1,4) (1,5) (4,2) (4,5),
    # and pr/4 the second of (3,4): only (2,3) (2,5) (3,5) merge. Merged all (settle_unchanged off), (1,5) and
    # (4,5) are one merge: both firsts gave upstream's a.txt, the shared file their merges hold alone
    assert merged == [3, 9] and pairs == 10
    assert (code, settled) == (again_code, again)
    kinds = {tuple(o["entries"]): o["kind"] for o in settled["overlaps"]}
    assert kinds[("pr/3", "pr/5")] == "conflict"           # a pair that still merges still conflicts
    # pr/1 and pr/4 were skipped as merged upstream: their pairs, decided all the same, are left out of the map
    assert not any({"pr/1", "pr/4"} & set(pair) for pair in kinds)
    assert settled["plan"]["overlaps_left_out"] == ["pr/1", "pr/4"]


def test_what_upstream_has_is_read_while_git_still_merges_the_pairs(cli: Cli, small: Small,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """What upstream already has of the entries that conflict with it alone follows from their merges alone:
    explain reads it before it waits for the pair merges (60 xarray PRs: 0.3 s of the 0.8 s it waited for
    them), and says the same as when the pairs are merged first, in the run's own merge-tree."""
    build(small)                       # pr/1: upstream merged it as another commit
    small.pr(2, {"a.py": A.replace("return 2", "return 3")}, parent=small.base)
    small.pr(3, {"a.py": A.replace("a = 1", "a = 2")}, parent=small.base)
    small.manifest([{"pr": n, "on_conflict": "skip"} for n in (1, 2, 3)])
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    events: list[str] = []
    real_has, real_answers = explain_module.upstream_has, LaterMerges.__call__

    def has(*args: object, **kwargs: object):  # noqa: ANN202
        events.append("upstream_has")
        return real_has(*args, **kwargs)

    def answers(self: LaterMerges):  # noqa: ANN202
        events.append("pair answers")
        return real_answers(self)

    monkeypatch.setattr(explain_module, "upstream_has", has)
    monkeypatch.setattr(LaterMerges, "__call__", answers)
    code, beside = cli.json(*args)
    assert events == ["upstream_has", "pair answers"]
    assert beside["plan"]["upstream_has"]["pr/1"]["likely_merged"] and beside["plan"]["pairs_merged"] == 3
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")      # no decision kept: merged again
    monkeypatch.setattr(PairMerger, "concurrently", False)
    events.clear()
    assert cli.json(*args) == (code, beside) and events == ["upstream_has"]


def _children() -> list[str]:
    """The command lines of this process's children (Linux: /proc)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) != os.getpid():
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                out.append(f.read().replace(b"\0", b" ").decode())
        except (OSError, ValueError, IndexError):
            continue
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the children from /proc")
@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_a_failure_reading_what_upstream_has_while_the_pairs_merge_stops_them(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]) -> None:
    """h272's review: what upstream has is read while the pair merges' merge-tree still runs; when reading it
    fails (or is interrupted), that error reaches the caller, and no git process or thread is left."""
    build(small)
    small.pr(2, {"a.py": A.replace("return 2", "return 3")}, parent=small.base)
    small.pr(3, {"a.py": A.replace("a = 1", "a = 2")}, parent=small.base)
    small.manifest([{"pr": n, "on_conflict": "skip"} for n in (1, 2, 3)])
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    seen: dict[str, object] = {}

    def boom(git: Git, *a: object, **k: object):  # noqa: ANN202
        seen["pipes"], seen["children"] = list(git._later_pipes), _children()
        raise error("boom in upstream_has")

    monkeypatch.setattr(explain_module, "upstream_has", boom)
    if error is KeyboardInterrupt:
        assert cli(*args).exit_code == 130
    else:
        with pytest.raises(RuntimeError, match="boom in upstream_has"):
            cli.json(*args)
    assert seen["pipes"] and any("merge-tree" in c for c in seen["children"]), seen   # still merging then
    time.sleep(0.2)
    assert not [c for c in _children() if "git" in c]
    assert not [t.name for t in threading.enumerate() if t.name.startswith("carrytool")]


def _slow_blob_reads(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch, log: list[str]) -> None:
    """The scoped corpus, explain's parsing thread slow to read its blobs, and a Ctrl-C while composing
    (once that thread reads); LOG says whether the thread was still alive when the scratch went."""
    _scoped_corpus(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    real_later, real_release = Git.blob_reader_later, Git._release_keeps
    reading = threading.Event()

    def later(self: Git):  # noqa: ANN202
        read = real_later(self)

        def run(oids):  # noqa: ANN001, ANN202
            reading.set()
            time.sleep(1.0)                       # a slow cat-file (a large repository, a busy machine)
            try:
                return read(oids)
            finally:
                log.append("read")
        return run

    def release(self: Git) -> None:          # close's last step before the scratch is removed
        alive = any(t.name in ("carrytool-compare", "carrytool-blobs") and t.is_alive() for t in threading.enumerate())
        log.append(f"scratch goes, thread alive: {alive}")
        real_release(self)

    def interrupt(*a: object, **k: object) -> None:
        reading.wait(5)
        raise KeyboardInterrupt

    monkeypatch.setattr(Git, "blob_reader_later", later)
    monkeypatch.setattr(Git, "_release_keeps", release)
    monkeypatch.setattr("carrytool.pipeline.sync.stale_folds", interrupt)


@pytest.mark.parametrize("interrupts", [1, 2])
def test_a_ctrl_c_while_the_thread_reads_its_blobs_waits_for_it_before_the_scratch_goes(
        cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch, interrupts: int) -> None:
    """The parsing thread's cat-file reads the run's scratch: a Ctrl-C while composing waits for it, and so
    does a second Ctrl-C during that wait (close joins it), before the scratch is removed."""
    log: list[str] = []
    _slow_blob_reads(cli, small, monkeypatch, log)
    if interrupts == 2:
        real_join, fired = threading.Thread.join, []

        def join(self: threading.Thread, timeout: float | None = None) -> None:
            if self.name == "carrytool-compare" and not fired:
                fired.append(True)
                raise KeyboardInterrupt                # the second Ctrl-C, during the wait
            real_join(self, timeout)

        monkeypatch.setattr(threading.Thread, "join", join)
    result = cli("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert result.exit_code == 130
    assert log == ["read", "scratch goes, thread alive: False"]


def test_a_pr_upstream_already_has_conflicts_with_no_earlier_entry(cli: Cli, small: Small) -> None:
    """A later PR upstream already has is never composed (sync skips it as merged-upstream, even where the
    chained merge onto an earlier entry conflicts): an earlier PR that rewrote its lines on top of upstream
    does not conflict with it (a trial on python/mypy: pr/21868 "conflicted" with pr/21839, merged upstream,
    every morning). Its pairs are left out of the overlap map, as every merged-upstream entry's are (h244)."""
    def body(edits: dict[int, str]) -> str:
        return "".join(f"{edits.get(i, f'line {i}')}\n" for i in range(30))

    base = small.up.commit({"pkg/a.txt": body({})}, "files", parent="main", ref="refs/heads/main")
    small.up.commit({"pkg/a.txt": body({5: "pr 2"})}, "pr 2", parent=base, ref="refs/pull/2/head")
    upstream = small.up.commit({"pkg/a.txt": body({5: "pr 2"})}, "upstream takes pr 2", parent=base,
                               ref="refs/heads/main")
    small.up.commit({"pkg/a.txt": body({5: "pr 2, then pr 1"})}, "pr 1", parent=upstream, ref="refs/pull/1/head")
    small.manifest([{"pr": 1}, {"pr": 2}])
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path)
    assert code == 0
    assert {e["id"]: e.get("reason") for e in report["entries"]} == {"pr/1": None, "pr/2": "merged-upstream"}
    assert report["overlaps"] == [] and report["plan"]["overlaps_left_out"] == ["pr/2"]
    assert report["suggestions"] == []


def test_entries_that_change_a_file_alike_share_its_scopes(cli: Cli, small: Small,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A stack of PRs on one branch changes most files alike: the scopes of those changes are read once for
    every entry that has them (EntryFacts.scopes_in), and the report is the one of reading them per entry."""
    base = small.up.commit({"pkg/w.py": _module({}), "pkg/v.py": _module({})}, "files", parent="main",
                           ref="refs/heads/main")
    one = small.up.commit({"pkg/w.py": _module({"a": {1: "one = 1"}, "b": {2: "one = 2"}})}, "pr 1",
                          parent=base, ref="refs/pull/1/head")
    two = small.up.commit({"pkg/v.py": _module({"c": {3: "two = 3"}})}, "pr 2 on pr 1", parent=one,
                          ref="refs/pull/2/head")
    small.up.commit({"pkg/v.py": _module({"c": {3: "two = 3"}, "helper": {1: "three = 1"}})}, "pr 3 on pr 2",
                    parent=two, ref="refs/pull/3/head")
    small.up.commit({"pkg/w.py": _module({"a": {1: "four = 1"}})}, "pr 4", parent=base, ref="refs/pull/4/head")
    small.manifest([{"pr": n} for n in (1, 2, 3, 4)], policy={"on_conflict": "skip"})
    args = ("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")   # fetches
    asked: list[str] = []
    real_scopes_of = EntryFacts.scopes_of

    def scopes_of(self: EntryFacts, hunk: Hunk, sources: Sources) -> list[str]:
        asked.append(self.id)
        return real_scopes_of(self, hunk, sources)

    monkeypatch.setattr(EntryFacts, "scopes_of", scopes_of)
    code, shared = cli.json(*args)
    once = sorted(asked)
    monkeypatch.setattr(EntryFacts, "share_scopes", False)
    asked.clear()
    shutil.rmtree(Path(small.work.path) / "carrytool" / "cache")
    again_code, again = cli.json(*args)
    # pkg/w.py: pr/1, 2 and 3 change it alike (2 hunks, read once), pr/4 otherwise (1); pkg/v.py: pr/2 (1 hunk)
    # and pr/3 (2) differ
    assert sorted(asked) == ["pr/1", "pr/1", "pr/2", "pr/2", "pr/2", "pr/3", "pr/3", "pr/3", "pr/3", "pr/4"]
    assert once == ["pr/1", "pr/1", "pr/2", "pr/3", "pr/3", "pr/4"]
    assert (code, shared) == (again_code, again)
    scopes = {tuple(o["entries"]): o["scopes"] for o in shared["overlaps"]}
    assert scopes[("pr/1", "pr/4")] == ["Worker.a"] and scopes[("pr/2", "pr/3")] == ["Worker.a", "Worker.b", "Worker.c"]
