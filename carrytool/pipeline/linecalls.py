"""The calls a line of Python makes, each with what it is reached through and how many arguments it passes: a
union's line carries a PR's call (pipeline.lineroles) only where it makes it on the same object with no fewer
arguments (h235: `names.append(dd)` carried `errors.append(d)`, and `send_report(dd)` `send_report(d, 'weekly')`,
for the name they call alone). Read from lineroles' tokens of one line: (kind, text) pairs, comments left out."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Sequence

Form = tuple[str, str, "int | None"]      # a call: its name, what it is reached through (_receiver), its arguments
Alias = tuple[str, str]                   # what a name bound to a function calls: its name, what it is reached through
Rename = tuple[str, str]                  # a name a hunk renames: the old, the new

_KEYWORDS = frozenset(keyword.kwlist)
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def agree(mine: frozenset[Form], theirs: frozenset[Form], name: str,
          renames: frozenset[Rename] = frozenset()) -> bool:
    """Whether one of the calls of NAME in MINE (a union's line) makes one in THEIRS (a PR's lines) in other words:
    on the same object (the same receiver, or either reached through none: `send_report`, `self.send_report`,
    `reporting.send_report`; or the PR's under the name RENAMES renames it to: h240's review, another PR or the
    union renaming `errors` to `failures`, the union's `failures.append(d)` is the PR's `errors.append(d)`; or a
    delegate the PR's object holds, _delegates), with no fewer arguments (where both counts are known)."""
    return any(not (receiver and other and not _same(other, receiver, renames) and not _delegates(other, receiver))
               and (count is None or wanted is None or count >= wanted)
               for called, receiver, count in mine if called == name
               for named, other, wanted in theirs if named == name)


def _same(theirs: str, mine: str, renames: frozenset[Rename]) -> bool:
    """Whether receivers THEIRS and MINE (_receiver's chains) name one object: the same last name, or MINE's the
    one RENAMES renames THEIRS' to (`self.errors`, `errors`; `failures` for `errors`)."""
    one, two = _last(theirs), _last(mine)
    return one == two or (one, two) in renames


def _delegates(theirs: str, mine: str) -> bool:
    """Whether MINE reaches the PR's receiver THEIRS' attribute: its chain ends in THEIRS' last name and one name
    more (`self.reporter` for `self`, `self.errors.log` for `errors`), the object the PR's one holds, which a
    union moving the call onto a delegate calls (h243: `self.reporter.send_report(dd)` for `self.send_report(d)`
    was warned dropped). One attribute only: a longer chain reaches into the parts of an object the PR's holds,
    and a call's result (`self.reporter()`) or an item of it is another object, so those stay no form of it; nor
    is an unrelated object's method of that name (`other.send_report(dd)`)."""
    parts = mine.split(".")
    return len(parts) >= 2 and parts[-2] == _last(theirs) and _NAME.fullmatch(parts[-1]) is not None \
        and _NAME.fullmatch(parts[-2]) is not None


def _last(receiver: str) -> str:
    return receiver.rsplit(".", 1)[-1]


_WORD = re.compile(r"[^\W\d]\w*|\S")
_NAME = re.compile(r"[^\W\d]\w*")
_MOST = 400         # lines of a side of a hunk read for renames (each removed line against its added lines)


def renames_in(hunks: Iterable[tuple[Sequence[bytes], Sequence[bytes]]]) -> frozenset[Rename]:
    """The names HUNKS (each: its removed lines, its added lines) rename: (old, new) where a removed line comes back
    among the added ones with the one name old swapped for new, every other token alike (`errors = []` ->
    `failures = []`). A hunk of more than _MOST lines a side is not read."""
    found: set[Rename] = set()
    for removed, added in hunks:
        if not removed or not added or len(removed) > _MOST or len(added) > _MOST:
            continue
        by_length: dict[int, set[tuple[str, ...]]] = {}
        for line in added:
            words = tuple(_WORD.findall(line.decode("utf-8", "surrogateescape")))
            by_length.setdefault(len(words), set()).add(words)
        for line in removed:
            old = tuple(_WORD.findall(line.decode("utf-8", "surrogateescape")))
            for new in by_length.get(len(old), ()):
                swaps = {(a, b) for a, b in zip(old, new) if a != b}
                if len(swaps) == 1 and all(_NAME.fullmatch(word) and word not in _KEYWORDS
                                           for pair in swaps for word in pair):
                    found |= swaps
    return frozenset(found)


def call_forms(code: list[tuple[str, str]], skip: int, stop: int | None = None) -> set[Form]:
    """Each call CODE makes past its first SKIP tokens (as lineroles._calls finds them), before token STOP (None:
    its end): its name, what it is reached through (_receiver) and how many arguments it passes (_arguments)."""
    end = len(code) if stop is None else stop
    return {(text, _receiver(code, n), _arguments(code, n + 2)) for n, (kind, text) in enumerate(code[:end])
            if n >= skip and kind == "name" and text not in _KEYWORDS and n + 1 < len(code) and code[n + 1][1] == "("
            and not (n and code[n - 1][1] in ("def", "class"))}


def _receiver(code: list[tuple[str, str]], at: int) -> str:
    """What the name called at AT is reached through: the names before its `.`, dotted (`errors` of
    `errors.append`, `self.errors` of `self.errors.append`, `self` of `self.send_report`; agree compares their last
    names, and _delegates the one before), ending in `f()` or `x[]` for a call's or a subscript's result, `'` for a
    string's method; "" for a bare name."""
    if at < 2 or code[at - 1][1] != ".":
        return ""
    kind, text = code[at - 2]
    if kind == "string":
        return "'"
    start, last = at - 2, text
    if text in _CLOSE:
        depth, n = 0, at - 2
        while n >= 0:
            depth += (code[n][1] in _CLOSE) - (code[n][1] in _OPEN)
            if not depth:
                break
            n -= 1
        before = code[n - 1] if n > 0 else ("", "")
        if before[0] != "name" or before[1] in _KEYWORDS:
            return text
        start, last = n - 1, before[1] + code[n][1] + text
    chain = [last]
    while start >= 2 and code[start - 1][1] == "." and code[start - 2][0] == "name" \
            and code[start - 2][1] not in _KEYWORDS:
        chain.insert(0, code[start - 2][1])
        start -= 2
    return ".".join(chain)


def _arguments(code: list[tuple[str, str]], at: int) -> int | None:
    """How many arguments the call whose `(` is just before AT passes; None where it does not close on the line or
    passes `*` or `**` (any number). A lambda's parameters are no arguments of it."""
    depth, count, lambdas, items, star = 1, 0, 0, False, False
    for _kind, text in code[at:]:
        if depth == 1:
            if text in _CLOSE:
                return None if star else count + items
            if text == "," and not lambdas:
                count, items = count + items, False
                continue
            star = star or (text == "*" and not items)
            lambdas += (text == "lambda") - (text == ":" and lambdas > 0)
        depth += (text in _OPEN) - (text in _CLOSE)
        items = True
    return None


def decorated(code: list[tuple[str, str]]) -> tuple[str, int | None] | None:
    """The name a decorator line (CODE, its tokens) decorates with and how many arguments its own call passes
    (`@app.route('/x', methods=m)`: route, 2; `@retry`: retry, 0; None where it is left open or passes `*`/`**`);
    None for any other line. A union's decorator passing fewer is no form of a PR's (as agree counts a call's,
    h253's review: `@app.route('/x')` carried `@app.route('/x', methods=['POST'])`)."""
    if len(code) < 2 or code[0][1] != "@":
        return None
    end = 1
    while end < len(code) and (code[end][0] == "name" or code[end][1] == "."):
        end += 1
    if code[end - 1][0] != "name":
        return None
    return code[end - 1][1], (_arguments(code, end + 1) if end < len(code) and code[end][1] == "(" else 0)


def alias_of(code: list[tuple[str, str]]) -> tuple[str, Alias] | None:
    """The name CODE (one line's tokens) binds to a function or method named alone, and what calling it calls:
    `sr = send_report` (sr: send_report), `add = names.append` (add: append on names); None for any other line."""
    if len(code) < 3 or code[0][0] != "name" or code[0][1] in _KEYWORDS or code[1][1] != "=":
        return None
    rest = code[2:]
    names, dots = rest[::2], rest[1::2]
    if len(rest) % 2 == 0 or any(kind != "name" or text in _KEYWORDS for kind, text in names) or \
            any(text != "." for _kind, text in dots):
        return None
    return code[0][1], (names[-1][1], ".".join(text for _kind, text in names[:-1]))


def rebound(code: list[tuple[str, str]]) -> set[str]:
    """The names CODE (one line's tokens) names any way but to call them or as an attribute (`sr = make()`, `for
    sr in`, `x = sr`), and the name a `def`, `async def` or `class` line binds (`def sr(x):`, whose name a `(`
    follows): a name bound to a function above no longer calls it after such a line (callspan.bindings_before,
    lineroles.aliases_of; h253's review: `def sr(x, y):`, `sr = make()` in the union's hunk, or `sr = lambda *a:
    None` after `sr = send_report` left `sr(dd, 'weekly')` the PR's call, no warning)."""
    named = {text for i, (kind, text) in enumerate(code) if kind == "name" and not (i and code[i - 1][1] == ".")
             and not (i + 1 < len(code) and code[i + 1][1] == "(")}
    at = 2 if code and code[0][1] == "async" else 1
    if code and code[0][1] in ("def", "async", "class") and at < len(code) and code[at][0] == "name" and \
            (code[0][1] != "async" or code[1][1] == "def"):
        named.add(code[at][1])
    return named


def renamed(forms: frozenset[Form], aliases: dict[str, Alias]) -> frozenset[Form]:
    """FORMS with each call of a name alone that ALIASES binds (alias_of) as the call it makes: `sr(dd)` after
    `sr = reporting.send_report` is `reporting.send_report(dd)`."""
    return frozenset((*aliases[name], count) if not receiver and name in aliases else (name, receiver, count)
                     for name, receiver, count in forms)
