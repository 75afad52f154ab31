"""A union's decorator line carrying a PR's decorator (lineroles.line_carries): the decorator's own call was read
as a role alone, its arguments never counted, so a union writing `@app.route('/x')` for a PR's
`@app.route('/x', methods=['POST'])` carried it, while the same call as a statement dropping the keyword was warned
(h253's review: a false pass is a silent loss). Counted as a call's are: no fewer (h235)."""

from __future__ import annotations

import pytest

from carrytool.pipeline.hunks import Hunk
from carrytool.pipeline.lineroles import line_carries


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
