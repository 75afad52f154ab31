"""Answers kept by key: what a batch asks git only for the keys not answered before."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def _answers(cache: dict, keys: Sequence, ask: Callable[[list], Sequence], *,
             full: Callable[[int], bool]) -> list:
    """The answer to each of KEYS: from CACHE, the others asked once each, in one call of ASK (in first-seen
    order) and then kept. A CACHE that FULL(how many are added) says is full is emptied first; this call's
    answers never come from it after that (a caller's earlier answer cannot go missing)."""
    found = {key: cache[key] for key in keys if key in cache}
    missing = list(dict.fromkeys(key for key in keys if key not in found))
    if missing:
        found.update(zip(missing, ask(missing)))
        if full(len(missing)):
            cache.clear()
        cache.update(found)
    return [found[key] for key in keys]
