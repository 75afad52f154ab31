"""The Python a project declares (h194): `requires-python` read from a pyproject.toml by a small parser (carrytool
runs on 3.10, which has no tomllib), checked against tomllib where there is one; `python_requires` from a
setup.cfg; the lowest major.minor a specifier allows."""

from __future__ import annotations

import pytest

from carrytool.union.requires_python import declared_python, lower_bound, pyproject_requires, setup_cfg_requires

PYPROJECTS = [
    ("[project]\nname = 'x'\nrequires-python = \">=3.12\"\n", ">=3.12"),
    ("[project]  # the package\nrequires-python = '>=3.9, <4'  # why\n", ">=3.9, <4"),
    ('[ "project" ]\n"requires-python" = ">=3.11"\n', ">=3.11"),
    ("project.requires-python = '>=3.13'\n", ">=3.13"),
    ("[tool.x]\nrequires-python = '>=3.12'\n", None),                   # another table's key
    ("[project]\nname = 'x'\n[tool.x]\nrequires-python = '>=3.12'\n", None),
    ("[project]\nname = 'x'\n[[tool.x]]\nrequires-python = '>=3.12'\n", None),   # an array of tables'
    ('[project]\nrequires-python = """>=3.12"""\n', None),              # a multi-line string: not read
    ('[project]\nrequires-python = ">=3.12\\u0030"\n', None),           # an escape: not read
    ("[project]\nname = 'x'\n", None),
]


@pytest.mark.parametrize(("text", "spec"), PYPROJECTS)
def test_pyproject_requires(text: str, spec: str | None) -> None:
    assert pyproject_requires(text) == spec


@pytest.mark.parametrize(("text", "spec"), [(t, s) for t, s in PYPROJECTS if s is not None])
def test_what_it_reads_tomllib_reads_alike(text: str, spec: str) -> None:
    tomllib = pytest.importorskip("tomllib")
    assert tomllib.loads(text)["project"]["requires-python"] == spec


@pytest.mark.parametrize(("spec", "bound"), [
    (">=3.12", (3, 12)), (">= 3.12, <4", (3, 12)), ("~=3.11.2", (3, 11)), ("==3.13.*", (3, 13)),
    (">3.10", (3, 10)), (">=3", (3, 0)), ("<4, !=3.9.*, >=3.8", (3, 8)), ("<3.12", None), ("", None),
    ("3.12", None), (">=3.12; os_name", None)])
def test_lower_bound(spec: str, bound: tuple[int, int] | None) -> None:
    assert lower_bound(spec) == bound


def test_setup_cfg_and_which_comes_first() -> None:
    cfg = b"[metadata]\nname = x\n\n[options]\npython_requires = >=3.12\npackages = find:\n"
    assert setup_cfg_requires(cfg.decode()) == ">=3.12"
    assert setup_cfg_requires("[options\nbroken") is None
    assert declared_python(None, cfg) == ((3, 12), ">=3.12", "setup.cfg")
    assert declared_python(b"[project]\nrequires-python = '>=3.13'\n", cfg) == ((3, 13), ">=3.13", "pyproject.toml")
    assert declared_python(b"[project]\nname = 'x'\n", cfg) == ((3, 12), ">=3.12", "setup.cfg")
    assert declared_python(b"[project]\nname = 'x'\n", None) is None
