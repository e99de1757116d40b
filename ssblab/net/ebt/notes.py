"""EBT v3 notes: the vector-clock values exchanged on an ``ebt.replicate`` stream, and how to tell them from messages.

Strategy (epidemic-broadcast-trees ``v3.js``; protocol guide "Epidemic Broadcast Tree (EBT) Replication"): a note
packs a sequence and a *receive* flag into one JSON integer, ``(sequence << 1) | (not receive)``, so an even value
asks the peer to send (eager), an odd one only says how far we are (lazy); ``-1`` means "I do not replicate this
feed".

Invariants:
- ``decode_note`` never raises: anything that is not an integer in ``[-1, 2**31)`` (floats with a fraction,
  booleans, strings, ``None``, other negatives, values past JS's 32-bit shifts) decodes as "do not replicate",
  as the JS reference's TODO asks for non-integer clock values;
- ``encode_note`` only accepts sequences the JS peer can decode (``-1`` or ``0 <= seq < 2**30``) and raises
  :class:`NoteRangeError` otherwise, since a wrapped shift would send a wrong clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ssblab.net.errors import LocalProtocolError

__all__ = [
    "DO_NOT_REPLICATE", "MAX_SEQUENCE", "Note", "NoteRangeError", "decode_note", "encode_note", "is_message_value",
    "notes_from_value",
]

#: The note value for "I do not replicate this feed".
DO_NOT_REPLICATE = -1
#: Largest sequence a note can carry: JS shifts are 32-bit signed, so ``seq << 1`` must stay below 2**31.
MAX_SEQUENCE = 2**30 - 1


class NoteRangeError(LocalProtocolError, ValueError):
    """We tried to encode a sequence that a JS peer would decode wrongly (32-bit shift overflow)."""


@dataclass(frozen=True)
class Note:
    """A decoded note; ``sequence`` is -1 and ``receive`` False when ``replicate`` is False."""

    sequence: int
    receive: bool
    replicate: bool


_NO_REPLICATE = Note(sequence=-1, receive=False, replicate=False)


def encode_note(seq: int, receive: bool) -> int:
    """The JSON integer for "I have ``seq``" (``receive``: please send me more); ``seq == -1`` gives -1.

    Raises:
        NoteRangeError: ``seq`` is below -1 or above :data:`MAX_SEQUENCE`.

    Examples:
        >>> encode_note(6, True), encode_note(1, False), encode_note(-1, True)
        (12, 3, -1)
    """
    if seq == DO_NOT_REPLICATE:
        return DO_NOT_REPLICATE
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SEQUENCE:
        raise NoteRangeError(f"ebt note: sequence {seq!r} is outside [-1, {MAX_SEQUENCE}] (JS 32-bit shifts)")
    return (seq << 1) | (0 if receive else 1)


def _as_int(value: object) -> int | None:
    """The integer a JS ``Number.isInteger`` accepts (integral floats included), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def decode_note(n: object) -> Note:
    """Decode one note value from the wire; invalid or out-of-range values mean "do not replicate".

    Examples:
        >>> decode_note(450)
        Note(sequence=225, receive=True, replicate=True)
        >>> decode_note(1)
        Note(sequence=0, receive=False, replicate=True)
        >>> decode_note(2.5) == decode_note(-1) == decode_note(2**31)
        True
    """
    value = _as_int(n)
    if value is None or not 0 <= value < 2 ** 31:
        return _NO_REPLICATE
    return Note(sequence=value >> 1, receive=not value & 1, replicate=True)


def is_message_value(value: object) -> bool:
    """True for a feed message on an EBT stream: integer ``sequence > 0``, string ``author``, truthy ``content``.

    Everything else that is a JSON object is a note (epidemic-broadcast-trees ``isMsg``).
    """
    if not isinstance(value, Mapping):
        return False
    seq = value.get("sequence")
    return (
        isinstance(seq, int) and not isinstance(seq, bool) and seq > 0
        and isinstance(value.get("author"), str) and bool(value.get("content"))
    )


def notes_from_value(value: object) -> dict[str, object] | None:
    """The clock inside a notes packet (plain, or wrapped as ``{"clock": {...}}``), or None if it is no object.

    Keys that are not strings are dropped; values stay raw so :func:`decode_note` decides on them.
    """
    if not isinstance(value, Mapping):
        return None
    inner = value.get("clock")
    clock = inner if isinstance(inner, Mapping) else value
    return {k: v for k, v in clock.items() if isinstance(k, str)}
