"""`stored_zlib`: the stored zlib stream a quarantine's loose objects are written as, without zlib's set-up."""

from __future__ import annotations

import zlib

import pytest

from carrytool.gitlayer.objects import stored_zlib


@pytest.mark.parametrize("size", [0, 1, 700, 0xFFFE, 0xFFFF, 0x10000, 3 * 0xFFFF + 5])
def test_it_is_a_valid_stream_of_the_data_and_what_zlib_writes_at_level_0(size: int) -> None:
    data = bytes((i * 7 + i // 251) % 256 for i in range(size))
    stream = stored_zlib(data)
    assert zlib.decompress(stream) == data
    assert len(stream) == 2 + 5 * max(1, -(-size // 0xFFFF)) + size + 4     # stored: no compression
    if size <= 700:
        assert stream == zlib.compress(data, 0)
