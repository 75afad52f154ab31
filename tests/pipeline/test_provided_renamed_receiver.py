"""A union adapting a PR's call to another PR's rename of its object (h240's review of h235's receiver rule).

pr/1 renames f's list `errors` to `failures`; pr/2 appends to it (`errors.append(d)`) right before the `return`
pr/1 rewrites. The union writes `failures.append(d)`: pr/2's call on pr/1's new name, the only correct union. h235's
rule (a call carries a PR's only on the same receiver) read it as another call, and pr/2's line as dropped."""
from __future__ import annotations

import pytest

from tests.conftest import Cli, Small
from tests.pipeline.test_provided_conflicting_place import _lines, _on_bases

F = "def check(items):\n    errors = []\n    for d in items:\n        validate(d)\n    return errors\n"
ONE = F.replace("errors", "failures")
TWO = F.replace("        validate(d)\n", "        validate(d)\n        errors.append(d)\n")


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_a_call_on_the_name_another_pr_renames_its_object_to_carries_it(cli: Cli, small: Small,
                                                                          command: str) -> None:
    union = TWO.replace("errors", "failures")
    r = _on_bases(cli, small, ONE, TWO, union, base=F, base2=None, up=F, command=command)
    assert _lines(r) == [], r["warnings"]


@pytest.mark.parametrize("command", ["sync", "explain"])
def test_a_call_on_another_object_there_is_still_no_form_of_it(cli: Cli, small: Small, command: str) -> None:
    # the union appends to a list of its own: pr/2's `errors.append(d)`, on pr/1's `failures`, is gone
    union = ONE.replace("        validate(d)\n", "        validate(d)\n        seen.append(d)\n")
    r = _on_bases(cli, small, ONE, TWO, union, base=F, base2=None, up=F, command=command)
    assert [entry for entry, _l in _lines(r)] == ["pr/2"], r["warnings"]
