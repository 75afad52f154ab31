"""What a finished fold says of the union's own doing that sync, seeing the union as one entry, cannot tell (h185's
trial on sqlalchemy):

- a resolution that leaves a Python file unparseable (a `def` line lost at a stop: the file raised IndentationError)
  passed `union continue` and sync with exit 0: a warning naming the file, the line, Python's message and where
  to correct it, where upstream's and each folded PR head's version of the file parse;
- a PR's line the union rewrote outside the conflicts it stopped at (`a += 20` made `a += 21` away from the
  conflict) is the union's own words (re-expressed: helper-166), no warning, but it was said nowhere but in
  `explain`: a note lists each such line, once per fold, and `union status --format json` has them."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.union.fold_scenario import TwoPrs

MARKERS = re.compile(r"<<<<<<< [^\n]*\n.*?>>>>>>> [^\n]*\n", re.S)


def _warnings(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("warning: ")]


def _resolve(path: Path, text: str, *, outside: tuple[str, str] | None = None) -> None:
    """Resolve the conflict of PATH as TEXT; OUTSIDE: (old, new), an edit away from it."""
    data = MARKERS.sub(text, path.read_text())
    if outside:
        assert outside[0] in data
        data = data.replace(outside[0], outside[1])
    path.write_text(data)


# -- a resolution that leaves the file unparseable ------------------------------------------------------------------

BASE = "import os\n\n\ndef f():\n    x = 1\n    return x\n"
RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"
NEWER = f"{sys.version_info.major}.{sys.version_info.minor + 1}"


def _two(root: Path, base: str = BASE) -> TwoPrs:
    """pr/1 and pr/2 each change the import line and `x = 1` of f(): one conflict hunk over lines 1-5."""
    return TwoPrs(root, {"m.py": base},
                  {"m.py": base.replace("x = 1", "x = 2").replace("import os", "import os  # p1")},
                  {"m.py": base.replace("x = 1", "x = 3").replace("import os", "import os  # p2")})


def test_a_resolution_that_leaves_python_unparseable_is_warned_with_where_to_correct_it(cli: Cli,
                                                                                          tmp_path: Path) -> None:
    prs = _two(tmp_path)
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _resolve(prs.scratch / "m.py", "import os  # p1 p2\n")       # `def f():` and `x = 2` lost: a slip
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0, result.output                 # a warning, not a refusal
    [record] = sorted((prs.manifest.parent / "resolutions" / "u").glob("*.json"))
    [warning] = [w for w in _warnings(result.stderr) if "does not parse" in w]
    assert warning.startswith(f"warning: m.py:2: the union's result does not parse under Python {RUNNING}, the "
                              "Python carrytool runs on (IndentationError: unexpected indent), while upstream's, "
                              "pr/1's and pr/2's versions do: importing it fails; ")
    assert f"your recorded resolution {record} (line 1 of the result) stands just before it" in warning
    assert warning.endswith("then carrytool union compose u " + " ".join(prs.args()))
    # union status previews the refold, and says it as well
    status = cli("union", "status", "u", *prs.args())
    assert status.exit_code == 0 and any("does not parse" in w for w in _warnings(status.stderr)), status.output
    # corrected where the warning says, the next fold says nothing
    doc = json.loads(record.read_text())
    doc["resolution"] = "import os  # p1 p2\n\n\ndef f():\n    x = 2"
    doc["lines"] = 5
    record.write_text(json.dumps(doc))
    again = cli("union", "compose", "u", *prs.args())
    assert again.exit_code == 0 and not _warnings(again.stderr), again.output
    code, report = cli.json("sync", "--dry-run", *prs.args())
    assert code == 0, report


def test_a_file_upstream_does_not_parse_either_says_nothing(cli: Cli, tmp_path: Path) -> None:
    prs = _two(tmp_path, BASE + "print 'py2'\n")
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _resolve(prs.scratch / "m.py", "import os  # p1 p2\n")
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0 and "does not parse" not in result.stderr, result.output


@pytest.mark.parametrize("declared", [
    {"pyproject.toml": f"[build-system]\nrequires = ['setuptools']\n\n[project]  # the package\nname = 'x'\n"
                       f"requires-python = \">={NEWER}\"\n"},
    {"setup.cfg": f"[metadata]\nname = x\n\n[options]\npython_requires = ~={NEWER}\n"}], ids=["pyproject", "setup.cfg"])
def test_a_project_on_a_newer_python_is_not_said_to_fail_to_import(cli: Cli, tmp_path: Path, declared: dict) -> None:
    """h194: a Python 3.12 project (`requires-python >=3.12`) resolved with `f"{row["id"]}"` (PEP 701) was warned
    `does not parse (SyntaxError: f-string: unmatched '[') ... importing it fails`: carrytool, on 3.11, judged
    3.12 syntax, and `union status` said it again on every preview. Under a Python older than the project's
    declared lower bound the result is not judged: a note names the Python it parsed with and the one to check
    it with (here a lost `def` line, which no Python parses, stands for syntax newer than the running one)."""
    prs = _two(tmp_path, BASE)
    prs.up.commit(declared, "declare the Python", parent="main", ref="refs/heads/main")
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _resolve(prs.scratch / "m.py", "import os  # p1 p2\n")
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0 and not _warnings(result.stderr), result.output
    where = "upstream's pyproject.toml" if "pyproject.toml" in declared else "upstream's setup.cfg"
    spec = f">={NEWER}" if "pyproject.toml" in declared else f"~={NEWER}"
    [note] = [line for line in result.stderr.splitlines() if "does not parse" in line]
    assert note.startswith(f"note: m.py:2: the union's result does not parse under Python {RUNNING}, the Python "
                           "carrytool runs on (IndentationError: unexpected indent), while upstream's, pr/1's and "
                           f"pr/2's versions do; the project requires Python {spec} ({where}), whose syntax "
                           f"{RUNNING} may not know: check it with Python {NEWER}, and if it does not parse there "
                           "either, "), note
    status = cli("union", "status", "u", *prs.args())
    assert status.exit_code == 0 and not _warnings(status.stderr), status.output


def test_a_project_on_the_running_python_is_judged(cli: Cli, tmp_path: Path) -> None:
    """A declared lower bound the running Python meets: the warning stands, naming the Python it judged under."""
    prs = _two(tmp_path, BASE)
    prs.up.commit({"pyproject.toml": f"[project]\nname = 'x'\nrequires-python = '>={RUNNING}, <4'\n"},
                  "declare the Python", parent="main", ref="refs/heads/main")
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _resolve(prs.scratch / "m.py", "import os  # p1 p2\n")
    result = cli("union", "continue", "u", *prs.args())
    [warning] = [w for w in _warnings(result.stderr) if "does not parse" in w]
    assert warning.startswith(f"warning: m.py:2: the union's result does not parse under Python {RUNNING}, the "
                              "Python carrytool runs on (IndentationError: unexpected indent), while upstream's, "
                              "pr/1's and pr/2's versions do: importing it fails; "), warning


# -- a PR's line the union re-expresses outside the conflicts ------------------------------------------------------

H = "def f():\n    return 1\n\n\n\n\n\n\ndef h():\n    a = 0\n    return a\n"


def test_a_pr_line_changed_outside_the_conflicts_is_listed_once_not_warned(cli: Cli, tmp_path: Path) -> None:
    """pr/1 changes f()'s return and adds two lines to h(), pr/2 changes f()'s return: one conflict in f(). The
    stop is resolved with words of the union's own (`return 5`: no note, it is the conflict) and pr/1's
    `a += 20` is made `a += 21` in h(), away from it."""
    prs = TwoPrs(tmp_path, {"m.py": H},
                 {"m.py": H.replace("return 1", "return 2").replace("    a = 0\n", "    a = 0\n    a += 10\n"
                                                                                   "    a += 20\n")},
                 {"m.py": H.replace("return 1", "return 3")})
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _resolve(prs.scratch / "m.py", "    return 5\n", outside=("    a += 20\n", "    a += 21\n"))
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0 and not _warnings(result.stderr), result.output
    notes = [line for line in result.stderr.splitlines() if "outside the conflicts" in line]
    assert notes == ["note: the union re-expresses 1 line of the PRs it folds outside the conflicts the fold "
                     "stopped at (its own words: no warning, and sync does not say it; explain shows it as "
                     "re-expressed):"], result.stderr
    listed = result.stderr.split(notes[0] + "\n")[1].splitlines()
    assert listed[0] == "  m.py:12: pr/1's `a += 20` -> `a += 21`", result.stderr
    assert not any("return" in line for line in listed[:2]), result.stderr
    # union status's refold preview: said, and in JSON
    code, [report] = cli.json("union", "status", "u", *prs.args())
    assert code == 0, report
    assert report["refold"]["re_expressed"] == [{"file": "m.py", "line": 12, "pr": "pr/1", "pr_line": 12,
                                                 "old": ["    a += 20"], "new": ["    a += 21"]}]
    # sync: no warning (a union's rewrite of a PR line is its own words)
    code, sync = cli.json("sync", "--dry-run", *prs.args())
    assert code == 0 and not sync["warnings"], sync


# h194's review: a statement the PRs change in two defs, one of which conflicts; the union's own words for it in the
# other def, far from the conflict, were hidden because the same text stood on a side of the conflict
REPEATED = "def f(a):\n    x = a\n    return x\n\n\ndef g(a):\n    x = a\n    return x * 2\n"


def _repeated(root: Path) -> TwoPrs:
    """pr/1 makes `x = a` into `x = clean(a)` in f() and g(), pr/2 into `x = strip(a)` in g(): one conflict, in g()."""
    return TwoPrs(root, {"m.py": REPEATED}, {"m.py": REPEATED.replace("x = a", "x = clean(a)")},
                  {"m.py": REPEATED.replace("    x = a\n    return x * 2", "    x = strip(a)\n    return x * 2")})


def test_a_pr_line_rewritten_away_from_a_conflict_holding_the_same_text_is_listed(cli: Cli, tmp_path: Path) -> None:
    prs = _repeated(tmp_path)
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _resolve(prs.scratch / "m.py", "    x = clean(strip(a))\n",
             outside=("clean(a)\n    return x\n", "clean(a, strict=True)\n    return x\n"))
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0 and not _warnings(result.stderr), result.output
    assert "  m.py:2: pr/1's `x = clean(a)` -> `x = clean(a, strict=True)`" in result.stderr.splitlines(), \
        result.stderr
    code, [report] = cli.json("union", "status", "u", *prs.args())
    assert code == 0, report
    # g()'s conflict, resolved in the union's own words, is not listed
    assert report["refold"]["re_expressed"] == [{"file": "m.py", "line": 2, "pr": "pr/1", "pr_line": 2,
                                                 "old": ["    x = clean(a)"], "new": ["    x = clean(a, strict=True)"]}]


def test_a_conflict_resolved_in_the_unions_own_words_beside_the_same_text_is_not_listed(cli: Cli,
                                                                                        tmp_path: Path) -> None:
    prs = _repeated(tmp_path)
    assert cli("union", "compose", "u", *prs.args()).exit_code == 3
    _resolve(prs.scratch / "m.py", "    x = clean(strip(a))\n")
    result = cli("union", "continue", "u", *prs.args())
    assert result.exit_code == 0 and not _warnings(result.stderr), result.output
    assert "outside the conflicts" not in result.stderr, result.stderr
    code, [report] = cli.json("union", "status", "u", *prs.args())
    assert code == 0 and report["refold"]["re_expressed"] == [], report
