"""explain keeps what upstream already has of each entry on disk by what decides it (review.hascache), and runs
the `git log -S` that names the commit of each entry side by side (h211, issue 17: after the nightly sync
explain weighed every hunk again and ran the pickaxes one after another): a second explain on the same upstream
weighs nothing and runs no pickaxe, and every way reports exactly what the first did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from carrytool.gitlayer import history
from carrytool.gitlayer.git import Git
from carrytool.review import has_commit, hascache, upstream_has
from carrytool.review.upstream_has import HasFinder
from tests.conftest import Cli, Small

A = "def f():\n    a = 1\n    return a\n\n\ndef g():\n    return 2\n"
B = "def h():\n    b = 1\n    return b\n"
T = "def test_f():\n    assert f() == 1\n"


def build(small: Small) -> tuple[str, str]:
    """Three PRs; upstream merges the first two as commits of its own (their tests rewritten: each conflicts with
    upstream alone), and moves the third's line (it conflicts, and upstream has none of it). Returns the SHAs
    of upstream's two merges."""
    small.base = small.up.commit({"a.py": A, "b.py": B, "c.py": A, "d.py": A, "test_a.py": T, "test_b.py": T}, "base",
                                 parent="main", ref="refs/heads/main")
    a_pr = A.replace("    a = 1\n", "    a = 1\n    reset_flushing_state(a)\n")
    b_pr = B.replace("    b = 1\n", "    b = 1\n    close_the_session(b, hard=True)\n")
    small.pr(1, {"a.py": a_pr, "test_a.py": T + "\n\ndef test_reset():\n    assert flushing() is False\n"},
             message="Reset the flushing state")
    small.pr(2, {"b.py": b_pr, "test_b.py": T + "\n\ndef test_close():\n    assert closed()\n",
                 "d.py": A.replace("    return 2\n", "    return close_the_session(2)\n")},  # upstream leaves
             message="Close the session")                                               # d.py as it was
    small.pr(3, {"c.py": A.replace("    a = 1\n", "    a = 3\n")}, message="Three")
    one = small.up.commit({"a.py": "import os\n\n\n" + a_pr, "test_a.py": T + "\n\ndef test_reset_x():\n    pass\n"},
                          "Reset the flushing state (#1)", parent="main", ref="refs/heads/main")
    two = small.up.commit({"b.py": b_pr + "\n\nX = 1\n", "test_b.py": T + "\n\ndef test_close_x():\n    pass\n"},
                          "Close the session (#2)", parent="main", ref="refs/heads/main")
    small.up.commit({"c.py": A.replace("    a = 1\n", "    a = 2\n")}, "upstream moved", parent="main",
                    ref="refs/heads/main")
    small.manifest([{"pr": n, "on_conflict": "skip"} for n in (1, 2, 3)])
    return one, two


def _spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many entries were weighed and how many `git log -S` ran, each way."""
    calls = {"weigh": 0, "pickaxe": 0, "pickaxe_later": 0, "has": 0}
    for owner, name, said in ((upstream_has, "_weigh_places", "weigh"), (Git, "pickaxe", "pickaxe"),
                              (Git, "pickaxe_later", "pickaxe_later"), (upstream_has, "_places", "has"),
                              (has_commit, "_places", "has")):      # weighing, and naming the commit
        real = getattr(owner, name)

        def counted(*args, _real=real, _name=said, **kwargs):  # noqa: ANN002, ANN003, ANN202
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
    return calls


def _file(small: Small) -> Path:
    [path] = sorted((small.work.path / "carrytool" / "cache").glob("upstreamhas-git*.json"))
    return path


def _explain(cli: Cli, small: Small) -> tuple[int, dict]:
    return cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline", "pr/1", "pr/2")


def test_kept_answers_give_the_report_weighing_gives(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = build(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")     # fetches
    calls = _spy(monkeypatch)
    code, first = _explain(cli, small)
    assert code == 0, first
    has = first["plan"]["upstream_has"]
    assert sorted(first["plan"]["upstream_conflicts"]) == ["pr/1", "pr/2", "pr/3"] and sorted(has) == ["pr/1", "pr/2"]
    assert [has["pr/1"]["commit"], has["pr/2"]["commit"]] == [one, two]
    # both pickaxes side by side; 5 hunks placed, and each commit named placed its hunk in a listed version (2)
    assert calls == {"weigh": 3, "pickaxe": 0, "pickaxe_later": 2, "has": 7}
    # pr/2's d.py hunk is missing unread: upstream's d.py is the base's
    assert len(json.loads(_file(small).read_text())["upstreamhas"]) == 3      # pr/3, which upstream lacks, too
    for key in calls:
        calls[key] = 0
    assert _explain(cli, small) == (code, first)
    assert calls == {"weigh": 0, "pickaxe": 0, "pickaxe_later": 0, "has": 0}   # nothing weighed, no `git log -S`
    monkeypatch.setattr(HasFinder, "keep_answers", False)
    monkeypatch.setattr(HasFinder, "side_by_side", False)
    assert _explain(cli, small) == (code, first)
    assert calls == {"weigh": 3, "pickaxe": 2, "pickaxe_later": 0, "has": 7}   # the old way: one after another
    monkeypatch.setattr(HasFinder, "side_by_side", True)
    assert _explain(cli, small) == (code, first)
    calls["has"] = 0
    monkeypatch.setattr(HasFinder, "skip_unchanged", False)      # every hunk weighed, in every file
    assert _explain(cli, small) == (code, first)
    assert calls["has"] == 6 + 2



def test_one_diff_places_every_entry_and_one_every_commit(cli: Cli, small: Small,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """h242 (issue 17): a cold explain placed each entry's hunks, and each entry's commit, with a `diff-tree` of its
    own, one after another (xarray: 26 processes, the step's git waited for in turn). One `diff-tree` now places
    every entry's hunks and one every commit's versions; each pair of blobs is diffed on its own, so the report is
    the one a `diff-tree` per entry gives, byte for byte."""
    one, two = build(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")     # fetches
    monkeypatch.setattr(HasFinder, "keep_answers", False)
    maps: list[int] = []
    for owner in (upstream_has, has_commit):
        real = owner.BaseMap

        def counted(git, pairs, _real=real):  # noqa: ANN001, ANN202
            pairs = list(pairs)
            maps.append(len(pairs))
            return _real(git, pairs)

        monkeypatch.setattr(owner, "BaseMap", counted)
    code, batched = _explain(cli, small)
    assert code == 0, batched
    has = batched["plan"]["upstream_has"]
    assert [has["pr/1"]["commit"], has["pr/2"]["commit"]] == [one, two]
    assert [has[e]["present"] for e in ("pr/1", "pr/2")] == [1, 1]
    assert len(maps) == 2 and maps[0] >= 2 and maps[1] >= 2    # both entries' pairs in each
    maps.clear()
    monkeypatch.setattr(HasFinder, "batched", False)
    assert _explain(cli, small) == (code, batched)
    assert len(maps) == 4                                      # one for each entry's hunks, one for its commit


def test_an_unreadable_file_only_costs_the_weighing(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    build(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    first = _explain(cli, small)
    path = _file(small)
    kept = json.loads(path.read_text())["upstreamhas"]
    calls = _spy(monkeypatch)
    broken_answers = {key: {**answer, "taken": [99]} if answer["taken"] else {**answer, "trivial": ["x"]}
                      for key, answer in kept.items()}
    # h219: the same hunk counted three times ("present 3 of 2 hunks"), a hunk both had and trivial
    repeated = {key: {**answer, "taken": answer["taken"] * 3, "at": answer["at"] * 3} if answer["taken"] else
                {**answer, "trivial": [0, 0]} for key, answer in kept.items()}
    both = {key: {**answer, "trivial": answer["taken"][:1]} if answer["taken"] else
            {**answer, "taken": [0], "at": [[1, 1]], "trivial": [0]} for key, answer in kept.items()}
    deep = '{"upstreamhas": ' + "[" * 200_000 + "]" * 200_000 + "}"     # h219: RecursionError, exit 70
    for broken in ("{not json", json.dumps({"upstreamhas": broken_answers}), json.dumps({"upstreamhas": [1]}),
                   json.dumps({"upstreamhas": repeated}), json.dumps({"upstreamhas": both}), deep):
        path.write_text(broken)
        calls["weigh"] = 0
        assert _explain(cli, small) == first
        assert calls["weigh"] == 3                      # every entry weighed again, and kept again
        assert json.loads(path.read_text())["upstreamhas"] == kept


@pytest.mark.parametrize("side_by_side", [True, False])
@pytest.mark.parametrize("failing", ["exits", "cannot-start"])
def test_a_failed_pickaxe_names_no_commit_and_is_not_kept(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch,
                                                          side_by_side: bool, failing: str) -> None:
    """h219: a `git log -S` that failed (killed, an error) was taken as listing no commit, and that answer was
    kept: every later explain named no commit where one weighing again names it. Failing: git refuses an
    option, or the process cannot start (an argument over the kernel's limit, E2BIG)."""
    one, two = build(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    real = history._pickaxe_args
    extra = "--no-such-option" if failing == "exits" else "-G" + "x" * 200_000

    def failing_args(*args: str) -> tuple[str, ...]:
        return (*real(*args)[:1], extra, *real(*args)[1:])

    monkeypatch.setattr(history, "_pickaxe_args", failing_args)
    monkeypatch.setattr(HasFinder, "side_by_side", side_by_side)
    code, failed = _explain(cli, small)
    assert code == 0, failed
    has = failed["plan"]["upstream_has"]
    assert sorted(has) == ["pr/1", "pr/2"] and [has["pr/1"]["commit"], has["pr/2"]["commit"]] == [None, None]
    assert len(json.loads(_file(small).read_text())["upstreamhas"]) == 1      # pr/3's only: it runs no `git log -S`
    monkeypatch.setattr(history, "_pickaxe_args", real)
    code, again = _explain(cli, small)
    assert code == 0 and [again["plan"]["upstream_has"][e]["commit"] for e in ("pr/1", "pr/2")] == [one, two]
    assert len(json.loads(_file(small).read_text())["upstreamhas"]) == 3


def test_a_line_over_the_argument_limit_is_no_needle(cli: Cli, small: Small) -> None:
    """h219: a hunk whose longest line is a minified bundle (over 128 kB) made `git log -S<line>` too long to
    start (E2BIG): a traceback, exit 70. The commit is looked up by the longest line within the bound."""
    bundle = "var bundle = [" + ",".join(f'"item_{i}"' for i in range(15_000)) + "];\n"
    small.base = small.up.commit({"app.js": "var x = 1;\nvar y = 2;\n", "m.py": "a = 1\n"}, "base",
                                 parent="main", ref="refs/heads/main")
    took = "var x = 1;\n" + bundle + "var loaded = bundle.length;\nvar y = 2;\n"
    small.pr(1, {"app.js": took, "m.py": "a = 2  # pr\n"}, message="Bundle")
    made = small.up.commit({"app.js": took, "m.py": "a = 3  # upstream\n"}, "upstream takes the bundle",
                           parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "skip"}])
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    code, out = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline", "pr/1")
    assert code == 0, out
    assert out["plan"]["upstream_has"]["pr/1"]["commit"] == made


def test_upstream_moving_on_is_weighed_again(cli: Cli, small: Small, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept answer is upstream's commit's: upstream taking pr/3's change too names it, with its commit."""
    build(small)
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    _code, before = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert "pr/3" not in before["plan"]["upstream_has"]
    took = small.up.commit({"c.py": A.replace("    a = 1\n    return a\n", "    a = 3\n    return a + 0\n")},
                           "Three (#3)", parent="main", ref="refs/heads/main")
    small.up.commit({"test_a.py": T + "\n\ndef test_reset_y():\n    pass\n"}, "tests", parent="main",
                    ref="refs/heads/main")
    cli.json("sync", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")     # fetches
    calls = _spy(monkeypatch)
    _code, after = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "--offline")
    assert calls["weigh"] == len(after["plan"]["upstream_conflicts"]) >= 2
    assert after["plan"]["upstream_has"]["pr/3"]["commit"] == took


def test_the_key_names_what_decides(tmp_path: Path) -> None:
    from carrytool.gitlayer.objects import Change
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.hunks import Hunk
    from carrytool.review.evidence import EntryFacts

    entry = Entry(kind="pr", number=1)
    hunk = Hunk("a.py", 2, 1, 2, 1, (b"x = 1",), (b"x = 2",), new_oid="1" * 40)
    change = Change("M", "a.py", None, "100644", "100644", "2" * 40, "1" * 40)
    facts = EntryFacts(entry, None, "a" * 40, "b" * 40, [change], [hunk])
    old, new = hascache.KeptHas(tmp_path, (2, 39, 5)), hascache.KeptHas(tmp_path, (2, 47, 3))
    key = old.key("c" * 40, facts)
    assert old.path != new.path and key != new.key("c" * 40, facts)
    others = [EntryFacts(entry, None, "a" * 40, "b" * 40, [change], [Hunk("a.py", 2, 1, 2, 1, (b"x = 1",),
                                                                          (b"x = 3",), new_oid="1" * 40)]),
              EntryFacts(entry, None, "a" * 40, "b" * 40, [Change("M", "a.py", None, "100644", "100644", "3" * 40,
                                                                  "1" * 40)], [hunk]),
              EntryFacts(entry, None, "d" * 40, "b" * 40, [change], [hunk]),
              EntryFacts(entry, None, "a" * 40, "d" * 40, [change], [hunk])]
    assert len({key, old.key("d" * 40, facts), *(old.key("c" * 40, other) for other in others)}) == 6
    old.put(key, {"hunks": 1})
    old.save()
    assert hascache.KeptHas(tmp_path, (2, 39, 5)).get(key) == {"hunks": 1}
    assert hascache.KeptHas(tmp_path, (2, 47, 3)).get(key) is None


def test_a_hunk_entries_share_is_read_once_for_their_keys_which_stay_what_its_lines_make_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries that change a file alike share its Hunk objects (a stack of PRs): the key reads each hunk once
    (its place and lines), and a key is the one the same lines in hunks of their own give."""
    from carrytool.gitlayer.objects import Change
    from carrytool.manifest.model import Entry
    from carrytool.pipeline.hunks import Hunk
    from carrytool.review.evidence import EntryFacts

    def hunk(n: int) -> Hunk:
        return Hunk("a.py", n, 1, n, 2, (b"x = 1",), (b"x = 2", b"y = %d" % n), new_oid="1" * 40)

    change = Change("M", "a.py", None, "100644", "100644", "2" * 40, "1" * 40)
    shared = [hunk(n) for n in range(1, 30)]
    stack = [EntryFacts(Entry(kind="pr", number=n), None, "a" * 40, "b" * 40, [change], shared[:20 + n])
             for n in range(1, 4)]
    kept = hascache.KeptHas(tmp_path, (2, 39, 5))
    said: list[Hunk] = []
    real = hascache._said
    monkeypatch.setattr(hascache, "_said", lambda h: (said.append(h), real(h))[1])
    keys = [kept.key("c" * 40, facts) for facts in stack]
    assert len(said) == 23 and len(set(keys)) == 3                  # 66 hunks in the keys, 23 read
    own = [EntryFacts(f.entry, None, f.head, f.base, [change], [hunk(h.old_start) for h in f.hunks]) for f in stack]
    assert [hascache.KeptHas(tmp_path, (2, 39, 5)).key("c" * 40, facts) for facts in own] == keys
    other = Hunk("a.py", 21, 1, 21, 2, (b"x = 1",), (b"x = 2", b"y = 22"), new_oid="1" * 40)
    longer = EntryFacts(stack[0].entry, None, "a" * 40, "b" * 40, [change], [*shared[:20], other])
    assert kept.key("c" * 40, longer) != keys[0]                   # another line: another key


def test_the_code_digest_covers_every_module_the_weighing_imports() -> None:
    """A kept answer is valid only for the code in hascache.CODE: every carrytool module upstream_has (and
    has_places, has_commit, split from it) and hascache import must be in it, or a change there would leave
    answers of the old code standing (h226's review: `meets` and `span_of` came from pipeline/regions.py, which
    CODE did not name)."""
    import ast

    root = Path(hascache.__file__).parents[1]
    for module in ("review/upstream_has.py", "review/has_places.py", "review/has_commit.py", "review/hascache.py"):
        tree = ast.parse((root / module).read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("carrytool.")}
        for name in imported:
            path = name.removeprefix("carrytool.").replace(".", "/") + ".py"
            # the kept file's reading and writing (pipeline/kept.py), not what is decided; the Git class is a
            # façade whose work lies in the gitlayer modules CODE names
            assert path in hascache.CODE or path in ("pipeline/kept.py", "gitlayer/git.py"), (module, path)
