"""What counts as upstream having a hunk of an entry that conflicts with it alone (h204's review of h199's
"upstream already has"): only its change at its place, never a line that merely stands somewhere in upstream's
file, never a removal because upstream edited inside the removed block; lines that say nothing on their own
(a bare import, `return None`) are counted neither way; the commit named is the one that brought the line in."""

from __future__ import annotations

import shlex
import subprocess

import jsonschema

from tests.conftest import Cli, Small

Files = dict[str, "str | bytes | None"]


def scenario(small: Small, base: Files, pr: Files, ups: list[tuple[Files, str]]) -> list[str]:
    """BASE committed on upstream's main, PR 1 changing PR on it, then upstream's commits UPS; returns their SHAs."""
    small.base = small.up.commit(base, "base", parent="main", ref="refs/heads/main")
    small.pr(1, pr)
    shas = [small.up.commit(files, message, parent="main", ref="refs/heads/main") for files, message in ups]
    small.manifest([{"pr": 1, "on_conflict": "skip"}])
    return shas


def explain(cli: Cli, small: Small, schema: dict) -> dict:
    code, report = cli.json("explain", "-m", small.manifest_path, "--repo", small.work.path, "pr/1")
    assert code == 0, report
    jsonschema.validate(report, schema)
    return report


def summary(report: dict) -> list[str]:
    return report["stories"][0]["summary"]


def test_a_removal_upstream_edited_inside_is_not_had(cli: Cli, small: Small, report_schema: dict) -> None:
    """The PR deletes old(); upstream keeps old() and edits a line of it: the removed block "appears less
    often", yet upstream has none of the deletion (h204: 'likely merged', every one of its 1 hunks)."""
    base = "def keep():\n    return 1\n\n\ndef old(x):\n    y = compute(x)\n    log(y)\n    return y\n"
    scenario(small, {"a.py": base}, {"a.py": "def keep():\n    return 1\n"},
             [({"a.py": base.replace("compute(x)", "compute(x, strict=True)")}, "old: compute strictly")])
    report = explain(cli, small, report_schema)
    assert report["plan"]["upstream_conflicts"] == {"pr/1": ["a.py"]}
    assert "upstream_has" not in report["plan"]
    assert "conflicts with upstream alone in a.py: rebase needed" in summary(report)


def test_a_removal_upstream_made_is_had(cli: Cli, small: Small, report_schema: dict) -> None:
    """The PR deletes old(); upstream deletes it too (the lines around it joined) and conflicts elsewhere."""
    base = "def keep():\n    return 1\n\n\ndef old(x):\n    y = compute(x)\n    return y\n\n\ndef last():\n    pass\n"
    gone = base.replace("def old(x):\n    y = compute(x)\n    return y\n\n\n", "")
    [merged] = scenario(small, {"a.py": base, "b.py": "x = 1\n"}, {"a.py": gone, "b.py": "x = 2\n"},
                        [({"a.py": gone, "b.py": "x = 3\n"}, "Drop old() (#1)")])
    has = explain(cli, small, report_schema)["plan"]["upstream_has"]["pr/1"]
    assert (has["present"], has["hunks"], has["likely_merged"]) == (1, 2, True)
    assert has["hunks_present"] == [{"file": "a.py", "lines": [4, 4]}]
    assert (has["commit"], has["subject"]) == (merged, "Drop old() (#1)")


def test_a_deleted_file_upstream_edited_is_not_had(cli: Cli, small: Small, report_schema: dict) -> None:
    a = "def f():\n    value = compute(1)\n    check(value)\n    return value\n"
    scenario(small, {"a.py": a}, {"a.py": None}, [({"a.py": a.replace("compute(1)", "compute(2)")}, "edit")])
    report = explain(cli, small, report_schema)
    assert report["plan"]["upstream_conflicts"] == {"pr/1": ["a.py"]} and "upstream_has" not in report["plan"]


def test_a_deleted_file_upstream_deleted_too_is_had(cli: Cli, small: Small, report_schema: dict) -> None:
    a = "def f():\n    value = compute(1)\n    return value\n"
    [merged] = scenario(small, {"a.py": a, "b.py": "x = 1\n"}, {"a.py": None, "b.py": "x = 2\n"},
                        [({"a.py": None, "b.py": "x = 3\n"}, "drop a.py (#1)")])
    report = explain(cli, small, report_schema)
    has = report["plan"]["upstream_has"]["pr/1"]
    assert has["hunks_present"] == [{"file": "a.py", "lines": [0, 0]}] and has["likely_merged"]
    assert (has["commit"], has["subject"]) == (merged, "drop a.py (#1)")
    assert (f"conflicts with upstream alone in b.py, and upstream already has 1 of its 2 hunks (a.py: 1 of 1, "
            f"deleted): likely merged upstream as {merged[:10]} \"drop a.py (#1)\"") in summary(report)


def test_a_line_removed_from_a_file_upstream_deleted_is_not_had(cli: Cli, small: Small, report_schema: dict) -> None:
    a = "def f():\n    value = compute(1)\n    check(value)\n    return value\n"
    scenario(small, {"a.py": a}, {"a.py": a.replace("    check(value)\n", "")}, [({"a.py": None}, "drop a.py")])
    report = explain(cli, small, report_schema)
    assert report["plan"]["upstream_conflicts"] == {"pr/1": ["a.py"]} and "upstream_has" not in report["plan"]


def test_a_common_line_upstream_put_elsewhere_is_no_evidence(cli: Cli, small: Small, report_schema: dict) -> None:
    """The PR turns f()'s line into `return None`; upstream rewrites that line its own way and adds a
    `return None` to g(): the line stands in upstream's file, not where the PR put it."""
    base = "def f(a):\n    x = compute(a)\n    return x\n\n\ndef g(b):\n    use(b)\n"
    scenario(small, {"a.py": base}, {"a.py": base.replace("    x = compute(a)\n", "    return None\n")},
             [({"a.py": base.replace("compute(a)", "compute(a, b=2)") + "    return None\n"}, "its own")])
    report = explain(cli, small, report_schema)
    assert report["plan"]["upstream_conflicts"] == {"pr/1": ["a.py"]} and "upstream_has" not in report["plan"]


IMPORTS = "import os\n\n\ndef f(a):\n    x = compute(a)\n    return x\n\n\ndef g(b):\n    return use(b)\n"
IMPORTS_PR = IMPORTS.replace("import os\n", "import os\nimport logging\n").replace(
    "    x = compute(a)\n", "    x = compute(a)\n    logging.info('computed %s', x)\n")


def test_a_bare_import_upstream_added_for_itself_is_no_evidence(cli: Cli, small: Small, report_schema: dict) -> None:
    """The PR adds `import logging` and a log call; upstream adds `import logging` for its own use (h204: 1 of
    2 hunks, "likely merged"): an import line alone says nothing of who made it."""
    up = IMPORTS_PR.replace("    logging.info('computed %s', x)\n", "    x = normalise(x)\n").replace(
        "    return use(b)\n", "    logging.debug('g')\n    return use(b)\n")
    scenario(small, {"a.py": IMPORTS}, {"a.py": IMPORTS_PR}, [({"a.py": up}, "normalise f, log in g")])
    report = explain(cli, small, report_schema)
    assert report["plan"]["upstream_conflicts"] == {"pr/1": ["a.py"]} and "upstream_has" not in report["plan"]


def test_a_bare_import_is_counted_neither_way(cli: Cli, small: Small, report_schema: dict) -> None:
    """Upstream merged the PR, import and call, then edited the line after the call: the import hunk is left
    out of the count, and the story says so."""
    up = IMPORTS_PR.replace("    return x\n", "    return x or 0\n")
    [merged, _] = scenario(small, {"a.py": IMPORTS}, {"a.py": IMPORTS_PR},
                           [({"a.py": IMPORTS_PR}, "log in f (#1)"), ({"a.py": up}, "f: never None")])
    report = explain(cli, small, report_schema)
    has = report["plan"]["upstream_has"]["pr/1"]
    assert has == {"hunks": 2, "present": 1, "likely_merged": True, "hunks_trivial": 1,
                   "hunks_present": [{"file": "a.py", "lines": [7, 7]}], "hunks_missing": [],
                   "commit": merged, "subject": "log in f (#1)"}
    assert (f"conflicts with upstream alone in a.py, and upstream already has its one hunk (a.py: 1 of 1, line 7; "
            f"1 more hunk, of lines that say nothing on their own, is not counted): likely merged upstream as "
            f"{merged[:10]} \"log in f (#1)\"") in summary(report)


def test_the_commit_named_is_the_one_that_brought_the_line_in(cli: Cli, small: Small, report_schema: dict) -> None:
    """Upstream merges the PR as A; a later B copies the PR's line into another function: `git log -n 1 -S`
    named B, the newest commit changing how often the file holds the line (h204)."""
    base = "def f(s):\n    s.begin()\n    return s\n\n\ndef g(s):\n    s.close()\n"
    line = "    reset_flushing_state(session=s, hard=True)\n"
    pr = base.replace("    s.begin()\n", "    s.begin()\n" + line)
    up_a = pr + "    s.log()\n"
    up_b = up_a + "\n\ndef h(s):\n" + line
    [merged, _] = scenario(small, {"a.py": base, "b.py": "x = 1\n"}, {"a.py": pr, "b.py": "x = 2\n"},
                           [({"a.py": up_a, "b.py": "x = 3\n"}, "Merge PR 1: reset flushing state"),
                            ({"a.py": up_b}, "Add h() helper")])
    report = explain(cli, small, report_schema)
    has = report["plan"]["upstream_has"]["pr/1"]
    assert (has["commit"], has["subject"]) == (merged, "Merge PR 1: reset flushing state")
    [found] = [c for c in report["stories"][0]["commands"] if "git log -S" in c["purpose"]]
    assert found["purpose"].endswith(f"the first that added it: {merged} Merge PR 1: reset flushing state")
    out = subprocess.run(shlex.split(found["command"]), cwd=small.work.path, capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines()[0] == f"{merged} Merge PR 1: reset flushing state"


def test_upstream_having_every_hunk_says_what_next(cli: Cli, small: Small, report_schema: dict) -> None:
    """Upstream merged the PR, then edited the line after it: the next step named no file ("which lacks its
    hunks in "), and the count read "every one of its 1 hunks" (h204)."""
    a = "def f(s):\n    s.begin()\n    return s\n"
    pr = a.replace("    s.begin()\n", "    s.begin()\n    reset_flushing_state(s)\n")
    done = pr.replace("return s", "return s.done()")
    [merged, _] = scenario(small, {"a.py": a}, {"a.py": pr}, [({"a.py": pr}, "merge PR 1"), ({"a.py": done}, "done")])
    lines = summary(explain(cli, small, report_schema))
    assert (f"conflicts with upstream alone in a.py, and upstream already has its one hunk (a.py: 1 of 1, line 3): "
            f"likely merged upstream as {merged[:10]} \"merge PR 1\"") in lines
    assert ("next: upstream has every hunk of it counted: if upstream's version of it is what you carry it for "
            "(`carrytool status` shows whether upstream merged pr/1), remove pr/1 from the manifest; else rebase "
            "it onto upstream main to see what is left of it") in lines
    assert not any(line.rstrip().endswith(" in") for line in lines)


def test_a_line_not_in_utf8_is_never_the_line_looked_up(cli: Cli, small: Small, report_schema: dict) -> None:
    """A merged hunk whose longest line is Latin-1: the command looks the commit up by a UTF-8 line (h204: lone
    surrogates in the JSON command, which found nothing); with none, no command is given."""
    base = b"# caf\xe9\nx = 1\n\n\ny = 2\n"
    pr = base.replace(b"x = 1\n", b"x = 1\nname = 'caf\xe9 cr\xe8me'  # a latin-1 line, the longest\nnamed(x)\n")
    [merged] = scenario(small, {"a.py": base, "b.py": "x = 1\n"}, {"a.py": pr, "b.py": "x = 2\n"},
                        [({"a.py": pr, "b.py": "x = 3\n"}, "merged")])
    report = explain(cli, small, report_schema)
    assert report["plan"]["upstream_has"]["pr/1"]["commit"] == merged
    [found] = [c for c in report["stories"][0]["commands"] if "git log -S" in c["purpose"]]
    assert "-Snamed(x)" in found["command"] and found["command"].isascii()
    out = subprocess.run(shlex.split(found["command"]), cwd=small.work.path, capture_output=True, text=True,
                         check=True).stdout
    assert out == f"{merged} merged\n"


def test_no_utf8_line_names_no_command(cli: Cli, small: Small, report_schema: dict) -> None:
    base = b"x = 1\n\n\ny = 2\n"
    pr = base.replace(b"x = 1\n", b"x = 1\nname = 'caf\xe9'\n")
    scenario(small, {"a.py": base, "b.py": "x = 1\n"}, {"a.py": pr, "b.py": "x = 2\n"},
             [({"a.py": pr, "b.py": "x = 3\n"}, "merged")])
    report = explain(cli, small, report_schema)
    has = report["plan"]["upstream_has"]["pr/1"]
    assert (has["present"], has["commit"], has["subject"]) == (1, None, None)
    assert not [c for c in report["stories"][0]["commands"] if "git log -S" in c["purpose"]]
    assert any(line.endswith("): likely merged upstream") for line in summary(report))


def test_lines_find_every_place_a_block_stands() -> None:
    """_Lines.find looks a block up from its line the file holds least often (a blank first line stood at every
    blank line of the file, 3 s of explain on polars): every place, overlapping ones too, and no other."""
    import random

    from carrytool.review.has_places import _Lines

    rng = random.Random(7)
    vocab = [b"", b"", b"    )", b"x = 1", b"return x", b"pass"]
    lines = [rng.choice(vocab) for _ in range(400)]
    found = _Lines(lines)
    for _ in range(300):
        start, n = rng.randrange(len(lines)), rng.randrange(1, 5)
        block = lines[start:start + n] if rng.random() < 0.7 else [rng.choice(vocab) for _ in range(n)]
        every = [i for i in range(len(lines) - len(block) + 1) if lines[i:i + len(block)] == block]
        assert found.find(block) == every, block
    assert found.find([]) == [] and _Lines([b"", b""]).find([b"", b""]) == [0]


def test_the_same_line_under_the_same_line_in_another_function_is_no_evidence(cli: Cli, small: Small,
                                                                               report_schema: dict) -> None:
    """The PR adds `self.flush()` under `with self.lock:` in write(); upstream, never taking it, adds the same line
    under the same `with` in close() (h213: one neighbour line matched there, "likely merged", drop pr/1)."""
    base = ("class Store:\n    def write(self, data):\n        with self.lock:\n            self.buf.append(data)\n\n"
            "    def close(self):\n        with self.lock:\n            self.closed = True\n\n"
            "    def baz(self, x):\n        return x\n")
    pr = base.replace("(self, data):\n        with self.lock:\n", "(self, data):\n        with self.lock:\n"
                      "            self.flush()\n").replace("        return x\n", "        return x + 1\n")
    up = base.replace("close(self):\n        with self.lock:\n", "close(self):\n        with self.lock:\n"
                      "            self.flush()\n").replace("        return x\n", "        return x * 2\n")
    scenario(small, {"m.py": base}, {"m.py": pr}, [({"m.py": up}, "close flushes; baz doubles")])
    report = explain(cli, small, report_schema)
    assert report["plan"]["upstream_conflicts"] == {"pr/1": ["m.py"]} and "upstream_has" not in report["plan"]
    assert "conflicts with upstream alone in m.py: rebase needed" in summary(report)


TWINS = "def test_a():\n{0}\n\ndef test_b():\n{0}\n\ndef helper(x):\n    return x\n".format(
    "    setup_database()\n    debug_dump(verbose=True)\n    check_rows(3)\n")


def test_a_removal_upstream_made_in_a_twin_block_is_no_evidence(cli: Cli, small: Small, report_schema: dict) -> None:
    """test_a and test_b share a body; the PR removes `debug_dump(...)` from test_a, upstream from test_b only: the
    line still stands in test_a, where the PR removed it (h213: "likely merged")."""
    def without(test: str) -> str:
        return TWINS.replace(f"def {test}():\n    setup_database()\n    debug_dump(verbose=True)\n",
                             f"def {test}():\n    setup_database()\n")

    scenario(small, {"t.py": TWINS}, {"t.py": without("test_a").replace("return x\n", "return x + 1\n")},
             [({"t.py": without("test_b").replace("return x\n", "return x * 2\n")}, "test_b: no dump")])
    report = explain(cli, small, report_schema)
    assert report["plan"]["upstream_conflicts"] == {"pr/1": ["t.py"]} and "upstream_has" not in report["plan"]


def test_a_removal_upstream_made_at_its_place_beside_a_twin_is_had(cli: Cli, small: Small,
                                                                   report_schema: dict) -> None:
    """The same twins, upstream removing the line from test_a as the PR does: had, at test_a's place."""
    gone = TWINS.replace("def test_a():\n    setup_database()\n    debug_dump(verbose=True)\n",
                         "def test_a():\n    setup_database()\n")
    [merged] = scenario(small, {"t.py": TWINS}, {"t.py": gone.replace("return x\n", "return x + 1\n")},
                        [({"t.py": gone.replace("return x\n", "return x * 2\n")}, "test_a: no dump (#1)")])
    has = explain(cli, small, report_schema)["plan"]["upstream_has"]["pr/1"]
    assert (has["present"], has["hunks_present"], has["commit"]) == (1, [{"file": "t.py", "lines": [2, 2]}], merged)


def test_the_commit_named_has_the_hunk_at_its_place_not_an_earlier_copy(cli: Cli, small: Small,
                                                                        report_schema: dict) -> None:
    """A adds the PR's line to foo(); later B takes the PR's hunk in bar(): A was named, the oldest commit that
    raised how often the file holds the line (h213). The story says the command lists B second."""
    base = ("def foo(items, rate):\n    value = 0\n    return value\n\n\ndef bar(items, rate):\n    value = 0\n"
            "    return value\n\n\ndef baz(x):\n    return x\n")
    line = "    value = compute_total(items, tax=rate)\n"
    pr = base.replace("rate):\n    value = 0\n    return value\n\n\ndef baz", "rate):\n" + line +
                      "    return value\n\n\ndef baz").replace("return x\n", "return x + 1\n")
    up_a = base.replace("def foo(items, rate):\n    value = 0\n", "def foo(items, rate):\n" + line)
    up_b = pr.replace("def foo(items, rate):\n    value = 0\n", "def foo(items, rate):\n" + line).replace(
        "return x + 1\n", "return x + 2\n")
    [a, b] = scenario(small, {"m.py": base}, {"m.py": pr},
                      [({"m.py": up_a}, "A: foo computes its total"), ({"m.py": up_b}, "B: bar too (#1)")])
    report = explain(cli, small, report_schema)
    has = report["plan"]["upstream_has"]["pr/1"]
    assert (has["present"], has["hunks_present"]) == (1, [{"file": "m.py", "lines": [7, 7]}])
    assert (has["commit"], has["subject"]) == (b, "B: bar too (#1)")
    assert f"likely merged upstream as {b[:10]} \"B: bar too (#1)\"" in summary(report)[1]
    [found] = [c for c in report["stories"][0]["commands"] if "git log -S" in c["purpose"]]
    assert found["purpose"].endswith(f"the first that added it at its hunk's place is number 2 of the list: {b} "
                                     "B: bar too (#1) (those before it changed it elsewhere)")
    out = subprocess.run(shlex.split(found["command"]), cwd=small.work.path, capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == [f"{a} A: foo computes its total", f"{b} B: bar too (#1)"]


def test_a_crlf_file_names_its_commit(cli: Cli, small: Small, report_schema: dict) -> None:
    """Every line of a CRLF file ends in `\\r`, which no printed command may hold: no commit was looked up (h213).
    The line is looked up without it (`git log -S` matches substrings)."""
    base = "def bar(items, rate):\r\n    value = 0\r\n    return value\r\n\r\n\r\ndef baz(x):\r\n    return x\r\n"
    pr = base.replace("    value = 0\r\n", "    value = compute_total(items, tax=rate)\r\n")
    [merged] = scenario(small, {"m.py": base}, {"m.py": pr.replace("return x\r\n", "return x + 1\r\n")},
                        [({"m.py": pr.replace("return x\r\n", "return x + 2\r\n")}, "bar computes its total (#1)")])
    report = explain(cli, small, report_schema)
    has = report["plan"]["upstream_has"]["pr/1"]
    assert (has["present"], has["commit"], has["subject"]) == (1, merged, "bar computes its total (#1)")
    [found] = [c for c in report["stories"][0]["commands"] if "git log -S" in c["purpose"]]
    assert "\r" not in found["command"] and "-S    value = compute_total(items, tax=rate)'" in found["command"]
    out = subprocess.run(shlex.split(found["command"]), cwd=small.work.path, capture_output=True, text=True,
                         check=True).stdout
    assert out == f"{merged} bar computes its total (#1)\n"
