"""A line's calls read in its file (pipeline.callspan, h243): table tests."""
from __future__ import annotations

import pytest

from carrytool.pipeline.callspan import bindings_before, openers, whole_calls
from carrytool.pipeline.lineroles import calls_of, quotes_open


@pytest.mark.parametrize(("text", "forms"), [
    ("    send_report(\n        d,\n        'weekly',\n    )\n", {("send_report", "", 2)}),
    ("    send_report(d,  # a comment, with (a bracket\n        'weekly')\n", {("send_report", "", 2)}),
    ("    send_report(\n        'a, (b',\n        \"\"\"c,\n        d)\"\"\", e)\n", {("send_report", "", 3)}),
    ("    x = f(a,\n          g(b, c),\n          [d, e])\n", {("f", "", 3)}),        # g is the next line's
    ("    send_report(\n        *args,\n    )\n", {("send_report", "", None)}),         # a star: any number
    ("    send_report(**kw,\n    )\n", {("send_report", "", None)}),
    ("    self.reporter.send_report(\n        dd)\n", {("send_report", "self.reporter", 1)}),
    ("    send_report(d, 'weekly')\n", {("send_report", "", 2)}),                      # closed: as on its line
    ("    send_report(\n        d,\n", {("send_report", "", None)}),                   # never closes: unknown
    ("    @register(\n        a, b)\n", set()),                                         # a decorator's own call
], ids=["split", "a-comment", "strings", "a-call-inside", "a-star", "a-double-star", "a-receiver", "one-line",
        "open", "a-decorator"])
def test_a_call_spanning_lines_is_counted_on_its_whole_text(text: str, forms: set) -> None:
    lines = text.encode().split(b"\n")
    assert whole_calls(lines, 0) == forms
    assert {count for _n, _r, count in calls_of(lines[0])} <= {None, 2}         # alone: uncounted where open


def _bound(text: str) -> dict:
    """What TEXT binds above its line marked HERE (to its line marked END, when one is)."""
    source = text.encode()
    lines = source.split(b"\n")
    at = next(n for n, line in enumerate(lines, 1) if b"HERE" in line)
    end = next((n for n, line in enumerate(lines, 1) if b"END" in line), None)
    return bindings_before(lines, quotes_open(source), at, end)


@pytest.mark.parametrize(("text", "bound"), [
    ("def f():\n    sr = send_report\n    x = 1\n    sr(d)  # HERE\n", {"sr": ("send_report", "")}),
    ("def f():\n    sr = self.reporter.send_report\n    if x:\n        sr(d)  # HERE\n",
     {"sr": ("send_report", "self.reporter")}),
    ("def f():\n    if x:\n        sr = send_report\n    sr(d)  # HERE\n", {"sr": ("send_report", "")}),
    ("def f():\n    sr = send_report\n    sr = log\n    sr(d)  # HERE\n", {"sr": ("log", "")}),
    ("def f():\n    sr = send_report\n    for sr in x:\n        pass\n    sr(d)  # HERE\n", {}),
    ("def f():\n    sr = send_report\n    sr(a)\n    sr(d)  # HERE\n", {"sr": ("send_report", "")}),  # a call
    ("def f():\n    def g():\n        sr = send_report\n    sr(d)  # HERE\n", {}),
    ("def f():\n    @deco\n    def g():\n        sr = send_report\n    sr(d)  # HERE\n", {}),
    ("def f():\n    '''\n    sr = send_report\n    '''\n    sr(d)  # HERE\n", {}),
    ("sr = send_report\n\n\ndef f():\n    sr(d)  # HERE\n", {}),                        # another scope's
    ("sr = send_report\nsr(d)  # HERE\n", {"sr": ("send_report", "")}),                # module level (h259)
    ("sr(d)  # HERE\nsr = send_report\n", {}),                                          # bound after the call
    ("class C:\n    sr = send_report\n    x = sr(d)  # HERE\n", {}),
    ("def f():\n    sr = send_report\n\n\ndef g():\n    sr(d)  # HERE\n", {}),
    ("async def f():\n    sr = send_report\n    async with x:\n        sr(d)  # HERE\n", {"sr": ("send_report", "")}),
    ("def f(\n    a,\n):\n    sr = send_report\n    x = g(\n        1,\n    )\n    sr(d)  # HERE\n",
     {"sr": ("send_report", "")}),
    ("def f():\n    sr = send_report\n    x = g(\n  1)\n    sr(d)  # HERE\n", {"sr": ("send_report", "")}),
    ("def f():\n    sr = send_report\n    x = 1  # HERE\n\n\ndef g():\n    sr(d)  # END\n", {}),    # leaves f
    ("def f():\n    sr = send_report\n    x = 1  # HERE\n    sr(d)  # END\n", {"sr": ("send_report", "")}),
], ids=["above", "a-method-above-a-block", "in-a-branch", "rebound", "bound-otherwise", "called-between",
        "in-a-nested-def", "in-a-decorated-nested-def", "in-a-docstring", "in-another-def", "module-level",
        "module-level-bound-after", "class-level", "the-def-before", "async", "continued-lines", "continued-less-indented",
        "a-hunk-leaving-the-def", "a-hunk-in-the-def"])
def test_names_bound_above_in_the_def(text: str, bound: dict) -> None:
    assert _bound(text) == bound


# openers: each line's innermost bracket still open where it starts, by the line opening it (0-based), or None
OPENERS = {
    "a-call": ("def f(a):\n    x = send(\n        a,\n        1,\n    )\n    return x\n", 1,
               [None, 1, 1, 1, None, None]),
    "nested": ("def f(a):\n    x = send(\n        g(\n            a,\n        ),\n        1,\n    )\n", 1,
               [None, 1, 2, 2, 1, 1]),
    "brackets-in-strings": ("def f(a):\n    x = send(\n        ')(',\n        \"\"\"(\n        ]\"\"\",\n        1,\n"
                            "    )\n", 1, [None, 1, 1, 1, 1, 1]),
    "a-comment": ("def f(a):\n    x = send(  # a (comment\n        1,\n    )\n", 1, [None, 1, 1]),
    "a-def-above-stops": ("x = [\n    1,\ndef f(\n    a,\n):\n    b = 2\n", 5, [None]),     # left open above: no call
    "started-inside": ("def f(a):\n    x = send(\n        a,\n        1,\n    )\n", 3, [1, 1]),
}


@pytest.mark.parametrize("name", list(OPENERS))
def test_openers_name_the_line_opening_each_lines_innermost_bracket(name: str) -> None:
    text, start, expected = OPENERS[name]
    source = text.encode()
    assert openers(source.split(b"\n"), quotes_open(source), start, len(expected)) == expected
