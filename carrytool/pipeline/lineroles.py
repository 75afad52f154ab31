"""What one line of Python does, read on its own: the roles a union's line must share with a PR's hunk to be that
hunk's change in another form (pipeline.regions, h225).

A union's line of its own is a PR's change in its words when it does what the PR's line does, whatever the
words: it calls the same name (`send_report(...)`, `reporting.send_report(...)`, `self.send_report(...)`) on the
same object with no fewer arguments (pipeline.linecalls: `names.append(dd)` is no form of `errors.append(d)`,
`send_report(dd)` none of `send_report(d, 'weekly')`, h235), assigns the same target or holds the dotted value
one assigns (`keep(10, self.state)` for `self.snap = self.state`), passes the same keyword, imports, defines or
decorates with the same name, or is the same kind of statement (`return`, `if`, `raise`, ...); a comment
re-expresses only a comment. Naming a thing is no role of it: `X = log(bb, send_report=False)` passes a keyword
and `send_report = None` binds a name, neither calls `send_report`, so neither is a form of `send_report(d,
'weekly')` (h225: both were read as one by likeness of text, `re-expressed`, exit 0), nor is `# send_report(d,
'weekly') later`.

Lines are read by a small scanner of their own (strings, comments, names, operators), not by `ast`: a hunk's line
is often a fragment of a statement (`timeout=3,`, `foo(a,`, `else:`). A line the scanner cannot read (a string
left open: a docstring's first line; a line inside a string its file opened above the hunk, quotes_open) or that
has no role (`aa + bb`, `'weekly',`), and every line of a file that is not Python, has no roles: the caller falls
back on likeness of text there (_kin).
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher

from carrytool.pipeline.hunks import Hunk, says_nothing
from carrytool.pipeline.linecalls import Alias, Form, Rename, agree, alias_of, call_forms, decorated, rebound, renamed
from carrytool.pipeline.pystrings import strings_exactly

Role = tuple[str, str]

# the roles that name what a line does (not only the kind of statement or a comment): one a union's line shares with
# one PR's hunk alone is that PR's change, whatever else the line holds
NAMED = frozenset({"call", "assign", "keyword", "import", "def", "decorator"})

_STATEMENTS = frozenset({"return", "raise", "assert", "del", "yield", "pass", "break", "continue", "global",
                         "nonlocal", "if", "elif", "else", "while", "for", "with", "try", "except", "finally"})
_KEYWORDS = frozenset(keyword.kwlist)
_TOKEN = re.compile(r"""(?P<string>(?:[rRbBuUfF]{1,2})?(?:'''|\"\"\"|'|"))
                      |(?P<comment>\#.*)
                      |(?P<name>[^\W\d]\w*)
                      |(?P<op>\*\*=|//=|>>=|<<=|->|:=|==|!=|<=|>=|[-+*/%&|^@]=|[()\[\]{}=.,:;@*])
                      |(?P<other>\S)""", re.VERBOSE)
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_AUGMENTED = frozenset({"+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "|=", "^=", "@="})


def _nothing_open(_hunk: Hunk) -> str:
    return ""


def line_carries(line: bytes, hunk: Hunk, rivals: Sequence[Hunk], opened: str = "",
                 starts: Callable[[Hunk], str] = _nothing_open, aliases: dict[str, Alias] | None = None,
                 renames: frozenset[Rename] = frozenset(), calls: frozenset[Form] | None = None,
                 forms_of: Callable[[Hunk, str], frozenset[Form]] | None = None,
                 bound: Callable[[Hunk], dict[str, Alias]] | None = None) -> bool:
    """Whether LINE, a union's own, may be HUNK's change in another form beside RIVALS (other PRs' hunks where it
    is): in Python, where both it and HUNK's lines have roles (roles_of), only if it shares one with them; then
    it is, where one it shares at its top and theirs (leading_roles) no rival's lines have (it does what HUNK does
    and no other does: a line merging two PRs' changes is each one's); else where it is no less akin to HUNK's
    lines (_kin) than to those of every rival that shares one of its roles or has none. Elsewhere (no roles, or
    not Python): by likeness alone. A call inside another's brackets alone credits no PR (`X = log(bb, str(bb))`
    is no form of pr/2's `send_report(d, str(d))` for its `str`). What HUNK's lines do is what they do at their top
    (_does): where that names something (a call, an assignment, ...), a line sharing only the rest with them (a
    statement's keyword, a keyword, a call inside brackets) or nothing it does (a string, a docstring's line) is no
    form of them (h232: `return None` for `return send_report(d, 'weekly')`, `label = str(dd)` for
    `send_report(d, str(d))`, `"send_report(dd, 'weekly')",`, all re-expressed, exit 0). A call it shares is
    HUNK's only where one of HUNK's calls of that name agrees with one of LINE's (linecalls.agree: on the same object,
    with no fewer arguments); else LINE makes another call (h235: `names.append(dd)` for `errors.append(d)`,
    `send_report(dd)` for `send_report(d, 'weekly')`, re-expressed). OPENED: the quote of a string LINE starts in
    (opened_at); STARTS: that of the string a hunk's first line starts in, in its file (_nothing_open: none).
    ALIASES: the names LINE's hunk binds to a function (aliases_of): a call of one alone is that function's.
    RENAMES: the names other hunks there rename (linecalls.renames_in): a call on the new name is one on the old.
    CALLS: the calls LINE makes as read in its file (pipeline.callspan: one spanning lines, counted whole; None:
    read on the line alone); FORMS_OF: those of a hunk's lines so read (None: each line alone, _forms), a call of a
    name BOUND (HUNK's names bound to a function where it is) as that function's."""
    calls = renamed(_read(line, opened)[3] if calls is None else calls, aliases or {})
    mine = roles_of(line, opened) | reads_of(line, opened) | {("call", form[0]) for form in calls} \
        if _is_python(hunk.path) else frozenset()
    start = starts(hunk)
    theirs = _roles(hunk, opened=start)
    does, named = _does(hunk, start)
    bound_there = bound(hunk) if bound is not None else {}
    does = _aliased(does, bound_there)
    if not theirs or (not mine and not named):
        return _kin(line, hunk) >= max(_kin(line, h) for h in rivals)
    shared = mine & does
    if not shared:
        return False
    forms = (forms_of or _forms)(hunk, start)
    if any(role[0] == "call" and not agree(calls, forms, role[1], renames) for role in shared):
        return False
    if any(role[0] == "decorator" and not _decorates_alike(line, opened, hunk, start, role[1]) for role in shared):
        return False
    others = [(h, _roles(h, opened=starts(h))) for h in rivals]
    if any(role[0] in NAMED and not any(role in roles for _h, roles in others)
           for role in shared & _aliased(leading_roles(line), aliases or {})
           & _aliased(_roles(hunk, top=True, opened=start), bound_there)):
        return True
    near = [h for h, roles in others if not roles or mine & roles]
    return not near or _kin(line, hunk) >= max(_kin(line, h) for h in near)


def _decorates_alike(line: bytes, opened: str, hunk: Hunk, start: str, name: str) -> bool:
    """Whether LINE decorates with NAME passing no fewer arguments than one of HUNK's lines does (linecalls.decorated;
    where both counts are known)."""
    mine = decorated(code_of(line, opened)[0])
    lines = said_lines(hunk)
    theirs = [found for line_, quote in zip(lines, opened_at(lines, start))
              if (found := decorated(code_of(line_, quote)[0])) is not None and found[0] == name]
    if mine is None or mine[0] != name or not theirs:
        return True
    return any(mine[1] is None or count is None or mine[1] >= count for _name, count in theirs)


def aliases_of(lines: Sequence[bytes], path: str, opened: str = "") -> dict[str, Alias]:
    """The names LINES (a union's hunk, of a Python file; the first in the string OPENED) bind to a function or a
    method named alone (linecalls.alias_of: `sr = send_report`), to what calling each calls (h235: `sr(dd,
    'weekly')` after it was no form of `send_report(d, 'weekly')`, warned dropped)."""
    found: dict[str, Alias] = {}
    for line, quote in zip(lines, opened_at(lines, opened)) if _is_python(path) else ():
        tokens = _tokens(line.decode("utf-8", "surrogateescape").strip(), quote)[0]
        code = [(kind, text) for kind, text in tokens if kind != "comment"]
        for name in rebound(code) & found.keys():   # bound again (`sr = make()`, `def sr(...)`): no alias
            del found[name]
        alias = alias_of(code)
        if alias is not None:
            found[alias[0]] = alias[1]
    return found


def rebound_in(lines: Sequence[bytes], path: str, opened: str = "") -> set[str]:
    """The names LINES (a union's hunk, as aliases_of reads it) bind or name any way but to call them
    (linecalls.rebound): a name bound to a function above the hunk is no alias there (carried._aliases)."""
    return set().union(*(rebound([(kind, text) for kind, text in _tokens(
        line.decode("utf-8", "surrogateescape").strip(), quote)[0] if kind != "comment"])
        for line, quote in zip(lines, opened_at(lines, opened)))) if _is_python(path) else set()


def _aliased(roles: frozenset[Role], aliases: dict[str, Alias]) -> frozenset[Role]:
    """ROLES with the call of each name ALIASES binds as a call of the function it names too."""
    return roles | {("call", aliases[name][0]) for kind, name in roles if kind == "call" and name in aliases}


def only_comments(lines: Sequence[bytes], path: str, opened: str = "") -> bool:
    """Whether LINES, of a Python file, are comments and strings alone (a docstring, a string standing as a
    statement): they do nothing, so they carry no PR's line but such lines, whether other PRs' hunks are beside
    them or not (h225's probe: a union's `# log later` where pr/1's `X = log()` met upstream's edit was that call
    "re-expressed"; h232's: so was a docstring of its own there). OPENED: the quote of the string the first of
    LINES starts in (opened_at)."""
    return bool(lines) and _is_python(path) and all(
        (tokens := _tokens(line.decode("utf-8", "surrogateescape").strip(), quote)[0])
        and all(kind in ("comment", "string") for kind, _text in tokens)
        for line, quote in zip(lines, opened_at(lines, opened)))


def does_something(hunk: Hunk, opened: str = "") -> bool:
    """Whether HUNK's lines, of Python, do something: have a role (roles_of) but a comment's. A docstring's line,
    read without the quote that opened it (OPENED: the one its first line starts in), may have none: a union's
    docstring may be its new form."""
    return bool(_roles(hunk, opened=opened) - {("comment", "")})


def opened_at(lines: Sequence[bytes], opened: str = "") -> list[str]:
    """The quote of the string each of LINES (consecutive lines of Python) starts in, left open by the lines before
    it (the first: OPENED, the string their file has open there; "": none): a docstring's lines are no code (h232:
    `send_report(dd, 'weekly') is the caller's.` in one read as that call; h235: so it was where the docstring
    opened above the hunk)."""
    found = []
    for line in lines:
        found.append(opened)
        opened = _read(line, opened)[2]
    return found


def quotes_open(source: bytes) -> dict[int, str]:
    """The quote of the triple-quoted string each line of SOURCE (a Python file) starts in, by its 1-based number,
    for the lines that start in one (pystrings.strings_exactly; none where that scan is unsure): the first line of a
    hunk inside a docstring opened above it is no code (h235: `send_report(dd, 'weekly') is the caller's.`, written
    into upstream's docstring, was read as that call)."""
    found: dict[int, str] = {}
    line, at = 1, 0
    for start, end, quote, _passed in strings_exactly(source, True) or ():
        line += source.count(b"\n", at, start)
        last = line + source.count(b"\n", start, end)
        found.update(dict.fromkeys(range(line + 1, last + 1), quote.decode()))
        line, at = last, end
    return found


def _is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def said_lines(hunk: Hunk) -> list[bytes]:
    """HUNK's added lines that say something (a pure deletion: its removed lines)."""
    return [line for line in (hunk.added or hunk.removed) if not says_nothing(line)]


def _roles(hunk: Hunk, *, top: bool = False, opened: str = "") -> frozenset[Role]:
    """The roles of HUNK's lines (said_lines; TOP: those at their top, leading_roles; OPENED: the quote of the
    string the first starts in); none outside Python."""
    if not _is_python(hunk.path):
        return frozenset()
    lines = said_lines(hunk)
    return frozenset().union(*(_read(line, quote)[1 if top else 0]
                               for line, quote in zip(lines, opened_at(lines, opened))))


def code_of(line: bytes, opened: str = "") -> tuple[list[tuple[str, str]], str]:
    """LINE's tokens (kind, text) but its comments, where it starts in a string of the quote OPENED, and the quote of
    a string it leaves open (as _read reads it; pipeline.callspan reads a call's lines so)."""
    tokens, left = _tokens(line.decode("utf-8", "surrogateescape").strip(), opened)
    return [(kind, text) for kind, text in tokens if kind != "comment"], left


def calls_of(line: bytes, opened: str = "") -> frozenset[Form]:
    """The calls LINE makes (linecalls.call_forms), read on the line alone: a call it leaves open, uncounted."""
    return _read(line, opened)[3]


def _forms(hunk: Hunk, opened: str) -> frozenset[Form]:
    """The calls HUNK's lines make (said_lines, the first in the string OPENED), as _read gives them."""
    lines = said_lines(hunk)
    return frozenset().union(*(_read(line, quote)[3] for line, quote in zip(lines, opened_at(lines, opened))))


def _does(hunk: Hunk, opened: str = "") -> tuple[frozenset[Role], bool]:
    """What HUNK's lines do, and whether that names something: the named roles at their top (NAMED) and the dotted
    values they assign; where they have none, all their roles (_roles: a statement's keyword, a keyword of a
    fragment of a call, ...). OPENED: the quote of the string the first starts in."""
    named = frozenset(role for role in _roles(hunk, top=True, opened=opened) if role[0] in NAMED)
    named |= {role for role in _roles(hunk, opened=opened) if role[0] == "value"}
    return (named, True) if named else (_roles(hunk, opened=opened), False)


def _kin(line: bytes, hunk: Hunk) -> float:
    """How akin LINE is to the closest of HUNK's lines (said_lines), without whitespace, as difflib's ratio."""
    return max((_ratio(_bare(line), _bare(other)) for other in said_lines(hunk)), default=0.0)


# how much of each end of a line likeness compares: difflib's ratio costs the product of the two lengths (h232: two
# 10,000-character lines, ~30 s a pair, one explain 140 s)
_ENDS = 200


@functools.lru_cache(maxsize=4096)
def _ratio(one: bytes, two: bytes) -> float:
    return SequenceMatcher(None, one, two, autojunk=False).ratio()


def _bare(line: bytes) -> bytes:
    """LINE without whitespace; of a long one, its ends only (_ENDS)."""
    bare = line.translate(None, b" \t\r")
    return bare if len(bare) <= 2 * _ENDS else bare[:_ENDS] + bare[-_ENDS:]


def roles_of(line: bytes, opened: str = "") -> frozenset[Role]:
    """What LINE (one line of Python) does: ("call", name) for each name it calls (a method by its own name),
    ("assign", target) for each target it assigns at its top, ("keyword", name) for each keyword it passes or
    parameter default it gives, ("import", name), ("def", name), ("decorator", name), ("statement", keyword) for a
    statement's keyword, ("comment", "") for a comment alone. Empty where it does nothing. OPENED: the quote of a
    string it starts in (opened_at); one it leaves open holds the rest of it."""
    return _read(line, opened)[0]


def leading_roles(line: bytes, opened: str = "") -> frozenset[Role]:
    """LINE's roles (roles_of) at its top: but the calls inside another's brackets and the keywords (`X = log(bb,
    str(bb))` calls `str` only for `log`'s sake)."""
    return _read(line, opened)[1]


@functools.lru_cache(maxsize=4096)
def _read(line: bytes, opened: str = "") -> tuple[frozenset[Role], frozenset[Role], str, frozenset[Form]]:
    """LINE's roles and those at its top (roles_of, leading_roles), the quote of a string it leaves open, and the
    calls it makes (linecalls.call_forms)."""
    tokens, left = _tokens(line.decode("utf-8", "surrogateescape").strip(), opened)
    code = [(kind, text) for kind, text in tokens if kind != "comment"]
    if not code:
        found = frozenset({("comment", "")}) if tokens else frozenset()
        return found, found, left, frozenset()
    first = code[0][1]
    if first in ("import", "from"):
        found = frozenset(_imports(code))
        return found, found, left, frozenset()
    top: set[Role] = set()
    if first in _STATEMENTS:
        top.add(("statement", first))
    skip = 0
    if first == "@":                    # the decorator's own call is its decorating, not a call of the line's
        skip = _dotted_end(code, 1)
        top.add(("decorator", code[skip - 1][1]))
    calls, inner = _calls(code, skip)
    bound = _bindings(code)
    top |= calls | {role for role in bound if role[0] != "keyword"}
    value = _value(code) if any(role[0] == "assign" for role in bound) else set()
    return frozenset(top | inner | bound | value), frozenset(top), left, frozenset(call_forms(code, skip))


def reads_of(line: bytes, opened: str = "") -> frozenset[Role]:
    """("value", name) for each dotted name of two parts or more LINE reads (not one it calls nor assigns): where
    a line assigning that value (roles_of) has gone, a line holding it may carry it in a new form (`self.v1 =
    keep(10, self.state)` for `self.snap = self.state`)."""
    tokens = _tokens(line.decode("utf-8", "surrogateescape").strip(), opened)[0]
    code = [(kind, text) for kind, text in tokens if kind != "comment"]
    found, n = set(), 0
    while n < len(code):
        end = _dotted_end(code, n) if code[n][0] == "name" and (not n or code[n - 1][1] != ".") else n + 1
        if end - n >= 3 and code[end - 1][0] == "name" and not (end < len(code) and code[end][1] in ("(", "=")):
            found.add(("value", "".join(text for _kind, text in code[n:end])))
        n = end
    return frozenset(found)


def _value(code: list[tuple[str, str]]) -> set[Role]:
    """("value", name) where CODE assigns a dotted name of two parts or more, alone (`self.snap = self.state`)."""
    at = max((n for n, (_kind, text) in enumerate(code) if text == "="), default=-1)
    rest = code[at + 1:]
    if at < 0 or len(rest) < 3 or _dotted_end(rest, 0) != len(rest) or rest[-1][0] != "name":
        return set()
    return {("value", "".join(text for _kind, text in rest))}


def _tokens(text: str, opened: str = "") -> tuple[list[tuple[str, str]], str]:
    """TEXT's tokens (kind, text), strings whole, where it starts in a string of the quote OPENED ("": none); and
    the quote of a string it leaves open (the rest of TEXT: a triple-quoted one, or one a backslash continues)."""
    found: list[tuple[str, str]] = []
    at = 0 if not opened else _string_end(text, 0, opened)
    if at is None:
        return [("string", text)], opened
    if opened:
        found.append(("string", text[:at]))
    while (match := _TOKEN.search(text, at)) is not None:
        kind, at = match.lastgroup or "other", match.end()
        if kind == "string":
            quote = match.group().lstrip("rRbBuUfF")
            end = _string_end(text, at, quote)
            if end is None:
                found.append(("string", text[match.start():]))
                return found, quote if len(quote) == 3 or text.endswith("\\") else ""
            found.append(("string", text[match.start():end]))
            at = end
        else:
            found.append((kind, match.group()))
    return found, ""


def _string_end(text: str, at: int, quote: str) -> int | None:
    """Where the string whose QUOTE ends at AT in TEXT ends (past its closing quote); None: not on this line."""
    while at < len(text):
        if text[at] == "\\":
            at += 2
        elif text.startswith(quote, at):
            return at + len(quote)
        else:
            at += 1
    return None


def _imports(code: list[tuple[str, str]]) -> set[Role]:
    """The names an import line imports (`import a.b as c`: `a.b`; `from m import x as y, z`: `x`, `z`)."""
    words = [text for _kind, text in code]
    rest = words[words.index("import") + 1:] if "import" in words else []
    names, current, aliased = [], "", False
    for word in [*rest, ","]:
        if word in (",", "(", ")"):
            if current and not aliased:
                names.append(current)
            current, aliased = "", False
        elif word == "as":
            names.append(current)
            current, aliased = "", True
        elif not aliased:
            current += word
    return {("import", name) for name in names if name}


def _calls(code: list[tuple[str, str]], skip: int) -> tuple[set[Role], set[Role]]:
    """The names CODE calls past its first SKIP tokens (a name before `(`, not a keyword), a def's or class's
    name as ("def", name), at its top; those it calls inside brackets."""
    top: set[Role] = set()
    inner: set[Role] = set()
    depth = 0
    for n in range(len(code)):
        kind, text = code[n]
        if n >= skip and kind == "name" and text not in _KEYWORDS:
            before = code[n - 1][1] if n else ""
            if before in ("def", "class"):
                top.add(("def", text))
            elif n + 1 < len(code) and code[n + 1][1] == "(":
                (top if depth <= 0 else inner).add(("call", text))
        depth += (text in _OPEN) - (text in _CLOSE)
    return top, inner


def _bindings(code: list[tuple[str, str]]) -> set[Role]:
    """The targets CODE assigns at its top (before a `=` or an augmented one, an annotation left out) and the
    keywords it passes: a `name=` inside brackets, or at the top of a fragment of a call (a line ending in `,`
    or closing more brackets than it opens: `timeout=3,`)."""
    depth, segment, found = 0, [], set()
    fragment = code[-1][1] == "," or _lowest(code) < 0
    for n, (kind, text) in enumerate(code):
        after = code[n + 1][1] if n + 1 < len(code) else ""
        if kind == "name" and after == "=" and (depth > 0 or fragment) and (n == 0 or code[n - 1][1] in ("(", ",")):
            found.add(("keyword", text))
        depth += (text in _OPEN) - (text in _CLOSE)
        if depth == 0 and not fragment and (text == "=" or text in _AUGMENTED):
            found |= {("assign", target) for target in _targets(segment)}
            segment = []
        else:
            segment.append((kind, text))
    return found


def _lowest(code: list[tuple[str, str]]) -> int:
    depth = lowest = 0
    for _kind, text in code:
        depth += (text in _OPEN) - (text in _CLOSE)
        lowest = min(lowest, depth)
    return lowest


def _targets(segment: list[tuple[str, str]]) -> list[str]:
    """The targets in SEGMENT (the tokens before one top-level `=`): split at top-level commas, each without its
    annotation (`x: int`) or a star; none where it holds a keyword (`lambda x`, `for x`)."""
    if any(kind == "name" and text in _KEYWORDS for kind, text in segment):
        return []
    parts, depth = [[]], 0
    for _kind, text in segment:
        depth += (text in _OPEN) - (text in _CLOSE)
        if depth == 0 and text == ",":
            parts.append([])
        else:
            parts[-1].append(text)
    targets = ["".join(part[:part.index(":")] if ":" in part else part).lstrip("*") for part in parts]
    return [target for target in targets if target]


def _dotted_end(code: list[tuple[str, str]], at: int) -> int:
    """Where the dotted name starting at token AT ends (`@pytest.mark.parametrize(...)`: at its `(`)."""
    while at < len(code) and (code[at][0] == "name" or code[at][1] == "."):
        at += 1
    return at
