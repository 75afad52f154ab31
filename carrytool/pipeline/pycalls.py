"""Which calls an insertion makes as it runs cannot make its order beside another insertion matter.

Pure, over `ast`. pipeline.pyorder has already refused an insertion that reads what the other binds (the
callee and the arguments included); what is left is what the call runs. A call is order-safe when either:

- (factory) its callee is, by the module's own imports, one of a few factories that return a new object and
  run nothing they are given (`dataclasses.field`, `typing.TypeVar`/`ParamSpec`/`TypeVarTuple`/`NewType`/
  `NamedTuple`/`TypedDict`, `collections.namedtuple`, `re.compile`, `logging.getLogger`,
  `contextvars.ContextVar`, and their `typing_extensions` twins), or a builtin container constructor
  (`frozenset`, `tuple`, `list`, `dict`, `set`, `object`) given only literals: it changes nothing another
  statement can see, and what the other insertion runs cannot change what it returns (a call there that is
  no such factory is accepted only beside an insertion that runs no code, which this one does not)
  (`enum.auto` is no such factory: its value is the count of the members before it);
- (inert neighbour) the other insertion runs no code at all and copies no state (no call, decorator,
  import, class base, augmented assignment, `del`, nor an assignment to an attribute or a subscript: only
  names bound to literals, to other names or to displays of such, undecorated defs whose defaults and
  annotations are such, and classes without bases whose bodies are: `M = config.MODE` would copy what the
  call may change first),
  the call's callee and every name it reads are the module's imports (of another module, its body cannot
  read this module's names) or builtins (not `globals`, `vars`, `locals`, `eval`, `exec`, `__import__`),
  none rooted in a module that reaches into its caller (`sys`, `inspect`, `importlib`, ...), it holds no
  lambda or comprehension (code the callee may run that reads this module), and no string naming what the
  other binds (a forward reference a callee may resolve in its caller's module). The other insertion then
  only binds names, which the call cannot read (pytest's `StashKey[int]()` beside `X = 1`).

Both need the whole module (`Module`): a name counts as an import only when nothing else anywhere in the
module binds it, nor imports it from elsewhere (a local `def field(): ...` may read anything). What stays
unsound in principle: a callee that reaches into its caller's module by introspection (`sys._getframe`)
without being given a name for it.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from carrytool.pipeline.pybindings import _bound

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TYPING = ("TypeVar", "ParamSpec", "TypeVarTuple", "NewType", "NamedTuple", "TypedDict")
FACTORIES = frozenset({
    "dataclasses.field", "collections.namedtuple", "re.compile", "logging.getLogger", "contextvars.ContextVar",
    *(f"{module}.{name}" for module in ("typing", "typing_extensions") for name in _TYPING),
})
CONSTRUCTORS = frozenset({"builtins.frozenset", "builtins.tuple", "builtins.list", "builtins.dict", "builtins.set",
                          "builtins.object"})
_PLAIN_METACLASSES = frozenset({"abc.ABCMeta"})   # builds a class running no code of the module
_DYNAMIC = frozenset({"globals", "vars", "locals", "eval", "exec", "__import__", "compile", "breakpoint"})
_INTROSPECTIVE = frozenset({"sys", "inspect", "importlib", "gc", "builtins", "ctypes", "runpy", "pkgutil"})
_RUNS_CODE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr, ast.Await,
              ast.Yield, ast.YieldFrom)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Module:
    """What the order rule needs of the whole module: IMPORTS (a name -> the dotted name it imports, for
    names bound by imports of that one thing and nothing else), BOUND (every name bound anywhere in it),
    LAZY_ANNOTATIONS (`from __future__ import annotations`: annotations are strings, not run), CODE (names a
    def or a class of the module binds: decorating with one runs the module's own code) and HOOKS (classes of
    the module whose subclassing runs its code: an `__init_subclass__`, a metaclass, or a base of the module
    that has one: helper-139)."""

    imports: dict[str, str]
    bound: frozenset[str]
    lazy_annotations: bool
    code: frozenset[str] = frozenset()
    hooks: frozenset[str] = frozenset()


def module_of(trees: Sequence[ast.Module]) -> Module | None:
    """The facts of a module that holds every statement of TREES (ours' and theirs' versions of one file:
    the resolution holds statements of both), or None when there are none."""
    if not trees:
        return None
    origins: dict[str, set[str]] = {}
    other: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name, origin in _imported(node):
                    origins.setdefault(name, set()).add(origin)
            else:
                other.update(_binds(node))
    imports = {name: found.pop() for name, found in origins.items() if len(found) == 1 and name not in other}
    lazy = all(any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
                   and any(a.name == "annotations" for a in node.names) for node in tree.body) for tree in trees)
    code = {node.name for tree in trees for node in ast.walk(tree) if isinstance(node, (*_FUNCTIONS, ast.ClassDef))}
    return Module(imports, frozenset(other | set(origins)), lazy, frozenset(code), _hooks(trees, imports))


def _hooks(trees: Sequence[ast.Module], imports: dict[str, str]) -> frozenset[str]:
    """The classes of TREES whose subclassing runs code of the module: one that defines `__init_subclass__` or
    names a metaclass (but `abc.ABCMeta`, by IMPORTS), or has a base that is such a class (its name, or attributes of it)."""
    classes = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    hooks = {node.name for node in classes
             if any(imports.get(root_name(k.value) or "", "") + _attrs(k.value) not in _PLAIN_METACLASSES
                    for k in node.keywords if k.arg == "metaclass")
             or any(isinstance(part, _FUNCTIONS) and part.name == "__init_subclass__" for part in node.body)}
    grew = True
    while grew:
        grew = False
        for node in classes:
            if node.name not in hooks and any(root_name(base) in hooks for base in node.bases):
                hooks.add(node.name)
                grew = True
    return frozenset(hooks)


def _attrs(node: ast.expr) -> str:
    """The attributes NODE takes of its root name: `.ABCMeta` for `abc.ABCMeta`, nothing for `ABCMeta`."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, "." + node.attr)
        node = node.value
    return "".join(parts)


def root_name(node: ast.expr) -> str | None:
    """The name NODE (a name, attributes of one, or a call or subscript of such) is rooted in, else None."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _imported(node: ast.Import | ast.ImportFrom) -> Iterable[tuple[str, str]]:
    for alias in node.names:
        if isinstance(node, ast.Import):
            yield (alias.asname, alias.name) if alias.asname else (alias.name.split(".")[0], alias.name.split(".")[0])
        elif alias.name != "*":
            yield alias.asname or alias.name, "." * node.level + (node.module or "") + "." + alias.name


def _binds(node: ast.AST) -> Iterable[str]:
    """The names NODE binds other than by importing, in whatever scope."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        yield node.id
    elif isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name
    elif type(node).__name__ in ("MatchAs", "MatchStar", "MatchMapping"):     # `case [x, *rest]`, `{**rest}`
        yield from (n for n in (getattr(node, "name", None), getattr(node, "rest", None)) if n)


def origin_of(func: ast.expr, module: Module) -> str | None:
    """The dotted name FUNC (a name, or attributes of one) is by MODULE's imports or the builtins; else None."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.insert(0, func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    root = module.imports.get(func.id)
    if root is None and _builtin(func.id, module):
        root = "builtins." + func.id
    return ".".join([root, *parts]) if root else None


def _builtin(name: str, module: Module) -> bool:
    """Whether NAME is a builtin MODULE does not bind (nor one that reads or runs code of its caller's module,
    nor a dunder: `__name__` names the caller's module)."""
    return name not in module.bound and hasattr(builtins, name) and name not in _DYNAMIC and not name.startswith("__")


def is_safe(call: ast.Call, other: Sequence[ast.stmt], module: Module, *, plain: bool = True) -> bool:
    """Whether CALL, made as an insertion runs, gives the same whichever of it and OTHER (the other insertion at
    the same place, which binds nothing it reads) runs first (see the module's docstring). PLAIN: the body
    that holds both binds as a dict does (not a class with bases, whose namespace may run code as OTHER binds:
    `Enum`'s gives `auto()` the count of the members before it)."""
    origin = origin_of(call.func, module)
    if origin in FACTORIES:
        return True
    if origin in CONSTRUCTORS:
        return all(_literal(arg) for arg in (*call.args, *(k.value for k in call.keywords)))
    return plain and runs_nothing(other) and _inert(call, other, module)


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _inert(call: ast.Call, other: Sequence[ast.stmt], module: Module) -> bool:
    """Whether all CALL reads is the module's imports of other modules (none that reach into their caller) or
    plain builtins, it runs no code of this module's it is handed, and names nothing OTHER binds in a string."""
    bound = {word for node in other for name in _bound(node) for word in _WORD.findall(name)}
    for part in ast.walk(call):
        if isinstance(part, _RUNS_CODE):
            return False
        if isinstance(part, ast.Constant) and isinstance(part.value, str) and bound & set(_WORD.findall(part.value)):
            return False
        if isinstance(part, ast.Name):
            origin = module.imports.get(part.id)
            if origin is None and not _builtin(part.id, module):
                return False
            if origin is not None and origin.split(".")[0] in _INTROSPECTIVE:
                return False
    return True


def runs_nothing(statements: Iterable[ast.stmt]) -> bool:
    """Whether STATEMENTS run no code as they run but binding names to literals or to what other names hold
    (a reference, not a snapshot: `config.MODE`, `LIMIT + 1` or `[*ITEMS]` copy what a call may change first):
    undecorated defs whose defaults and annotations are such, classes without bases whose bodies are, and
    no call, decorator, import, augmented assignment, `del`, nor an attribute or a subscript assigned."""
    for node in statements:
        if isinstance(node, _FUNCTIONS):
            args = node.args
            parts = [*args.defaults, *(d for d in args.kw_defaults if d), node.returns,
                     *(a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                       if a is not None)]
            if node.decorator_list or not all(_reference(part) for part in parts if part is not None):
                return False
        elif isinstance(node, ast.ClassDef):
            if node.decorator_list or node.bases or node.keywords or not runs_nothing(node.body):
                return False
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            values = [node.value] if isinstance(node, ast.Assign) else [node.annotation, node.value]
            if not all(_names_only(t) for t in targets) or not all(_reference(v) for v in values if v is not None):
                return False
        elif not isinstance(node, ast.Pass) and not (isinstance(node, ast.Expr)
                                                     and isinstance(node.value, ast.Constant)):   # a docstring
            return False
    return True


def _reference(value: ast.expr) -> bool:
    """Whether VALUE is a literal, a name, or a display of such (no `*spread`): nothing it reads is copied."""
    if isinstance(value, ast.Name) or _literal(value):
        return True
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return all(_reference(e) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(k is not None and _reference(k) for k in value.keys) and all(_reference(v) for v in value.values)
    return False


def _names_only(target: ast.expr) -> bool:
    if isinstance(target, ast.Starred):
        return _names_only(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_names_only(t) for t in target.elts)
    return isinstance(target, ast.Name)
