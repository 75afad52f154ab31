"""Where a Python file's triple-quoted strings are, without parsing it: a fast scan of the quotes
(`triple_quoted`, for pipeline.pyparts' cuts and the scope finder's guard) and one that reads strings and
comments as Python's tokenizer does, formatted strings' fields included (`strings_exactly`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

Quoted = list[tuple[int, int, bytes, bool]]   # triple_quoted's answer, as a list


def triple_quoted(text: bytes) -> Iterator[tuple[int, int, bytes, bool]]:
    """Each triple-quoted string as the scan of the quotes pairs them, in order: (offset of its opening
    quotes, offset of its closing ones or -1 when none follow, the quotes, whether it passed over same
    quotes after a backslash to find the closing ones). One opens at the next triple quote, and closes at
    the next of the same kind that no backslash precedes (`bytes.find`, not a regex: ~5x faster)."""
    pos = 0
    following = {b'"""': text.find(b'"""'), b"'''": text.find(b"'''")}     # the next of each kind
    while True:
        for quote, at in following.items():
            if 0 <= at < pos:
                following[quote] = text.find(quote, pos)
        double, single = following[b'"""'], following[b"'''"]
        if double < 0 and single < 0:
            return
        start, quote = (double, b'"""') if single < 0 or 0 <= double < single else (single, b"'''")
        end, passed = text.find(quote, start + 3), False
        while end > 0 and text[end - 1] == ord("\\"):
            end, passed = text.find(quote, end + 3), True
        yield start, end, quote, passed
        if end < 0:
            return
        pos = end + 3


# Python's string and comment tokens, for `strings_exactly` (and scopes' `_in_code`): a comment; a triple-quoted string (its text:
# anything but its quote or a backslash, a backslash and the byte after it, or one or two of its quotes not
# followed by a third); a one-line string (a backslash and a line end, "\r\n" too, continue it); an opening
# quote none of those close (the file does not tokenize: unsure).
TOKENS = re.compile(rb"""
    \#[^\r\n]*
  | \"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*\"\"\"
  | '''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''
  | "[^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*"
  | '[^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*'
  | ["']
""", re.VERBOSE | re.DOTALL)


def strings_exactly(text: bytes, nested: bool) -> Quoted | None:
    """TEXT's triple-quoted strings as Python's tokenizer finds them (triple_quoted's shape; none passed a
    backslash): the quotes inside comments and one-line strings, which `triple_quoted` may pair, are
    skipped with them. When NESTED (Python 3.12 and later, PEP 701: a formatted string's replacement fields
    may hold its own quotes, comments and line ends), a formatted string is followed field by field
    (`_formatted_end`), and one that spans lines counts as well. None when unsure: a quote that opens a
    string nothing closes, a formatted string this scan does not follow. Slower than triple_quoted (one step
    per string and comment, though mostly in the regex engine): for files whose quotes that scan may pair
    wrongly."""
    out: Quoted = []
    pos = 0
    while True:
        found = TOKENS.search(text, pos)
        if found is None:
            return out
        start, pos = found.span()
        if text[start] == 35:                              # "#": a comment
            continue
        three = opens_three(text, start)
        triple = three and pos - start >= 6
        if nested and formatted_at(text, start):       # (its fields may hold what ends the token found)
            quote = text[start:start + 3 if three else start + 1]
            closing = _formatted_end(text, start + len(quote), quote)
            if closing is None:
                return None
            pos = closing + len(quote)
            if triple or b"\n" in text[start:closing]:
                out.append((start, closing, quote, False))
        elif pos - start == 1 or (three and pos - start < 6):
            return None             # a quote, or three, that nothing closes (and no search again to the end)
        elif triple:
            out.append((start, pos - 3, text[start:start + 3], False))


def opens_three(text: bytes, quote: int) -> bool:
    """Whether the quote at QUOTE is the first of three of its kind."""
    return text[quote + 1:quote + 3] == text[quote:quote + 1] * 2


def any_formatted(text: bytes) -> bool:
    """Whether TEXT has a formatted (or template) string's opening quote: one of formatted_at's prefixes,
    not the tail of a longer name, right before a quote (in a comment or a string too: a guess on the
    safe side)."""
    return _FORMATTED_OPENING.search(text) is not None


def formatted_at(text: bytes, quote: int) -> bool:
    """Whether the string whose quotes open at QUOTE has an f or t prefix (formatted, template): the name
    right before the quotes is one of those prefixes (`elif"{x}"` is a keyword and a plain string)."""
    letters = _NAME_TAIL.search(text, max(0, quote - 3), quote)
    return letters is not None and letters.group().lower() in _FORMATTED


_NAME_TAIL = re.compile(rb"[A-Za-z0-9_\x80-\xff]+\Z")
_FORMATTED = {b"f", b"fr", b"rf", b"t", b"tr", b"rt"}          # the prefixes, lowered
_FORMATTED_OPENING = re.compile(rb"(?<![A-Za-z0-9_\x80-\xff])(?:[fFtT][rR]?|[rR][fFtT])[\"']")
_FIELD_STOP = re.compile(rb"[\\{}\n]|\"|'")
_EXPRESSION_STOP = re.compile(rb"[][(){}\"'#:!\\]")


def _formatted_end(text: bytes, at: int, quote: bytes) -> int | None:
    """The offset of the quotes that close the formatted string whose text starts at AT (Python 3.12): its
    text up to them, with `{{` and `}}` as text and each replacement field followed to its end; None when
    unsure (a line end in a one-line string, a quote in a format spec)."""
    while True:
        found = _FIELD_STOP.search(text, at)
        if found is None:
            return None
        at = found.start()
        mark = text[at]
        if mark == 92:          # a backslash: the byte after it is text, but for a brace (3.12's tokenizer)
            at += 1 if text[at + 1:at + 2] in (b"{", b"}") else 2
        elif text.startswith(quote, at):
            return at
        elif mark in (34, 39):                            # the other quote: text
            at += 1
        elif mark == 10:
            if len(quote) == 1:
                return None
            at += 1
        elif text[at + 1:at + 2] == bytes((mark,)):       # {{ or }}
            at += 2
        elif mark == 123:
            end = _field_end(text, at + 1, quote)
            if end is None:
                return None
            at = end
        else:                                             # a lone "}"
            return None


def _field_end(text: bytes, at: int, quote: bytes) -> int | None:
    """Where the replacement field whose expression starts at AT ends (after its `}`): brackets, strings
    (formatted ones followed again), comments to the line end, a conversion and a format spec (text with
    fields of its own) skipped."""
    depth = 0
    while True:
        found = _EXPRESSION_STOP.search(text, at)
        if found is None:
            return None
        at = found.start()
        mark = text[at]
        if mark in (40, 91, 123):                         # ( [ {
            depth += 1
            at += 1
        elif mark in (41, 93):                            # ) ]
            depth -= 1
            at += 1
        elif mark == 125:                                 # }
            if depth == 0:
                return at + 1
            depth -= 1
            at += 1
        elif mark == 35:                                  # a comment, to the line end
            line_end = text.find(b"\n", at)
            if line_end < 0:
                return None
            at = line_end
        elif mark == 92:                                  # a backslash: what follows is not a mark
            at += 2
        elif mark in (34, 39):
            found_string = _string_end(text, at)
            if found_string is None:
                return None
            at = found_string
        elif depth == 0 and (mark == 58 or (mark == 33 and text[at + 1:at + 2] != b"=")):   # : or !r
            return _spec_end(text, at + 1, quote)
        else:
            at += 1


def _spec_end(text: bytes, at: int, quote: bytes) -> int | None:
    """Where a field ends (after its `}`) from its conversion or format spec at AT: text, and fields of its
    own; a quote there is not followed (unsure)."""
    while True:
        found = _FIELD_STOP.search(text, at)
        if found is None:
            return None
        at = found.start()
        mark = text[at]
        if mark == 125:
            return at + 1
        if mark == 123:
            end = _field_end(text, at + 1, quote)
            if end is None:
                return None
            at = end
        elif mark == 92:
            at += 1 if text[at + 1:at + 2] in (b"{", b"}") else 2
        else:                                             # a quote or a line end
            return None


def _string_end(text: bytes, at: int) -> int | None:
    """Where the string (of any prefix) whose quotes open at AT ends, after its closing quotes, inside a
    replacement field; None when unsure."""
    quote = text[at:at + 3 if opens_three(text, at) else at + 1]
    if formatted_at(text, at):
        closing = _formatted_end(text, at + len(quote), quote)
        return None if closing is None else closing + len(quote)
    found = TOKENS.match(text, at)
    if found is None or found.end() - at == 1:
        return None
    return found.end()
