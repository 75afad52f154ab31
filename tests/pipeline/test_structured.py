"""Structured merge for Python (issue 19): the pure resolver, table-driven, on real `git merge-file` output."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from carrytool.gitlayer.git import Git
from carrytool.pipeline.structured_tree import resolve_file, shown_partly


@pytest.fixture(scope="module")
def git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Git]:
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path_factory.mktemp("structured") / "r", bare=True)
    git = Git(repo.path)
    yield git
    git.close()


CLASS = "class A:\n    def x(self):\n        pass\n"

RESOLVED = [
    ("methods",
     CLASS,
     CLASS + "\n    def a(self):\n        return 1\n",
     CLASS + "\n    def b(self):\n        return 2\n",
     CLASS + "\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n"),
    ("methods",      # inserted last in the class: the blank line after each belongs to no statement
     CLASS + "\n\ndef f():\n    pass\n",
     CLASS + "\n    def a(self):\n        return 1\n\n\ndef f():\n    pass\n",
     CLASS + "\n    def b(self):\n        return 2\n\n\ndef f():\n    pass\n",
     CLASS + "\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n\n\ndef f():\n    pass\n"),
    ("functions",
     "import os\n\n\ndef f():\n    pass\n",
     "import os\n\n\ndef f():\n    pass\n\n\ndef g():\n    pass\n",
     "import os\n\n\ndef f():\n    pass\n\n\n@cache\ndef h():\n    pass\n",
     "import os\n\n\ndef f():\n    pass\n\n\ndef g():\n    pass\n\n\n@cache\ndef h():\n    pass\n"),
    ("imports",
     "import os\nimport sys\n", "import os\nimport re\nimport sys\n", "import os\nimport json\nimport sys\n",
     "import os\nimport re\nimport json\nimport sys\n"),
    ("import-union",
     "from m import a, b\n", "from m import a, b, c\n", "from m import a, b, d\n", "from m import a, b, c, d\n"),
    ("import-union",
     "from m import (\n    a,\n    b,\n)\n", "from m import (\n    a,\n    b,\n    c,\n)\n",
     "from m import (\n    a,\n    b,\n    d,\n)\n", "from m import (\n    a,\n    b,\n    c,\n    d,\n)\n"),
    ("items",
     "X = [\n    1,\n    2,\n]\n", "X = [\n    1,\n    2,\n    3,\n]\n", "X = [\n    1,\n    2,\n    4,\n]\n",
     "X = [\n    1,\n    2,\n    3,\n    4,\n]\n"),
    ("items",
     "R = {\n    'a': 1,\n}\n", "R = {\n    'a': 1,\n    'b': 2,\n}\n", "R = {\n    'a': 1,\n    'c': 3,\n}\n",
     "R = {\n    'a': 1,\n    'b': 2,\n    'c': 3,\n}\n"),
    ("assignments",
     "A = 1\nZ = 9\n", "A = 1\nB = 2\nZ = 9\n", "A = 1\nC: int = 3\nZ = 9\n", "A = 1\nB = 2\nC: int = 3\nZ = 9\n"),
    ("assignments",      # other attributes, and a loop's target bound as both sides bound it
     "class A:\n    def __init__(self):\n        self.a = 1\n",
     "class A:\n    def __init__(self):\n        self.a = 1\n        self.b = 2\n",
     "class A:\n    def __init__(self):\n        self.a = 1\n        self.c = 3\n",
     "class A:\n    def __init__(self):\n        self.a = 1\n        self.b = 2\n        self.c = 3\n"),
    ("assignments",
     "for i in range(3):\n    pass\nZ = 9\n", "for i in range(3):\n    pass\ni = 0\nZ = 9\n",
     "for i in range(3):\n    pass\nj = 1\nZ = 9\n", "for i in range(3):\n    pass\ni = 0\nj = 1\nZ = 9\n"),
    ("assignments",      # a target too deep for ast.unparse (RecursionError: helper-84) is no crash
     "import os\nZ = 9\n", "import os\nD[" + "1+" * 800 + "1] = 2\nZ = 9\n", "import os\nfoo = 3\nZ = 9\n",
     "import os\nD[" + "1+" * 800 + "1] = 2\nfoo = 3\nZ = 9\n"),
    ("functions",        # a body reads what the other side binds only when called: both are bound by then
     "import os\nZ = 9\n", "import os\ndef a():\n    return b()\nZ = 9\n", "import os\ndef b():\n    return 1\nZ = 9\n",
     "import os\ndef a():\n    return b()\ndef b():\n    return 1\nZ = 9\n"),
    ("adjacent-edit",
     "def f(x):\n    for a in x:\n        a.zero()\n    sync()\n",
     "def f(x):\n    for t in it(x):\n        t.zero()\n    sync()\n",
     "def f(x):\n    for a in x:\n        a.zero()\n    restore(x)\n    sync()\n",
     "def f(x):\n    for t in it(x):\n        t.zero()\n    restore(x)\n    sync()\n"),
]


@pytest.mark.parametrize(("kind", "base", "ours", "theirs", "want"), RESOLVED, ids=[r[0] for r in RESOLVED])
def test_resolves_insertions_with_both_present_ours_first(git: Git, kind: str, base: str, ours: str, theirs: str,
                                                          want: str) -> None:
    resolution = resolve_file(git, base.encode(), ours.encode(), theirs.encode())
    assert resolution is not None and resolution.ok, resolution and resolution.refused
    assert resolution.text == want.encode()
    assert [h.kind for h in resolution.hunks] == [kind]
    ast.parse(resolution.text)


REFUSED = [
    ("edit-edit", "def f():\n    return 1\n", "def f():\n    return 2\n", "def f():\n    return 3\n"),
    ("delete-edit", "A = 1\nB = 2\nC = 3\n", "A = 1\nC = 3\n", "A = 1\nB = 5\nC = 3\n"),
    ("shadows", "import os\n", "import os\ndef g(): pass\n", "import os\ndef g(): return 1\n"),
    ("shadows", CLASS, CLASS + "    def y(self):\n        return 1\n", CLASS + "    def y(self):\n        return 2\n"),
    ("other-statements", "def f():\n    x = 1\n", "def f():\n    x = 1\n    a()\n", "def f():\n    x = 1\n    b()\n"),
    ("not-statements", "def f(\n    a,\n):\n    pass\n", "def f(\n    a,\n    b,\n):\n    pass\n",
     "def f(\n    a,\n    c,\n):\n    pass\n"),
    ("syntax", "X = [\n    1,\n]\n", "X = [\n    1,\n    2\n]\n", "X = [\n    1,\n    3\n]\n"),
    # theirs' `return 0` (in f) is inside ours' insertion, but as a line of another function: not shared
    ("other-statements", "def f():\n    pass\n", "def f():\n    pass\ndef a():\n    return 0\n",
     "def f():\n    pass\n    return 0\n"),
    ("mixed-scopes", "class A:\n    pass\n", "class A:\n    pass\n    def a(self):\n        pass\n",
     "class A:\n    pass\ndef b():\n    pass\n"),
    # helper-83: each of these was resolved, both sides kept, one side's value lost at run time
    ("duplicate-key", "R = {\n    'a': 1,\n    'z': 26,\n}\n", "R = {\n    'a': 1,\n    'k': 'pr1',\n    'z': 26,\n}\n",
     "R = {\n    'a': 1,\n    \"k\": 'pr2',\n    'z': 26,\n}\n"),
    ("duplicate-key", "R = {\n    'a': 1,\n}\n", "R = {\n    'a': 1,\n    1: 'one',\n}\n",     # 1 == True: one key
     "R = {\n    'a': 1,\n    True: 'yes',\n}\n"),
    ("shadows", "import os\nZ = 9\n", "import os\nbar, foo = 1, 2\nZ = 9\n", "import os\nfoo = 3\nZ = 9\n"),
    ("shadows", "import os\nZ = 9\n", "import os\n[foo, *rest] = [1, 2]\nZ = 9\n", "import os\nfoo = 3\nZ = 9\n"),
    ("shadows", "S = {}\nZ = 9\n", "S = {}\nS['mode'] = 'fast'\nZ = 9\n", "S = {}\nS[\"mode\"] = 'safe'\nZ = 9\n"),
    ("shadows", "import os\nZ = 9\n", "import os\nos.environ_default = 'a'\nZ = 9\n",
     "import os\nos.environ_default: str = 'b'\nZ = 9\n"),
    ("shadows", "class A:\n    def __init__(self):\n        self.a = 1\n",
     "class A:\n    def __init__(self):\n        self.a = 1\n        self.t = 5\n",
     "class A:\n    def __init__(self):\n        self.a = 1\n        self.t = 30\n"),
    # helper-84: a side that binds a name twice hid the other side's binding it overrides (a count alone)
    ("shadows", "T = 5\nZ = 9\n", "T = 10\nZ = 9\n", "T = 5\nT = 30\nZ = 9\n"),
    ("shadows", "t = 1\nimport os\n\nZ = 9\n", "import os\n\nt = 5\nZ = 9\n", "t = 1\nimport os\n\nt = 30\nZ = 9\n"),
    ("shadows", "import os\nZ = 9\n", "import os\na = (foo := 1)\nZ = 9\n", "import os\nfoo = 3\nZ = 9\n"),
    ("duplicate-key", "R = {\n    'a': 1,\n}\n", "R = {\n    'a': 1,\n    f'k': 1,\n}\n", "R = {\n    'a': 1,\n    'k': 2,\n}\n"),
    ("duplicate-key", "R = {\n    'a': 1,\n}\n", "R = {\n    'a': 1,\n    0: 1,\n}\n", "R = {\n    'a': 1,\n    -0: 2,\n}\n"),
    # helper-128: one insertion reads what the other binds, or calls something: the order decides the result
    ("order-dependent", "U: A = str | bytes\nZ = 9\n", "U: A = str | bytes\nU = str\nZ = 9\n",
     "U: A = str | bytes\nT = U\nZ = 9\n"),
    ("order-dependent", "def f(url, parts):\n    a = 1\n    return a\n",
     "def f(url, parts):\n    a = 1\n    url = url.strip()\n    return a\n",
     "def f(url, parts):\n    a = 1\n    host = parts.netloc or url\n    return a\n"),
    ("order-dependent", "class A:\n    def __init__(self):\n        self.a = 1\n",
     "class A:\n    def __init__(self):\n        self.a = 1\n        self.b = 2\n",
     "class A:\n    def __init__(self):\n        self.a = 1\n        self.c = self.b + 1\n"),
    ("order-dependent", "import os\nZ = 9\n", "import os\nA = make()\nZ = 9\n", "import os\nB = 2\nZ = 9\n"),
    ("order-dependent", "import os\nZ = 9\n", "import os\n@register(B)\ndef a():\n    pass\nZ = 9\n",
     "import os\nB = 2\nZ = 9\n"),
    ("order-dependent", "import os\nZ = 9\n", "import os\nA = print('a')\nZ = 9\n",     # beside `B = 2` it resolves:
     "import os\nB = print('b')\nZ = 9\n"),                                              # helper-134, pycalls
    # helper-131: a builtin runs what it is given
    ("order-dependent", "import os\nZ = 9\n", "import os\nE = list(filter(on, P))\nZ = 9\n",
     "import os\nOFF = {'f'}\nZ = 9\n"),
    ("dict-spread", "R = {\n    **B,\n}\n", "R = {\n    **B,\n    'k': 1,\n}\n", "R = {\n    **B,\n    **O,\n}\n"),
    ("star-import", "import os\n\n\ndef z():\n    pass\n",
     "import os\n\n\ndef foo():\n    return 'mine'\n\n\ndef z():\n    pass\n",
     "import os\n\n\nfrom helpers import *\n\n\ndef z():\n    pass\n"),
]


@pytest.mark.parametrize(("why", "base", "ours", "theirs"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refuses_everything_else(git: Git, why: str, base: str, ours: str, theirs: str) -> None:
    resolution = resolve_file(git, base.encode(), ours.encode(), theirs.encode())
    assert resolution is not None and not resolution.ok
    assert why in resolution.refused


def test_deterministic_and_clean_merges_are_not_its_business(git: Git) -> None:
    base, ours, theirs = RESOLVED[0][1:4]
    one = resolve_file(git, base.encode(), ours.encode(), theirs.encode())
    two = resolve_file(git, base.encode(), ours.encode(), theirs.encode())
    assert one is not None and two is not None and one.text == two.text and one.hunks == two.hunks
    assert resolve_file(git, b"a = 1\n", b"a = 1\nb = 2\n", b"a = 1\n") is None


PARTIAL_BASE = "import os\n\n\ndef f():\n    return 1\n\n\ndef z():\n    return 0\n"


def _partial_sides(theirs_edit: str) -> tuple[bytes, bytes, bytes]:
    top = "import os\n"
    ours = PARTIAL_BASE.replace(top, top + "\n\ndef p():\n    return 'p'\n").replace("return 0", "return 5")
    theirs = PARTIAL_BASE.replace(top, top + "\n\ndef q():\n    return 'q'\n").replace("def z():", theirs_edit)
    return PARTIAL_BASE.encode(), ours.encode(), theirs.encode()


def test_partly_the_adjacency_resolves_beside_a_true_conflict(git: Git) -> None:
    resolution = resolve_file(git, *_partial_sides("def y():"), partial=True)
    assert resolution is not None and not resolution.ok
    assert [h.kind for h in resolution.hunks] == ["functions"] and resolution.refused == ["edit-edit"]
    ours_variant, _, theirs_variant = resolution.variants
    assert b"def p():" in ours_variant and b"def q():" in ours_variant and b"return 5" in ours_variant
    assert b"def y():" in theirs_variant and b"return 5" not in theirs_variant
    assert resolve_file(git, *_partial_sides("def y():")).hunks == []       # whole files: all or nothing


def test_partly_the_gates_hold_with_the_true_conflict_taken_either_way(git: Git) -> None:
    resolution = resolve_file(git, *_partial_sides("def p():"), partial=True)   # theirs' way binds p twice
    assert resolution is not None and resolution.hunks == [] and resolution.variants is None
    assert "shadows" in resolution.refused


def test_a_crlf_file_resolved_in_part_keeps_merge_trees_marker_lines(git: Git) -> None:
    # the conflicts left are shown as merge-tree shows them: labels without the CR of the CR LF line end
    base, ours, theirs = (side.replace(b"\n", b"\r\n") for side in _partial_sides("def y():"))
    resolution = resolve_file(git, base, ours, theirs, partial=True)
    assert resolution is not None and [h.kind for h in resolution.hunks] == ["functions"]
    merged = git.merge_contents(*(git.write_blob(side) for side in (ours, base, theirs)))
    assert merged is not None and not merged[0]
    shown = shown_partly(git, resolution, merged[1])
    assert shown is not None and b"\r\r\n" not in shown[0]
    conflict = merged[1][merged[1].rindex(b"<<<<<<< "):]
    assert shown[0].endswith(conflict) and conflict.count(b"\r\n") == 7


@pytest.mark.parametrize(("one", "other", "matters"), [
    ("D['k'] = 1", "m = D", True),               # helper-131: the whole object read beside a key set in it
    ("conf.mode = 'fast'", "label = conf", True),
    ("x += 1", "x = 5", True),                     # `+=` reads x first
    ("del x", "y = x", True),
    ("self.b = 2", "self.c = self.a", False),     # the base of an access is no read of the whole object
    ("A = 1", "B = (2, 3)", False),
])
def test_the_order_rule_reads_whole_objects_and_what_changes_them(one: str, other: str, matters: bool) -> None:
    from carrytool.pipeline.pyorder import order_conflict
    found = order_conflict(ast.parse(one).body, ast.parse(other).body)
    assert (found is not None) == matters, found
