"""`_Lines.find` (review.has_places) indexes a line the file holds once by its index alone and stops at such a
line of the block: checked against the implementation before it (a list per line, the block looked up from
its rarest line) on random files and blocks, those it lacks, repeats, edges and lines it holds once."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from carrytool.review.has_places import _Lines


def _old_find(lines: list[bytes], block: Sequence[bytes]) -> list[int]:
    at: dict[bytes, list[int]] = {}
    for i, line in enumerate(lines):
        at.setdefault(line, []).append(i)
    want, n = list(block), len(block)
    if not want:
        return []
    j = min(range(n), key=lambda k: len(at.get(want[k], ())))
    return [i - j for i in at.get(want[j], ()) if i >= j and lines[i - j:i - j + n] == want]


@pytest.mark.parametrize("seed", range(6))
def test_find_answers_as_before(seed: int) -> None:
    rng = random.Random(seed)
    vocab = [b"", b"", b"    )", b"x = 1", b"return x", b"pass"] + [f"line {k}".encode() for k in range(seed * 40)]
    lines = [rng.choice(vocab) for _ in range(rng.randrange(0, 600))]
    found = _Lines(lines)
    for _ in range(400):
        n = rng.randrange(0, 6)
        start = rng.randrange(-n, len(lines) + 1) if lines else 0
        if rng.random() < 0.6:
            block = lines[max(start, 0):max(start, 0) + n]
        else:
            block = [rng.choice(vocab + [b"absent", f"line {rng.randrange(1000)}".encode()]) for _ in range(n)]
        assert found.find(block) == _old_find(lines, block), block


def test_find_lines_held_once_and_at_the_edges() -> None:
    lines = [b"a", b"b", b"", b"a", b"c", b""]
    found = _Lines(lines)
    for block in ([b"b"], [b"a", b"b"], [b"c", b""], [b"", b"a"], [b"a"], [b""], [b"b", b"", b"a", b"c", b"", b"x"],
                  [b"x", b"b"], [b"", b"c"], lines, lines + [b""], [b"c"]):
        assert found.find(block) == _old_find(lines, block), block
    assert _Lines([]).find([b""]) == [] and _Lines([b""]).find([b""]) == [0]
