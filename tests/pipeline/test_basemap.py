"""BaseMap looks a diff's hunks up by bisection; it must place every span as a walk of the whole diff does."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from carrytool.gitlayer.git import Git
from carrytool.pipeline.basemap import BaseMap, Span, meets, overlaps, span_of
from carrytool.pipeline.hunks import hunk_headers
from tests.gitrepo import init_repo

Headers = list[tuple[int, int, int, int]]


def _map(diff: Headers, span: Span) -> Span | None:
    """The walk BaseMap.map replaced: None where a hunk meets SPAN, else SPAN moved by the hunks before it."""
    shift = 0
    for old_start, old_count, new_start, new_count in diff:
        theirs = span_of(old_start, old_count)
        if meets(theirs, span):
            return None
        if theirs[1] < span[0]:
            shift += new_count - old_count
    return span[0] + 2 * shift, span[1] + 2 * shift


def _region(diff: Headers, span: Span) -> Span:
    found = [span_of(c, d) for a, b, c, d in diff if meets(span_of(a, b), span)]
    found += [at for point in span if (at := _map(diff, (point, point))) is not None]
    return min(one for one, _two in found), max(two for _one, two in found)


def _lines(diff: Headers, span: Span) -> Span:
    theirs = [(span_of(a, b), d - b, span_of(c, d)) for a, b, c, d in diff]
    inside = [(old, shift, new) for old, shift, new in theirs if overlaps(old, span)]
    before = sum(shift for old, shift, _new in theirs if not overlaps(old, span) and old[1] <= span[0])
    ends = (span[0] + 2 * before, span[1] + 2 * (before + sum(shift for _old, shift, _new in inside)))
    found = [new for _old, _shift, new in inside]
    found += [(at, at) for point, at in zip(span, ends) if not any(old[0] <= point <= old[1] for old, _s, _n in inside)]
    return min(one for one, _two in found), max(two for _one, two in found)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_bisection_places_every_span_as_a_walk_of_the_diff(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    repo = init_repo(tmp_path / "r", bare=True)
    vocab = ["a", "b", "", "x = 1", "return x", ")"]
    texts = ["\n".join(rng.choice(vocab) for _ in range(rng.randrange(0, 60))) + "\n" for _ in range(12)]
    blobs = [repo.git("hash-object", "-w", "--stdin", input=text.encode()).strip() for text in texts]
    pairs = [(a, b) for a in blobs[:6] for b in blobs[6:]]
    with Git(repo.path) as git:
        mapping = BaseMap(git, [*pairs, (blobs[0], blobs[0]), (None, blobs[1])])
        trees = [tuple(git.mktree([("100644", "blob", blob, b"f")]) for blob in pair) for pair in pairs]
        walked = {pair: hunk_headers(patch) for pair, patch in zip(pairs, git.diff_patches(trees))}
    assert sum(len(diff) for diff in walked.values()) > 300      # many hunks, many spans among them
    for (a, b), diff in walked.items():
        for _ in range(60):
            start = rng.randrange(1, 130)
            span = (start, start + rng.randrange(0, 8))
            assert mapping.map(a, b, span) == _map(diff, span), (a, b, span)
            assert mapping.region(a, b, span) == _region(diff, span), (a, b, span)
            assert mapping.lines(a, b, span) == _lines(diff, span), (a, b, span)
    for source, target in ((blobs[0], blobs[0]), (blobs[2], None)):    # one blob; a pair never read
        assert mapping.region(source, target, (3, 5)) == ((3, 5) if source == target else None)
