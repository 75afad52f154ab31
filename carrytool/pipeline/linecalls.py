"""The calls a line of Python makes, each with what it is reached through and how many arguments it passes: a
union's line carries a PR's call (pipeline.lineroles) only where it makes it on the same object with no fewer
arguments (h235: `names.append(dd)` carried `errors.append(d)`, and `send_report(dd)` `send_report(d, 'weekly')`,
for the name they call alone), and not keeping an argument as the PR's base had it where the PR changes it (h255:
`send(aa, 1)` for a PR's `send(a, 1)` made `send(a, 2)`: keeps_base; h259: nor `send(a, 3)`, unless upstream or another PR
changes that argument there too: passes_otherwise). Read from lineroles' tokens of one line: (kind,
text) pairs, comments left out."""

from __future__ import annotations

import ast
import functools
import keyword
import re
from collections.abc import Iterable, Iterator, Sequence

Form = tuple[str, str, "int | None"]      # a call: its name, what it is reached through (_receiver), its arguments
# a call with its arguments: its name, what it is reached through, each argument's key (its place, `0`, `1`, ...,
# or its keyword) and text without whitespace, in order; None where not known (a `*`/`**`, or it does not close)
Call = tuple[str, str, "tuple[tuple[str, str], ...] | None"]
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
def call_args(code: list[tuple[str, str]], skip: int = 0, stop: int | None = None) -> set[Call]:
    """Each call CODE makes past its first SKIP tokens, before token STOP (as call_forms finds them), with its
    arguments (Call): what a union's call keeps of a PR's where the PR changes its arguments (keeps_base)."""
    end = len(code) if stop is None else stop
    return {(text, _receiver(code, n), _argued(code, n + 2)) for n, (kind, text) in enumerate(code[:end])
            if n >= skip and kind == "name" and text not in _KEYWORDS and n + 1 < len(code) and code[n + 1][1] == "("
            and not (n and code[n - 1][1] in ("def", "class"))}


def parameters(code: list[tuple[str, str]]) -> Call | None:
    """A `def` (or `async def`) statement's parameters (CODE: its tokens, read whole) as a call's arguments, each
    keyed by its name (_parameters: `b=1` as b, `1`), named `def NAME` (no call of NAME matches it); None for any other code.
    h264's review: a PR making a default `b=2,` on a parameter's own line, a union keeping `b=1,` read as its line
    re-expressed (a default is no call: the def's line had no arguments to compare)."""
    start = 1 if code and code[0][1] == "async" else 0
    if len(code) < start + 3 or code[start][1] != "def" or code[start + 1][0] != "name" or code[start + 2][1] != "(":
        return None
    return f"def {code[start + 1][1]}", "", _parameters(code, start + 3)


def _parameters(code: list[tuple[str, str]], at: int) -> tuple[tuple[str, str], ...] | None:
    """The parameters of the def whose `(` is just before AT, each (its name, with `*`/`**`; its default's text, ""
    for none): an annotation is no part of it (a union writing `c: int | None = None` for a PR's `c=None`); None
    where they do not close."""
    depth, found, item, lambdas = 1, [], [], 0
    for _kind, text in code[at:]:
        if depth == 1:
            lambdas += (text == "lambda") - (text == ":" and lambdas > 0)
        if depth == 1 and (text == "," and not lambdas or text in _CLOSE):
            if item:
                texts = [t for _d, t in item]
                named = next((n for n, t in enumerate(texts) if t.strip("*")), len(texts) - 1)    # past `*`, `**`
                name = "".join(texts[:named + 1])
                default = next((n for n, (d, t) in enumerate(item) if d == 0 and t == "="), None)
                found.append((name, "" if default is None else "".join(texts[default + 1:])))
            if text in _CLOSE:
                return tuple(found)
            item = []
            continue
        depth += (text in _OPEN) - (text in _CLOSE)
        item.append((depth - 1, text))
    return None


def _argued(code: list[tuple[str, str]], at: int) -> tuple[tuple[str, str], ...] | None:
    """The arguments of the call whose `(` is just before AT, each (key, text: its tokens joined): a keyword's
    key is its name, a positional one's its place (`0`, `1`, ...); None where it does not close or passes `*` or
    `**` (any number). A lambda's parameters are no arguments of it."""
    depth, found, item, place, lambdas = 1, [], [], 0, 0
    for _kind, text in code[at:]:
        if depth == 1:
            lambdas += (text == "lambda") - (text == ":" and lambdas > 0)
        if depth == 1 and (text == "," and not lambdas or text in _CLOSE):
            if item and item[0] in ("*", "**"):
                return None
            if len(item) > 2 and _NAME.fullmatch(item[0]) and item[1] == "=":
                found.append((item[0], "".join(item[2:])))
            elif item:
                found.append((str(place), "".join(item)))
                place += 1
            if text in _CLOSE:
                return tuple(found)
            item = []
            continue
        depth += (text in _OPEN) - (text in _CLOSE)
        item.append(text)
    return None


def keeps_base(mine: Iterable[Call], before: Iterable[Call], after: Iterable[Call]) -> bool:
    """Whether a call of MINE (a union's line's) makes a call a PR's hunk changes the arguments of (one of BEFORE,
    its removed lines' calls, that AFTER, its added lines', make otherwise), on the same object, with an argument as
    BEFORE's where every such call of AFTER's changed it: the PR's call there, not its change (h255: `f(aa, 1)`
    for a PR's `f(a, 1)` -> `f(a, 2)`, or `a.b(d).c(y)` for its `a.b(e).c(y)`, read as its line, exit 0)."""
    for _name, _receiver, args, theirs, olds in _changed(mine, before, after):
        if all(any(_kept(args, b[2], a[2]) is not None for b in olds if _near(b[1], a[1]))   # type: ignore[arg-type]
               for a in theirs):
            return True
    return False


def _changed(mine: Iterable[Call], before: Iterable[Call], after: Iterable[Call]
             ) -> Iterator[tuple[str, str, tuple[tuple[str, str], ...], list[Call], list[Call]]]:
    """Each call of MINE, in MINE's order, that makes a call the PR's hunk changes the arguments of: (its name,
    receiver and arguments, the calls of AFTER it may be on the same object, the calls of BEFORE that AFTER does
    not make): what keeps_base and passes_otherwise compare."""
    before, after = frozenset(before), frozenset(after)
    for name, receiver, args in mine:
        theirs = [a for a in after if a[0] == name and a[2] is not None and _near(a[1], receiver)]
        olds = [b for b in before if b[0] == name and b[2] is not None and b not in after]
        if args is not None and theirs and olds:
            yield name, receiver, args, theirs, olds


def passes_otherwise(mine: Iterable[Call], before: Iterable[Call], after: Iterable[Call],
                     others: Iterable[Call] = ()) -> bool:
    """Whether a call of MINE (a union's line's) makes a call a PR's hunk changes the arguments of (as keeps_base),
    passing an argument the PR changes as neither BEFORE's nor AFTER's where every such call of AFTER's changed it,
    and no call of OTHERS (upstream's line the union's hunk replaces, the other folded PRs' lines meeting it) passes
    that argument otherwise than BEFORE does: a third form no change there asks for (h259: `send(a, 3)` for a PR's
    `send(a, 1)` -> `send(a, 2)`, upstream's line still `send(a, 1)`, read as the PR's line re-expressed)."""
    return _third(mine, before, after, others) is not None


def _third(mine: Iterable[Call], before: Iterable[Call], after: Iterable[Call], others: Iterable[Call]
           ) -> tuple[str, str, str | None, str, str] | None:
    """(name, key, the PR's base's text (None: not passed), its head's, the union's) of passes_otherwise's first such
    argument; None."""
    others = frozenset(others)
    for name, receiver, args, theirs, olds in _changed(sorted(mine, key=str), before, after):
        found = [_otherwise(args, b[2], a[2]) for a in sorted(theirs, key=str)         # type: ignore[arg-type]
                 for b in sorted(olds, key=str) if _near(b[1], a[1])]
        if not found or any(item is None for item in found):
            continue
        key, was, now, ours = found[0]      # type: ignore[misc]
        asked = {_value(dict(o[2]).get(key)) for o in others
                 if o[0] == name and o[2] is not None and _near(o[1], receiver)}
        if not asked - {_value(was)}:
            return name, key, was, now, ours
    return None


def _otherwise(mine: tuple[tuple[str, str], ...], old: tuple[tuple[str, str], ...], new: tuple[tuple[str, str], ...]
               ) -> tuple[str, str | None, str, str] | None:
    """The first argument NEW changes from OLD (or adds: h264's review, `audit(a, True)` for a PR's `audit(a)` made
    `audit(a, 1)` read as its line re-expressed) that MINE passes as neither: its key, OLD's text (None: not passed),
    NEW's and MINE's; None where there is none."""
    ours, was, now = dict(mine), dict(old), dict(new)
    return next(((key, was.get(key), now[key], ours[key]) for key in sorted({*now} & {*ours})
                 if _value(was.get(key)) != _value(now[key]) and _value(ours[key]) not in (_value(was.get(key)),
                                                                                           _value(now[key]))), None)


def _near(theirs: str, mine: str) -> bool:
    """Whether receivers THEIRS and MINE may name one object (agree's rule, renames aside)."""
    return not theirs or not mine or _last(theirs) == _last(mine) or _delegates(theirs, mine)


def _kept(mine: tuple[tuple[str, str], ...], old: tuple[tuple[str, str], ...], new: tuple[tuple[str, str], ...]
          ) -> tuple[str, str | None, str | None] | None:
    """The first argument MINE hold as OLD has it where NEW changed it (or lack, where NEW adds it as OLD did not):
    its key, OLD's text and NEW's (None: none); None where there is none."""
    ours, was, now = dict(mine), dict(old), dict(new)
    return next(((key, was.get(key), now.get(key)) for key in sorted({*was, *now})
                 if _value(was.get(key)) != _value(now.get(key)) and _value(ours.get(key)) == _value(was.get(key))),
                None)


_LITERALS = (str, bytes, int, float, complex, bool, type(None))


@functools.lru_cache(maxsize=4096)
def _value(text: str | None) -> object:
    """An argument's TEXT as compared: a plain literal's type and value (`'a'` and `"a"`, `(2)` and `2` alike;
    h263: a union's line black wrote in double quotes read as a third value, no form of the PR's `'a'`), else its
    text (None: no argument)."""
    if text is None:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text
    return (type(value).__name__, value) if isinstance(value, _LITERALS) else text


def differs(mine: Iterable[Form], args: Iterable[Call], theirs: Iterable[Form], before: Iterable[Call],
            after: Iterable[Call], others: Iterable[Call] = ()) -> str:
    """What keeps a union's line (its calls MINE, with their arguments ARGS) from making a call a PR's hunk makes
    (THEIRS; BEFORE and AFTER: its removed and added lines' calls with their arguments) where it calls that name, as
    a clause (`calls send_report on self, not on self.reporter`); "" where it calls none of those names, or makes
    one (h255: a union writing `self.send_report(dd)` for a PR's `self.reporter.send_report(d)` was said to write
    nothing for it)."""
    theirs, args = sorted(theirs, key=str), sorted(args, key=str)
    for name in sorted({a[0] for a in args if a[0].startswith("def ")}):      # a def's defaults (parameters)
        if keeps_base([a for a in args if a[0] == name], before, after):
            return _kept_said(name, [a for a in args if a[0] == name], before, after)
    for name, receiver, count in sorted(mine, key=str):
        wanted = [form for form in theirs if form[0] == name]
        if not wanted or agree(frozenset({(name, receiver, count)}), frozenset(wanted), name):
            if wanted and keeps_base([a for a in args if a[0] == name], before, after):
                return _kept_said(name, [a for a in args if a[0] == name], before, after)
            third = _third([a for a in args if a[0] == name], before, after, others) if wanted else None
            if third is not None:
                _n, key, was, now, ours = third
                return f"passes {name} {_argument(key)} as `{ours}`, " + \
                    (f"neither as it was (`{was}`) nor" if was is not None else "not") + f" as the PR makes it (`{now}`)"
            continue
        if not agree(frozenset({(name, receiver, None)}), frozenset(wanted), name):
            return f"calls {name} on {receiver or 'no object'}, not on {wanted[0][1]}"
        return f"passes {name} {count} argument" + ("s" if count != 1 else "") + \
            f", not {max(w[2] for w in wanted if w[2] is not None)}"
    return ""


def _kept_said(name: str, mine: list[Call], before: Iterable[Call], after: Iterable[Call]) -> str:
    """Which argument of a call of NAME in MINE keeps_base found kept as it was, as a clause."""
    after = sorted((a for a in after if a[0] == name), key=str)
    before = sorted((b for b in before if b[0] == name and b not in after), key=str)
    for _n, _r, args in mine:
        for _a, _b, new in after:
            for _c, _d, old in before:
                found = _kept(args, old, new) if args is not None and old is not None and new is not None else None
                if found is not None:
                    key, was, now = found
                    where = f"{name[4:]}'s parameter {_argument(key)}" if name.startswith("def ") else \
                        f"{name} {_argument(key)}"
                    return f"passes {where} as it was (`{was}`), not as the PR makes it (`{now}`)" \
                        if now is not None and was is not None else \
                        f"still passes {where} (`{was}`), which the PR removes" if was is not None else \
                        f"does not pass {where} (`{now}`), which the PR adds"
    return f"keeps {name}'s arguments as they were"


def _argument(key: str) -> str:
    """An argument's key in words: `argument 2` for the second by place, else its keyword."""
    return f"argument {int(key) + 1}" if key.isdigit() else key


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
def imported_as(code: list[tuple[str, str]]) -> list[tuple[str, Alias]]:
    """The names CODE (one line's tokens) imports a function under a name of its own, and what calling each calls:
    `from reporting import send_report as sr` (sr: send_report on reporting); none for any other line."""
    words = [text for _kind, text in code]
    if len(words) < 4 or words[0] != "from" or "import" not in words:
        return []
    at = words.index("import")
    module, names = "".join(words[1:at]), [w for w in words[at + 1:] if w not in ("(", ")")]
    return [(names[n + 2], (names[n], module)) for n in range(len(names) - 2)
            if names[n + 1] == "as" and (n == 0 or names[n - 1] == ",") and _NAME.fullmatch(names[n])
            and _NAME.fullmatch(names[n + 2])]


def renamed(forms: frozenset[Form], aliases: dict[str, Alias]) -> frozenset[Form]:
    """FORMS with each call of a name alone that ALIASES binds (alias_of) as the call it makes: `sr(dd)` after
    `sr = reporting.send_report` is `reporting.send_report(dd)`."""
    return frozenset((*aliases[name], count) if not receiver and name in aliases else (name, receiver, count)
                     for name, receiver, count in forms)
