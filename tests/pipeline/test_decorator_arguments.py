"""A union's decorator line carrying a PR's decorator (lineroles.line_carries): the decorator's own call was read
as a role alone, its arguments never counted, so a union writing `@app.route('/x')` for a PR's
`@app.route('/x', methods=['POST'])` carried it, while the same call as a statement dropping the keyword was warned
(h253's review: a false pass is a silent loss). Counted as a call's are: no fewer (h235)."""

from __future__ import annotations

import pytest

from carrytool.pipeline.hunks import Hunk
from carrytool.pipeline.lineroles import line_carries
from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases
from tests.pipeline.test_provided_rewrite import ONE, RW, F, _coverage


def _adds(*lines: bytes) -> Hunk:
    return Hunk("m.py", 3, 0, 4, len(lines), added=lines)


KEPT = _adds(b"    X = log(b)")
CASES = {
    "drops-a-keyword": (b"@app.route('/x', methods=['POST'])", b"@app.route('/x')", False),
    "drops-every-argument": (b"@retry(3)", b"@retry", False),
    "keeps-them-reworded": (b"@app.route('/x', methods=['POST'])", b"@app.route(path, methods=m)", True),
    "adds-one": (b"@retry(3)", b"@retry(3, delay=1)", True),
    "none-either-way": (b"@staticmethod", b"@staticmethod", True),
    "a-star": (b"@app.route('/x', methods=['POST'])", b"@app.route(*args)", True),
    "left-open-uncounted": (b"@app.route('/x', methods=['POST'])", b"@app.route(", True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_decorator_dropping_an_argument_does_not_carry_the_prs(name: str) -> None:
    pr, union, carried = CASES[name]
    assert line_carries(union, _adds(pr), [KEPT]) is carried



@pytest.mark.parametrize(("written", "carried"), [("    @app.route('/xx')\n", False),
                                                  ("    @app.route('/xx', methods=m)\n", True)],
                         ids=["methods-dropped", "methods-kept"])
def test_explain_and_sync_read_a_decorators_arguments(cli: Cli, small: Small, written: str, carried: bool) -> None:
    """In real repositories (h209's rewrite scenario, tests/pipeline/test_provided_rewrite.py): pr/2 adds a route to
    f's body, the union writes it on upstream's rewrite without `methods` (sync warns `provided-absent` of pr/2's
    line, explain says `absent`), or with it (`re-expressed`)."""
    two = F.replace("    d = 4\n", "    d = 4\n    @app.route('/x', methods=['POST'])\n")
    union = RW.replace("    bb = 2\n", "    bb = 2\n    X = log(bb)\n").replace("    dd = 4\n", "    dd = 4\n" + written)
    r = _on_bases(cli, small, ONE, two, union, base=F, base2=None, up=RW, command="explain")
    assert _lines(r) == ([] if carried else [("pr/2", [9, 9])]), r["warnings"]
    assert _coverage(r)[1][2] == ("re-expressed" if carried else "absent")
    r = _on_bases(cli, Small(small.root / "again"), ONE, two, union, base=F, base2=None, up=RW, command="sync")
    assert _lines(r) == ([] if carried else [("pr/2", [9, 9])]), r["warnings"]
