"""A line's calls read in its file, not on the line alone (h243): a call spanning lines has its arguments counted
on its whole text, and a name bound to a function above in the enclosing def is that function.

pipeline.lineroles reads one line: a call it leaves open has no argument count, so a union dropping an argument of a
PR's call written over several lines passed (`send_report(\\n    d,\\n    'weekly',\\n)` carried as
`send_report(dd)`), and a name the union's def bound to the PR's function before the union's hunk (`sr =
send_report`) was another name (`sr(dd, 'weekly')` warned dropped). Both are read here from the blob's lines, with
lineroles' scanner (strings, comments, brackets): exact where the brackets balance, the count unknown only where it
cannot be known (`*args`, `**kw`) or the call does not close within _MOST lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from carrytool.pipeline.linecalls import (
    Alias,
    Call,
    Form,
    alias_of,
    call_args,
    call_forms,
    imported_as,
    parameters,
    rebound,
)
from carrytool.pipeline.lineroles import calls_of, code_of

_MOST = 2000        # lines read on for a call left open (a file that never closes it: read no further)
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_BACK = 400         # lines read back for the bracket a continuation line is inside (opening_line)
# the first words of statements no bracket holds: reading back from a line inside one stops at them
_STATEMENTS = frozenset({"def", "class", "return", "import", "while", "try", "with", "raise", "del", "pass", "assert",
                         "global", "nonlocal", "break", "continue", "elif", "except", "finally"})
# a top-level line opening a block whose body is the module's (not a def's or a class's)
_BLOCK = re.compile(rb"(?:if|elif|else|try|except|finally|for|while|with|async\s+(?:for|with)|match)\b")


def whole_calls(lines: Sequence[bytes], at: int, opened: str = "") -> frozenset[Form]:
    """The calls line AT (0-based) of LINES (a Python file's) makes, each counted on its whole text: a call the line
    leaves open is read on, through the lines after it, until its brackets close (lineroles.calls_of counts it on
    its own line only: None). OPENED: the quote of the string line AT starts in."""
    forms = calls_of(lines[at], opened)
    if all(count is not None for _n, _r, count in forms):
        return forms
    whole = _statement(lines, at, opened)
    return forms if whole is None else frozenset(call_forms(*whole))


def whole_args(lines: Sequence[bytes], at: int, opened: str = "") -> frozenset[Call]:
    """The calls line AT of LINES makes with their arguments (linecalls.call_args), read on as whole_calls reads
    them; a decorator's line read alone (its call is its decorating, with its arguments: h257, `@app.route('/x')`
    kept for a PR's `@app.route('/y')` read as its line); a `def` line its parameters too (linecalls.parameters:
    a union's `def f(a, b=1)` for a PR's default made `    b=2,` on its own line)."""
    code = code_of(lines[at], opened)[0]
    if not code:
        return frozenset()
    whole = _statement(lines, at, opened, decorator=True)
    defined = parameters(code if whole is None else whole[0])      # a def's parameters: their defaults (h264)
    return frozenset(call_args(code) if whole is None else call_args(*whole)) | \
        ({defined} if defined is not None else set())


def openers(lines: Sequence[bytes], quotes: dict[int, str], start: int, count: int) -> list[int | None]:
    """For each of COUNT lines of LINES (a Python file; QUOTES: lineroles.quotes_open of it) from line START (0-based),
    the line (0-based) opening the innermost bracket still open where it starts: the first line of the call whose
    arguments it continues (`x = send(` for `        2,`; whole_args reads that call whole from it); None where no
    bracket is open there. Read back from START once (_open_above), then on through the lines."""
    stack, found = _open_above(lines, quotes, start), []
    for n in range(start, min(start + count, len(lines))):
        found.append(stack[-1] if stack else None)
        for _kind, text in code_of(lines[n], quotes.get(n + 1, ""))[0]:
            if text in _OPEN:
                stack.append(n)
            elif text in _CLOSE and stack:
                stack.pop()
    return found


def _open_above(lines: Sequence[bytes], quotes: dict[int, str], at: int) -> list[int]:
    """The lines (0-based) opening the brackets still open where line AT starts, the innermost last: read back to a
    line opening a statement no bracket can hold (`def`, `return`, ...), or _BACK lines at most."""
    closes, found = 0, []
    for n in range(at - 1, max(-1, at - 1 - _BACK), -1):
        code = code_of(lines[n], quotes.get(n + 1, ""))[0]
        for _kind, text in reversed(code):
            if text in _CLOSE:
                closes += 1
            elif text in _OPEN:
                if closes:
                    closes -= 1
                else:
                    found.append(n)
        if code and (code[0][1] in _STATEMENTS or code[0][1] == "async" and code[1:2] and code[1][1] in _STATEMENTS):
            break                   # (`async def`, `async with`: h264's review)
    return found[::-1]


def _statement(lines: Sequence[bytes], at: int, opened: str, *, decorator: bool = False
               ) -> tuple[list[tuple[str, str]], int, int] | None:
    """Line AT's code read on through the lines after it until its brackets close, with 0 (the tokens to skip) and
    how many tokens are line AT's own: its calls' (call_forms' SKIP and STOP); None where the line closes them
    itself, is a decorator (but with DECORATOR: whole_args reads its call's arguments), or they do not close
    within _MOST lines."""
    code, left = code_of(lines[at], opened)
    depth = _depth(code)
    if depth <= 0 or code[0][1] == "@" and not decorator:
        return None                 # closed (None: a star), or a decorator's call: no call of the line's own
    end = at + 1
    while depth > 0 and end < min(len(lines), at + 1 + _MOST):
        more, left = code_of(lines[end], left)
        depth += _depth(more)
        end += 1
    if depth > 0:
        return None
    return code_of(b"\n".join(lines[at:end]), opened)[0], 0, len(code)


def _depth(code: list[tuple[str, str]]) -> int:
    return sum((text in _OPEN) - (text in _CLOSE) for _kind, text in code)


def module_bindings(lines: Sequence[bytes], quotes: dict[int, str]) -> dict[str, Alias]:
    """The names LINES (a Python file; QUOTES: lineroles.quotes_open of it) bind at their top level to a function
    or method named alone (linecalls.alias_of: `sr = send_report`) or import under a name of their own
    (linecalls.imported_as: `from reporting import send_report as sr`), and name nowhere after at that level but to
    call them (as bindings_before reads a def's: `sr = log` after it, read as no alias). h255: neither side's were
    read, so `sr(dd, 'weekly')` under `sr = send_report` at the top was no form of `send_report(d, 'weekly')`."""
    found: dict[str, Alias] = {}
    block = False           # the top-level statement above opens a block of the module's own (`if`, `try`, ...)
    for n, line in enumerate(lines, 1):
        if line[:1] not in (b" ", b"\t"):
            if n not in quotes and line.strip() and line[:1] not in b"#)]}":
                block = _BLOCK.match(line) is not None
        elif not (block and found):
            continue                # a def's or class's body binds its own names
        if not (b"=" in line or b"import" in line or any(name.encode() in line for name in found)):
            continue                # read no line that can neither bind a name nor name one bound (h255: 17,000 lines)
        code, indent = _code_line(lines, quotes, n)
        if not code or code[0][1] in _CLOSE:
            continue
        for name in found.keys() & rebound(code):
            del found[name]         # (also in an `if` or `try` of the module: it may be bound so, h262)
        if indent:
            continue                # an alias bound in a block only may not be: none
        alias = alias_of(code)
        found.update([alias] if alias is not None else imported_as(code))
    return found


def bindings_before(lines: Sequence[bytes], quotes: dict[int, str], at: int, end: int | None = None,
                    outer: dict[str, Alias] | None = None) -> dict[str, Alias]:
    """The names the def holding line AT (1-based) of LINES (a Python file; QUOTES: lineroles.quotes_open of it)
    binds to a function or method named alone (linecalls.alias_of: `sr = send_report`) above that line, in its own
    body (not in a def or class nested in it), and names nowhere after that above it but to call it (`sr = log`,
    `for sr in ...`, `x = sr`, `def sr(...)`, a parameter of the def: read as no alias, the union's call then judged
    by its own name).
    At module level (every line of code from AT to END at the top), the module's names bound above AT (h259: none
    were read there, so a PR's `sr(a, b)` under `sr = send_report` at the top, neither in a def, was another call
    than the union's `send_report(a, b)`); none at class level, nor where a line of code from AT to END (a hunk's
    last line) leaves the def (what it binds is not the next def's). OUTER: the module's (module_bindings),
    standing where the def does not name them."""
    start = _enclosing_def(lines, quotes, at)
    if start is None:
        return _at_top(lines, quotes, at, end)
    if any(code and indent <= _code_line(lines, quotes, start)[1] for code, indent in (
            _code_line(lines, quotes, n) for n in range(at, min(end or at, len(lines)) + 1))):
        return {}
    found: dict[str, Alias] = dict(outer or {})
    for name in found.keys() & _parameters(_code_line(lines, quotes, start)[0]):
        del found[name]                 # h257: `def f(self, sr):` under the module's `sr = send_report`
    nested: int | None = None
    for n in range(start + 1, at):
        code, indent = _code_line(lines, quotes, n)
        if not code or nested is not None and indent > nested:
            continue
        nested = indent if _opens_def(code) or code[0][1] in ("class", "@") else None
        for name in found.keys() & rebound(code):
            del found[name]
        alias = alias_of(code)
        if alias is not None:
            found[alias[0]] = alias[1]
    return found


def _parameters(code: list[tuple[str, str]]) -> set[str]:
    """The names of the parameters a `def` line (CODE, its tokens) declares on that line (not its defaults' or
    annotations' names: `def f(self, cb=sr, *rest: T)` declares self, cb, rest)."""
    opening = next((i for i, (_kind, text) in enumerate(code) if text == "("), len(code))
    names, depth, before = set(), 0, ","
    for kind, text in code[opening + 1:]:
        if depth == 0 and kind == "name" and before in (",", "*", "**"):
            names.add(text)
        depth += (text in _OPEN) - (text in _CLOSE)
        before = text
    return names


def _at_top(lines: Sequence[bytes], quotes: dict[int, str], at: int, end: int | None) -> dict[str, Alias]:
    """The names bound at module level above line AT (module_bindings of the lines above it: a binding below a call
    at the top runs after it) where every line of code from AT to END is at the top; else none (a class's body)."""
    codes = [_code_line(lines, quotes, n) for n in range(at, min(end or at, len(lines)) + 1)]
    if not any(code for code, _indent in codes) or any(code and indent for code, indent in codes):
        return {}
    return module_bindings(lines[:at - 1], quotes)


def _enclosing_def(lines: Sequence[bytes], quotes: dict[int, str], at: int) -> int | None:
    """The 1-based number of the `def` line whose body holds line AT (or the first line of code after it): the
    nearest line above it less indented than every line of code between (but one starting with a closing bracket,
    `):` ending a def's parameters), that opens a def; None where a class's body or the module holds it first."""
    limit = next((indent for n in range(at, len(lines) + 1) for code, indent in [_code_line(lines, quotes, n)]
                  if code), 0)
    for n in range(min(at - 1, len(lines)), 0, -1):
        if not limit:
            return None
        code, indent = _code_line(lines, quotes, n)
        if not code or indent >= limit or code[0][1] in _CLOSE:       # a bracket closing a statement above
            continue
        if _opens_def(code):
            return n
        if code[0][1] == "class":
            return None
        limit = indent
    return None


def _opens_def(code: list[tuple[str, str]]) -> bool:
    return code[0][1] == "def" or code[0][1] == "async" and len(code) > 1 and code[1][1] == "def"


def _code_line(lines: Sequence[bytes], quotes: dict[int, str], n: int) -> tuple[list[tuple[str, str]], int]:
    """Line N (1-based) of LINES as code, with its indentation: no code for a blank line, a comment alone, or one
    starting inside a string."""
    line = lines[n - 1]
    if n in quotes or not line.strip():
        return [], 0
    code = code_of(line)[0]
    return code, len(line) - len(line.lstrip(b" \t"))
