"""The report schema the tests validate against is the repository's own copy; it must not drift from the
shared contract's copy when that sits beside the clone."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.conftest import REPORT_SCHEMA, SHARED_REPORT_SCHEMA


def test_the_repository_copy_is_a_valid_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(json.loads(REPORT_SCHEMA.read_text()))


@pytest.mark.skipif(not SHARED_REPORT_SCHEMA.exists(), reason="no shared/ beside this clone: nothing to compare")
def test_the_repository_copy_equals_the_shared_contract() -> None:
    assert REPORT_SCHEMA.read_bytes() == SHARED_REPORT_SCHEMA.read_bytes(), \
        f"carrytool/schemas/report.schema.json drifted from {SHARED_REPORT_SCHEMA}: copy the contract's schema"
