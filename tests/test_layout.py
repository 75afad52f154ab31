"""The package layout is the architecture: imports flow one way, no cycles, rich/typer only at the edge.

Read from the source with `ast` (every import, including those inside functions), so a lazy import that
climbs a layer or closes a cycle fails here as surely as a top-level one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "carrytool"

# cli -> render/demo -> union -> review -> pipeline -> manifest -> gitlayer -> asserts/errors
RANK = {"cli": 9, "__main__": 9, "demo": 8, "render": 7, "union": 6, "review": 5, "pipeline": 4,
        "manifest": 3, "gitlayer": 2, "asserts": 1, "errors": 0, "": 0}
EDGE_ONLY = {"rich", "typer", "click"}          # the user interface stays at the edge
EDGE = {"cli", "render"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every (line, absolute module) imported by PATH, relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            found.append((node.lineno, base))
            # `from carrytool.x import y` may name a submodule y: count it as imported too
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names
                      if (PACKAGE.parent / f"{base}.{a.name}".replace(".", "/")).with_suffix(".py").exists()]
    return found


def _job(module: str) -> str:
    """The job (top-level subpackage or module) a carrytool module belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_job_has_a_rank_and_the_top_level_is_small() -> None:
    entries = sorted(p.name for p in PACKAGE.iterdir() if not p.name.startswith(("__", ".")))
    assert len([e for e in entries if e != "py.typed"]) <= 11, entries
    unknown = {_job(m) for m in MODULES} - set(RANK)
    assert not unknown, f"new top-level module or package without a place in the layering: {unknown}"


def test_every_package_says_what_it_owns_and_may_import() -> None:
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert len(doc) > 120 and re.search(r"\bimport", doc), f"{init}: say what it owns and may import"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_flow_downward(module: str) -> None:
    mine = RANK[_job(module)]
    for line, target in _imports(MODULES[module]):
        if target.split(".")[0] in EDGE_ONLY:
            assert _job(module) in EDGE, f"{module}:{line} imports {target}: only cli and render may"
        if not target.startswith("carrytool.") or _job(target) == _job(module):
            continue
        assert RANK[_job(target)] <= mine, (
            f"{module}:{line} imports {target}, a layer above it ({_job(module)} -> {_job(target)})")


def test_no_import_cycles() -> None:
    graph = {m: {t for _, t in _imports(p) if t in MODULES and t != m} for m, p in MODULES.items()}
    # packages import their own submodules lazily (asserts/__init__): a package's edge to its child is not a cycle
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt.startswith(node + "."):
                continue
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_declared_dependencies_are_imported() -> None:
    """A declared dependency is a promise to every installer: each one is imported by the package."""
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert block
    declared = {re.split(r"[<>=!~ \[]", d.strip().strip('",'))[0].lower()
                for d in re.findall(r'"([^"]+)"', block.group(1))}
    import_names = {"pyyaml": "yaml", "gitpython": "git"}
    imported = {t.split(".")[0] for p in MODULES.values() for _, t in _imports(p)}
    unused = {d for d in declared if import_names.get(d, d) not in imported}
    assert not unused, f"declared in pyproject.toml but imported nowhere: {unused}"
