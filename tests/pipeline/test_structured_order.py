"""The structured merge's order rule (pipeline.pyorder, pipeline.pycalls), on real `git merge-file` output:
two insertions at one place resolve only when either order gives the same module (helper-134: calls that
cannot see the order, annotations under `from __future__ import annotations`, `global` in an insertion)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from carrytool.gitlayer.git import Git
from carrytool.pipeline.structured_tree import resolve_file

FUTURE = "from __future__ import annotations\n\nimport os\n"
DATACLASS = "from dataclasses import dataclass, field\n\n\n@dataclass\nclass C:\n    a: int = 0\n"
ENUM = "from enum import Enum, auto\n\n\nclass Color(Enum):\n    RED = auto()\n"
REQUIRED = "from dataclasses import dataclass\n\n\n@dataclass\nclass C:\n    a: int\n"
REGISTRY = "REG = []\n\n\ndef register(f):\n    REG.append((f.__name__, MODE))\n    return f\n"
SUBCLASSES = "class Base:\n    seen = []\n\n    def __init_subclass__(cls, **kw):\n        Base.seen.append(LIMIT)\n"


@pytest.fixture(scope="module")
def git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Git]:
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path_factory.mktemp("order") / "r", bare=True)
    git = Git(repo.path)
    yield git
    git.close()


def _resolve(git: Git, head: str, one: str, two: str, tail: str = "Z = 9\n"):  # noqa: ANN202 - a Resolution
    base, ours, theirs = head + tail, head + one + tail, head + two + tail
    return resolve_file(git, base.encode(), ours.encode(), theirs.encode())


# (name, head, ours' insertion, theirs'): each order gives the same module
SAFE = [
    ("dataclass-field", DATACLASS, "    b: list = field(default_factory=list)\n",
     "    def m(self):\n        return 1\n"),
    ("logger-and-pattern", "import logging\nimport re\n", "log = logging.getLogger(__name__)\n",
     "PAT = re.compile(r'[a-z]+', re.I)\n"),
    ("typevars", "from typing import TypeVar\n", "T = TypeVar('T')\n", "K = TypeVar('K', bound=int)\n"),
    ("dotted-factory", "import typing as t\nimport collections\n", "P = collections.namedtuple('P', 'x y')\n",
     "N = t.NewType('N', int)\n"),
    ("literal-constructors", "import os\n", "NAMES = frozenset({'a', 'b'})\n", "SIZES = dict(small=1, big=2)\n"),
    # the other side runs no code: an imported callee on imported names cannot see what it binds (pytest's bench)
    ("imported-beside-inert", "from _pytest.stash import StashKey\n", "skipped_key = StashKey[bool]()\n",
     "X = 1\n"),
    ("builtin-beside-inert", "import os\n", "A = print('a')\n", "B = 2\n"),
    ("imported-beside-def", "from helpers import make\n", "A = make(1, 'x')\n",
     "class K:\n    n = 1\n\n    def f(self):\n        return make()\n"),
    # annotations are strings under the future import: they read nothing as the def runs
    ("future-signature", FUTURE, "def f(x: Url = None) -> Url:\n    return x\n", "Url = str\n"),
    ("future-annotated", FUTURE, "DEFAULT: Url | None = None\n", "Url = str\n"),
    ("future-class-annotation", FUTURE, "class P:\n    x: Url = 'u'\n", "Url = str\n"),
    ("future-annotation-call", FUTURE, "def f(x: Annotated[int, Gt(0)]) -> None:\n    pass\n",
     "def g(y):\n    return y\n"),
    # a def declaring `global X` runs nothing as it is defined: X is bound by the time it is called
    ("global-not-called", "import os\n", "def set_x():\n    global X\n    X = 1\n", "X = 2\n"),
    # helper-139: methods are no fields, members nor registrations: a dataclass's, a class's with a base
    ("dataclass-methods", DATACLASS, "    def m(self):\n        return 1\n",
     "    @property\n    def n(self):\n        return 2\n"),
    ("abstract-methods", "import abc\n\n\nclass K(abc.ABC):\n    a = 0\n",
     "    @abc.abstractmethod\n    def m(self):\n        pass\n", "    @classmethod\n    def n(cls):\n        return 2\n"),
    ("property-setters", "class K:\n    a = 0\n", "    @property\n    def x(self):\n        return 1\n\n    @x.setter\n"
     "    def x(self, v):\n        pass\n", "    @property\n    def y(self):\n        return 2\n"),
    # decorators that only wrap register nothing; a base of the module without hooks runs nothing of it
    ("wrapping-decorators", "import functools\nimport pytest\n", "@functools.cache\ndef a():\n    return 1\n",
     "@pytest.fixture()\ndef b():\n    return 2\n"),
    ("local-base-without-hooks", "import abc\n\n\nclass Base(metaclass=abc.ABCMeta):\n    pass\n",
     "class A(Base):\n    x = 1\n", "class B(Base):\n    y = 2\n"),
    # a base imported from elsewhere may register its subclasses: accepted, unsound in principle (pynamespace)
    ("imported-bases", "from torch import nn\n", "class A(nn.Module):\n    x = 1\n", "class B(nn.Module):\n    y = 2\n"),
]


@pytest.mark.parametrize(("head", "one", "two"), [s[1:] for s in SAFE], ids=[s[0] for s in SAFE])
def test_insertions_whose_order_cannot_matter_resolve(git: Git, head: str, one: str, two: str) -> None:
    resolution = _resolve(git, head, one, two)
    assert resolution is not None and resolution.ok, resolution and resolution.why
    assert resolution.text == (head + one + two + "Z = 9\n").encode()
    ast.parse(resolution.text)


# (name, head, ours' insertion, theirs', the refusal's sentence begins): the order may matter
ORDERED = [
    ("calls-what-other-defines", "import os\n", "A = make()\n", "def make():\n    return 1\n", "one insertion reads"),
    # the callee's body reads B: `make()` before `B = 2` is a NameError, after it is 2
    ("local-callee", "def make():\n    return B\n", "A = make()\n", "B = 2\n", "an insertion calls `make`"),
    ("local-like-a-factory", "def field(**kw):\n    return B\n", "x = field(default=0)\n", "B = 1\n",
     "an insertion calls `field`"),
    ("both-call", "from helpers import a, b\n", "A = a()\n", "B = b()\n", "an insertion calls `"),
    ("beside-a-factory", "import re\nfrom helpers import a\n", "A = a()\n", "P = re.compile('x')\n",
     "an insertion calls `a`"),
    ("beside-an-import", "from helpers import a\n", "A = a()\n", "import plugins\n", "an insertion calls `a`"),
    ("beside-a-decorated-def", "from helpers import a, register\n", "A = a()\n",
     "@register\ndef f():\n    pass\n", "an insertion calls `a`"),
    ("beside-a-class-with-a-base", "from helpers import a, Base\n", "A = a()\n", "class K(Base):\n    pass\n",
     "an insertion calls `a`"),
    ("beside-a-copy", "import config\nfrom helpers import load\n", "A = load()\n", "MODE = config.MODE\n",
     "an insertion calls `load`"),      # load() may set config.MODE: MODE is the old or the new value
    ("beside-a-key-set", "import os\nfrom helpers import read_env\n", "A = read_env()\n",
     "os.environ['MODE'] = 'x'\n", "an insertion calls `read_env`"),
    ("handed-a-local", "from helpers import a\n\n\ndef cb():\n    return B\n", "A = a(cb)\n", "B = 1\n",
     "an insertion calls `a`"),
    ("handed-a-lambda", "from helpers import a\n", "A = a(lambda: B)\n", "C = 1\n", "an insertion calls `a`"),
    ("forward-reference", "from pydantic import TypeAdapter\n", "TA = TypeAdapter('list[Foo]')\n",
     "class Foo:\n    pass\n", "an insertion calls `TypeAdapter`"),
    ("introspective", "import sys\n", "A = sys._getframe(0)\n", "B = 1\n", "an insertion calls `sys._getframe`"),
    ("globals", "import os\n", "A = globals()\n", "B = 1\n", "an insertion calls `globals`"),
    ("factory-reads-other", "import re\n", "PAT = re.compile(PREFIX)\n", "PREFIX = 'a'\n", "one insertion reads"),
    ("constructor-not-literal", "def names():\n    return [B]\n", "S = frozenset(names())\n", "B = 2\n",
     "an insertion calls"),
    ("builtin-rebound", "def list(x):\n    return B\n", "S = list((1,))\n", "B = 2\n", "an insertion calls `list`"),
    ("print-beside-print", "import os\n", "A = print('a')\n", "C = print('c')\n", "an insertion calls `print`"),
    # Enum's namespace runs code as a member is bound: GREEN's auto() is 2 before BLUE, 6 after it
    ("enum-auto", ENUM, "    GREEN = auto()\n", "    BLUE = 5\n", "an insertion calls `auto`"),
    ("enum-autos", ENUM, "    GREEN = auto()\n", "    BLUE = auto()\n", "an insertion calls `auto`"),
    # annotations are read without the future import, and under it by what may resolve them as it runs
    ("eager-signature", "import os\n", "def f(x: Url) -> Url:\n    return x\n", "Url = str\n", "one insertion reads"),
    ("future-value", FUTURE, "DEFAULT: Url = Url\n", "Url = str\n", "one insertion reads"),
    ("future-decorated", FUTURE + "from functools import singledispatch\n",
     "@show.register\ndef _(x: Url) -> str:\n    return x\n", "Url = str\n", "one insertion reads"),
    ("future-dataclass", FUTURE + "from dataclasses import dataclass\n", "@dataclass\nclass P:\n    x: CV[int] = 1\n",
     "CV = ClassVar\n", "one insertion reads"),
    ("future-based-class", FUTURE + "from pydantic import BaseModel\n", "class M(BaseModel):\n    x: Url\n",
     "Url = str\n", "one insertion reads"),
    # helper-139: a class body's names in order are fields (`__init__`'s parameters), members, a namespace
    ("dataclass-fields", DATACLASS, "    x: int = 0\n", "    y: str = ''\n", "both insertions bind names in the body"),
    # y after x is a TypeError (a field without a default after one with it); x after y is C(a, y, x=0)
    ("dataclass-required", REQUIRED, "    x: int = 0\n", "    y: str\n", "both insertions bind names in the body"),
    ("dataclass-factory", DATACLASS, "    x: list = field(default_factory=list)\n", "    y: int = 1\n",
     "both insertions bind names in the body"),
    ("namedtuple", "from typing import NamedTuple\n\n\nclass P(NamedTuple):\n    a: int\n", "    x: int = 0\n",
     "    y: int = 0\n", "both insertions bind names in the body"),
    ("attrs", "import attrs\n\n\n@attrs.define\nclass P:\n    a: int = 0\n", "    x: int = 1\n", "    y: int = 2\n",
     "both insertions bind names in the body"),
    ("enum-members", "import enum\n\n\nclass Color(enum.Enum):\n    RED = 1\n", "    GREEN = 2\n", "    VERT = 2\n",
     "both insertions bind names in the body"),          # the first bound is the member, the other its alias
    ("enum-member-def", "import enum\n\n\nclass Color(enum.Enum):\n    RED = 1\n",
     "    @enum.member\n    def green(self):\n        pass\n", "    BLUE = 3\n", "both insertions bind names in the body"),
    ("metaclass", "from helpers import Meta\n\n\nclass K(metaclass=Meta):\n    a = 1\n", "    x = 1\n", "    y = 2\n",
     "both insertions bind names in the body"),
    ("plain-class", "from dataclasses import dataclass\n\n\nclass C:\n    a: int = 0\n", "    x: int = 1\n",
     "    y: int = 2\n", "both insertions bind names in the body"),     # `dataclass(C)` may come after it
    # each registers as it runs: REG's order is the order they ran in
    ("registrations", "from helpers import app\n", "@app.command()\ndef a():\n    pass\n",
     "@app.command()\ndef b():\n    pass\n", "both insertions are decorated, `app.command()`"),
    # the module's own code runs at the insertion: register reads MODE, __init_subclass__ LIMIT
    ("local-decorator", REGISTRY, "@register\ndef a():\n    pass\n", "MODE = 'x'\n", "an insertion runs `register`"),
    ("init-subclass", SUBCLASSES, "class A(Base):\n    pass\n", "LIMIT = 3\n", "an insertion runs `Base`"),
    ("local-metaclass", "class Meta(type):\n    def __new__(m, n, b, ns):\n        return super().__new__(m, n, b, ns)\n",
     "class A(metaclass=Meta):\n    pass\n", "B = 2\n", "an insertion runs `Meta`"),
]


@pytest.mark.parametrize(("head", "one", "two", "why"), [o[1:] for o in ORDERED], ids=[o[0] for o in ORDERED])
def test_insertions_whose_order_may_matter_stay_a_conflict(git: Git, head: str, one: str, two: str, why: str) -> None:
    for ours, theirs in ((one, two), (two, one)):
        resolution = _resolve(git, head, ours, theirs)
        assert resolution is not None and resolution.refused == ["order-dependent"], resolution
        assert resolution.why[0].startswith(why), resolution.why


def test_a_module_level_call_of_a_function_declaring_global_stays_a_conflict(git: Git) -> None:
    """`global X` makes the function's `X = 1` bind the module's X when it runs. Defined only, it runs after
    both insertions (whichever order: `global-not-called` resolves). Called at module level inside one
    insertion, it runs at the insertion: before theirs' `X = 2` the module ends with X == 2, after it with
    X == 1. The call is to a function of this module (not an import), whose body may read and bind anything
    of it, so it is refused whatever the other side binds."""
    one = "def set_x():\n    global X\n    X = 1\n\n\nDONE = set_x()\n"
    for ours, theirs in ((one, "X = 2\n"), ("X = 2\n", one)):
        resolution = _resolve(git, "import os\n", ours, theirs)
        assert resolution is not None and resolution.refused == ["order-dependent"]
        assert resolution.why[0].startswith("an insertion calls `set_x`")
    resolution = _resolve(git, "def set_x():\n    global X\n    X = 1\n", "DONE = set_x()\n", "X = 2\n")
    assert resolution is not None and resolution.refused == ["order-dependent"]


def _run(source: str) -> object:
    """What running SOURCE gives: its OUT, or the exception it raises (the type and message)."""
    space: dict[str, object] = {}
    try:
        exec(compile(source, "m.py", "exec"), space)     # noqa: S102 - the test's own source text
    except Exception as error:                          # noqa: BLE001 - a NameError, a TypeError: the outcome
        return f"{type(error).__name__}: {error}"
    return space["OUT"]


# (name, head, ours' insertion, theirs', tail giving OUT): helper-139, each resolved before in the order the
# insertions are given (sync exit 0); run in the other order it gives another OUT or raises
RUNS = [
    ("dataclass-fields", DATACLASS, "    x: int = 0\n", "    y: str = ''\n",
     "\n\nimport inspect\nOUT = str(inspect.signature(C))\n"),
    ("dataclass-required", REQUIRED, "    x: int = 0\n", "    y: str\n", "\n\nOUT = C(1, 'y')\n"),
    ("enum-alias", "import enum\n\n\nclass Color(enum.Enum):\n    RED = 1\n", "    GREEN = 2\n", "    VERT = 2\n",
     "\n\nOUT = [c.name for c in Color]\n"),
    ("dataclass-later", "from dataclasses import dataclass, fields\n\n\nclass C:\n    a: int = 0\n", "    x: int = 1\n",
     "    y: int = 2\n", "\n\ndataclass(C)\nOUT = [f.name for f in fields(C)]\n"),
    ("registrations", "REG = []\n\n\ndef command(f):\n    REG.append(f.__name__)\n    return f\n",
     "@command\ndef a():\n    pass\n", "@command\ndef b():\n    pass\n", "OUT = REG\n"),
    ("local-decorator", REGISTRY, "@register\ndef a():\n    pass\n", "MODE = 'x'\n", "OUT = REG\n"),
    ("init-subclass", SUBCLASSES, "class A(Base):\n    pass\n", "LIMIT = 3\n", "OUT = Base.seen\n"),
]


@pytest.mark.parametrize(("head", "one", "two", "tail"), [r[1:] for r in RUNS], ids=[r[0] for r in RUNS])
def test_insertions_each_order_runs_differently_stay_a_conflict(git: Git, head: str, one: str, two: str,
                                                                tail: str) -> None:
    assert _run(head + one + two + tail) != _run(head + two + one + tail)      # the order does matter
    for ours, theirs in ((one, two), (two, one)):
        resolution = _resolve(git, head, ours, theirs, tail)
        assert resolution is not None and resolution.refused == ["order-dependent"], resolution
