"""A name the composed module uses that nothing binds any more: an entry resolved `on_conflict: theirs`
against upstream took its own import lines, upstream's `import pytest` among them went, and upstream's test
using `pytest` further down stayed (helper-133, on sympy: exit 0, "possible upstream content loss", and a
module that fails when its test runs)."""

from __future__ import annotations

import ast

import pytest

from carrytool.pipeline.unbound import _first_loads, binding_line, unbound_names
from tests.conftest import Cli, Small
from tests.pipeline.test_sync import by_id, sync

BODY = "".join(f"def f{n}():\n    return os.sep + sys.path[{n}]\n\n\n" for n in range(12))
BASE = "import os\nimport sys\n\n\n" + BODY
USE = "def test_raises():\n    with pytest.raises(ValueError):\n        int('x')\n"


def _unbound(report: dict) -> list[dict]:
    return [w for w in report["warnings"] if w["kind"] == "unbound-name"]


def _theirs(cli: Cli, small: Small, prelude: str = "", tail: str = USE) -> tuple[int, dict]:
    """Upstream adds `import pytest` beside the imports and TAIL at the end; pr/1 rewrites the imports
    (a conflict), resolved `theirs`: its lines win, and `import pytest` goes."""
    small.base = small.up.commit({"t.py": prelude + BASE}, "a module", parent="main", ref="refs/heads/main")
    small.pr(1, {"t.py": prelude + BASE.replace("import os\nimport sys\n", "import os.path\nimport sys\n")})
    small.up.commit({"t.py": prelude + BASE.replace("import sys\n", "import pytest\nimport sys\n") + "\n\n" + tail},
                    "upstream tests", parent="main", ref="refs/heads/main")
    small.manifest([{"pr": 1, "on_conflict": "theirs"}])
    return sync(cli, small)


def test_theirs_dropping_an_import_upstream_still_uses(cli: Cli, small: Small) -> None:
    code, report = _theirs(cli, small)
    assert code == 0 and by_id(report)["pr/1"]["status"] == "applied", report
    assert [w["kind"] for w in report["warnings"]] == ["upstream-loss", "unbound-name"]
    [warning] = _unbound(report)
    composed = small.work.git("show", "dev:t.py").splitlines()
    assert "import pytest" not in composed and "pytest.raises" in composed[warning["line"] - 1]
    assert {k: warning[k] for k in ("entry", "file", "name", "dropped")} == \
        {"entry": "pr/1", "file": "t.py", "name": "pytest", "dropped": {"line": 2, "text": "import pytest"}}
    assert warning["message"] == (f"t.py uses pytest at line {warning['line']}, which nothing binds any more: pr/1 "
                                  "(on_conflict: theirs) dropped `import pytest` (line 2 before it); the module "
                                  f"raises NameError when line {warning['line']} runs")
    text = cli("sync", "-q", "-m", small.manifest_path, "--repo", small.work.path, "--dry-run")
    assert "t.py uses pytest at line" in " ".join(text.output.split()), text.output


@pytest.mark.parametrize(("prelude", "tail"), [
    ("", "def test_local():\n    pytest = object()\n    return pytest\n"),           # a local binds it
    ("", "def test_later():\n    return pytest\n\n\npytest = None\n"),               # bound again at module level
    ("from __future__ import annotations\n", "def test_hint(x: pytest.Mark) -> 'pytest.Mark':\n    return x\n"),
    ("from helpers import *\n", USE),                                                 # a star import may bind it
])
def test_near_misses_say_nothing(cli: Cli, small: Small, prelude: str, tail: str) -> None:
    code, report = _theirs(cli, small, prelude, tail)
    assert code == 0 and by_id(report)["pr/1"]["status"] == "applied", report
    assert [w["kind"] for w in report["warnings"]] == ["upstream-loss"]


def test_a_name_unbound_upstream_already_is_not_news(cli: Cli, small: Small) -> None:
    code, report = _theirs(cli, small, tail=USE + "\n\ndef uses_missing():\n    return missing_name\n")
    assert [(w["kind"], w.get("name")) for w in report["warnings"]] == [("upstream-loss", None),
                                                                        ("unbound-name", "pytest")]


@pytest.mark.parametrize(("source", "expected"), [
    ("import os\ndef f(y):\n    return os.sep + pytest.x + [z for z in q]\n", {"pytest": 3, "q": 3}),
    ("class K:\n    m = 1\n    def h(self):\n        return m + len(self)\n", {"m": 4}),
    ("def f(a: A, b=d) -> R:\n    return a\n@deco\nclass C(Base):\n    y: T = lambda q=v: q + w\n",
     {"A": 1, "d": 1, "R": 1, "deco": 3, "Base": 4, "T": 5, "v": 5, "w": 5}),
    ("from __future__ import annotations\ndef f(a: A) -> R:\n    b: B = 1\n    return a\n", {}),
    ("def f():\n    return g()\ndef later():\n    global g\n    g = 1\n", {}),
    ("def f():\n    print(x)\n    x = 1\n", {}),
    ("print(__file__, __name__, ValueError)\n", {}),
])
def test_unbound_names(source: str, expected: dict) -> None:
    assert unbound_names(source.encode()) == expected


@pytest.mark.parametrize("source", ["from m import *\nprint(x)\n", "def __getattr__(n):\n    return n\nprint(x)\n",
                                    "globals()['x'] = 1\nprint(x)\n", "exec('x = 1')\nprint(x)\n", "def f(:\n"])
def test_modules_that_bind_unseen_or_do_not_parse_say_nothing(source: str) -> None:
    assert unbound_names(source.encode()) is None


def test_binding_line() -> None:
    source = b"import os.path\nfrom a import b as c\ndef f():\n    pass\nx, (y, z) = 1, (2, 3)\n"
    assert [binding_line(source, name) for name in ("os", "c", "f", "z", "b")] == [1, 2, 3, 5, None]


def test_postponed_annotations_are_no_loads_whatever_symtable_says() -> None:
    """Python 3.11's symtable already leaves them out; later ones may not (PEP 649): the AST walk does too."""
    source = "from __future__ import annotations\ndef f(a: A) -> R:\n    b: B = 1\n    return a\nx: X = C\n"
    loose = {("top", 0): {"A", "R", "X", "C"}, ("f", 2): {"B"}}
    assert _first_loads(ast.parse(source), loose) == {"C": 5}
    assert _first_loads(ast.parse(source.split("\n", 1)[1]), loose) == {"A": 1, "R": 1, "X": 4, "C": 4}
