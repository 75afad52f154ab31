"""A union moving a PR's call onto a delegate the PR's object holds (h243; the case of test_provided_rewrite).

Upstream rewrote f's whole body, pr/1 adds `X = log(b)`, pr/2 `self.send_report(d)`; the union, made on the rewrite,
keeps pr/1's line in a new form and writes `self.reporter.send_report(dd)`: the call moved onto the reporter self
holds. h235's same-object rule (the last name before the call's `.`) read `reporter` against `self`: warned dropped.
A call on an attribute of the PR's receiver, one name further, is its call (linecalls._delegates); one on another
object, further into the delegate's parts, or on a call's result is not."""
from __future__ import annotations

import pytest

from carrytool.pipeline.linecalls import agree
from tests.conftest import Cli, Small
from tests.pipeline.test_provided_call_context import _two, _union, _verdicts

SELF = _two("    self.send_report(d)\n")
DELEGATED = {
    "a-delegate-its-object-holds": ("    self.reporter.send_report(dd)\n", True),
    "an-attribute-of-the-same-object": ("    reporter.send_report(dd)\n", False),
    "another-object": ("    other.send_report(dd)\n", False),
    "a-longer-chain": ("    self.config.reporter.send_report(dd)\n", False),
    "a-delegate-dropping-the-argument": ("    self.reporter.send_report()\n", False),
    "a-delegates-result": ("    self.reporter().send_report(dd)\n", False),
}


@pytest.mark.parametrize("name", list(DELEGATED))
def test_a_call_moved_onto_a_delegate_of_the_prs_object_is_it(cli: Cli, small: Small, name: str) -> None:
    written, carried = DELEGATED[name]
    lines, r = _verdicts(cli, small, SELF, _union(written))
    assert lines == ([] if carried else [("pr/2", [9, 9])]), r["warnings"]


def test_a_delegate_of_a_receivers_attribute_is_it_too(cli: Cli, small: Small) -> None:
    lines, r = _verdicts(cli, small, _two("    self.errors.append(d)\n"), _union("    self.errors.log.append(dd)\n"))
    assert lines == [], r["warnings"]


@pytest.mark.parametrize(("mine", "theirs", "carries"), [
    ("self.reporter", "self", True),                # a delegate the PR's object holds
    ("self.errors.log", "errors", True),
    ("self.errors.log", "self.errors", True),
    ("reporter", "self", False),
    ("other", "self", False),                       # an unrelated object
    ("self.config.reporter", "self", False),        # into the parts of the delegate
    ("self.reporter()", "self", False),             # a call's result
    ("self.items[]", "self", False),                # an item
    ("self", "self.reporter", False),               # the other way round
    ("self.errors", "errors", True),                # the same last name (h235)
])
def test_a_call_on_a_delegate_of_the_prs_object_is_its_call(mine: str, theirs: str, carries: bool) -> None:
    assert agree(frozenset({("send_report", mine, 1)}), frozenset({("send_report", theirs, 1)}), "send_report") \
        is carries
