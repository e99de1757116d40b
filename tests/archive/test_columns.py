"""StreamVByte, run lengths and dense codes: round trips, canonical form, and refusal of bad columns."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssblab.archive import dense, svb
from ssblab.archive.errors import MalformedArchive


@given(st.lists(st.integers(0, 2**32 - 1), max_size=50))
def test_svb1234_round_trip(values: list[int]) -> None:
    codes, data = svb.encode(values, "1234")
    assert svb.decode(codes, data, "1234").tolist() == values


@given(st.lists(st.integers(0, 2**64 - 1), max_size=50))
def test_svb1248_round_trip(values: list[int]) -> None:
    codes, data = svb.encode(values, "1248")
    assert svb.decode(codes, data, "1248").tolist() == values


def test_svb_minimal_widths() -> None:
    assert svb.encode([1, 256, 65536, 2**24], "1234") == (
        bytes([0b11_10_01_00]),
        b"\x01\x00\x01\x00\x00\x01\x00\x00\x00\x01",
    )
    assert svb.encode([2**32], "1248") == (b"\x03", b"\x00\x00\x00\x00\x01\x00\x00\x00")


@pytest.mark.parametrize(
    ("codes", "values", "why"),
    [
        (b"\x01", b"\x05\x00", "not canonical"),  # 5 stored in two bytes
        (b"\x00", b"", "not canonical"),  # a code byte for no value
        (b"", b"\x05", "disagree"),  # a value without a code
        (b"\x03", b"\x01", "disagree"),  # a 4-byte code with one byte
    ],
)
def test_svb_refuses_bad_columns(codes: bytes, values: bytes, why: str) -> None:
    with pytest.raises(MalformedArchive):
        svb.decode(codes, values, "1234")


def test_zigzag_round_trip() -> None:
    deltas = np.array([0, -1, 1, -(2**40), 2**40, -(2**62)], dtype=np.int64)
    assert svb.unzigzag(svb.zigzag(deltas)).tolist() == deltas.tolist()


def test_runs_round_trip_and_refusals() -> None:
    values, lengths = svb.run_lengths([3, 3, 1, 1, 1, 3])
    assert values.tolist() == [3, 1, 3] and lengths.tolist() == [2, 3, 1]
    assert svb.expand_runs(values, lengths, 6, where="t").tolist() == [3, 3, 1, 1, 1, 3]
    with pytest.raises(MalformedArchive, match="add up"):
        svb.expand_runs(values, lengths, 7, where="t")
    with pytest.raises(MalformedArchive, match="share a value"):
        svb.expand_runs(np.array([1, 1], np.uint64), np.array([1, 1], np.uint64), 2, where="t")


@given(st.lists(st.integers(0, 300_000), max_size=200), st.integers(1, 255))
def test_dense_round_trip(ranks: list[int], s: int) -> None:
    arr = np.array(ranks, dtype=np.int64)
    if ranks and max(ranks) >= dense._bases(s)[-1]:
        with pytest.raises(ValueError):
            dense.encode(arr, s)
        return
    assert dense.decode(dense.encode(arr, s), s, "t").tolist() == ranks


def test_dense_best_s_prefers_fewest_bytes() -> None:
    ranks = np.array([0] * 100 + list(range(1, 400)), dtype=np.int64)
    s = dense.best_s(ranks, 400)
    size = len(dense.encode(ranks, s))
    assert all(
        len(dense.encode(ranks, other)) >= size for other in (64, 128, 200, 255) if dense._bases(other)[-1] >= 400
    )


@pytest.mark.parametrize("data", [b"\xff", b"\xf0\xf0\xf0\xf0\x01", b"\x01\xf0"])
def test_dense_refuses_bad_streams(data: bytes) -> None:
    with pytest.raises(MalformedArchive):
        dense.decode(data, 200, "t")
