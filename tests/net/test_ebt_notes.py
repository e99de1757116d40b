"""EBT v3 note codec: the protocol guide's table, JS 32-bit limits, invalid values, message/notes detection."""

from __future__ import annotations

import doctest
from types import ModuleType
from typing import Any

import pytest

import ssblab.net.ebt as ebt
from ssblab.net.ebt import (
    MAX_SEQUENCE,
    Note,
    NoteRangeError,
    decode_note,
    encode_note,
    is_message_value,
    notes_from_value,
)
from ssblab.net.ebt import notes as notes_module
from ssblab.net.ebt import state as state_module
from tests.vectors import optional_json

_EXAMPLES = optional_json(None, "scuttlebutt-protocol-guide/examples.json")
_TABLE: list[dict[str, Any]] = (_EXAMPLES or {}).get("ebt_note_encoding_table", [])


@pytest.mark.skipif(not _TABLE, reason="../shared/vectors/scuttlebutt-protocol-guide/examples.json not present")
@pytest.mark.parametrize("row", _TABLE, ids=lambda row: str(row["encoded"]))
def test_guide_note_table(row: dict[str, Any]) -> None:
    note = decode_note(row["encoded"])
    assert note.replicate is row["replicate"]
    if row["replicate"]:
        assert (note.sequence, note.receive) == (row["sequence"], row["receive"])
        assert encode_note(row["sequence"], row["receive"]) == row["encoded"]
    else:
        assert note == Note(-1, False, False)
        assert encode_note(-1, True) == encode_note(-1, False) == row["encoded"]


# The same table, written out, so a checkout without ../shared still tests it.
@pytest.mark.parametrize(
    ("encoded", "sequence", "receive"),
    [(0, 0, True), (1, 0, False), (2, 1, True), (3, 1, False), (12, 6, True), (450, 225, True)],
)
def test_note_table_inline(encoded: int, sequence: int, receive: bool) -> None:
    assert decode_note(encoded) == Note(sequence, receive, True)
    assert encode_note(sequence, receive) == encoded


@pytest.mark.parametrize("seq", [0, 1, 2, 1000, MAX_SEQUENCE])
@pytest.mark.parametrize("receive", [True, False])
def test_round_trip(seq: int, receive: bool) -> None:
    assert decode_note(encode_note(seq, receive)) == Note(seq, receive, True)


def test_largest_note_fits_a_signed_32_bit_int() -> None:
    assert encode_note(MAX_SEQUENCE, False) == 2**31 - 1


@pytest.mark.parametrize("seq", [-2, MAX_SEQUENCE + 1, 2**40, True, 1.0, "3"])
def test_encode_rejects_sequences_js_cannot_carry(seq: Any) -> None:
    with pytest.raises(NoteRangeError, match="ebt note"):
        encode_note(seq, True)


@pytest.mark.parametrize(
    "value",
    [-1, -2, -3, 2**31, 2**31 + 2, 2**53, 1.5, float("nan"), float("inf"), True, False, None, "4", [4], {"a": 1}],
)
def test_invalid_values_mean_do_not_replicate(value: object) -> None:
    assert decode_note(value) == Note(-1, False, False)


def test_integral_float_decodes_like_js() -> None:
    assert decode_note(12.0) == Note(6, True, True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"author": "@a", "sequence": 1, "content": {"type": "post"}}, True),
        ({"author": "@a", "sequence": 1, "content": "boxed=.box"}, True),
        ({"author": "@a", "sequence": 0, "content": {}}, False),
        ({"author": "@a", "sequence": 2, "content": {}}, False),
        ({"author": "@a", "sequence": True, "content": {"x": 1}}, False),
        ({"author": 5, "sequence": 2, "content": {"x": 1}}, False),
        ({"@a": 4, "@b": -1}, False),
        ([1, 2], False),
    ],
)
def test_is_message_value(value: object, expected: bool) -> None:
    assert is_message_value(value) is expected


def test_notes_from_value_unwraps_clock_and_drops_odd_keys() -> None:
    assert notes_from_value({"@a": 4}) == {"@a": 4}
    assert notes_from_value({"clock": {"@b": 8}, "other": 1}) == {"@b": 8}
    assert notes_from_value({1: 2, "@c": "x"}) == {"@c": "x"}
    assert notes_from_value([["@a", 4]]) is None


@pytest.mark.parametrize("module", [ebt, notes_module, state_module], ids=lambda m: m.__name__)
def test_doctests(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_package_reexports_every_public_name() -> None:
    from ssblab.net.ebt import events, reducer

    exported = set(ebt.__all__)
    for module in (events, notes_module, reducer, state_module):
        assert set(module.__all__) <= exported, module.__name__
    assert all(hasattr(ebt, name) for name in ebt.__all__)
