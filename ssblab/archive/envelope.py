"""The envelope of a classic message: everything but ``content``, derived from the block and rebuilt exactly.

A classic message is ``JSON.stringify(value, null, 2)`` of seven keys. Given the feed's author, the previous
message's id, the sequence, the timestamp and the 64 signature bytes, every envelope line is known; only the key
order (one of the `OBJECT ORDERS` the block records as an object signature) and the content text remain. `split`
renders the envelope it expects around the content and keeps the message only when the rendering reproduces the
original encoding byte for byte, so `render` is exact by construction. Anything else (float or negative timestamps,
odd keys, a signature that is not canonical base64, the wrong author, sequence or previous) is "verbatim": the
whole encoding is stored as its content text instead (docs/archive-format.md §5).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import lru_cache

from ssblab.core.message import Message

KEYS = ("previous", "author", "sequence", "timestamp", "hash", "content", "signature")
MAX_TIMESTAMP = 2**53  # integers beyond this are not exact JavaScript numbers
SIG_SUFFIX = b".sig.ed25519"


@dataclass(frozen=True, slots=True)
class Envelope:
    """The fields of one message that the block stores in columns; ``signature`` is None for verbatim messages."""

    order: tuple[str, ...]
    timestamp: int
    signature: bytes | None
    content: bytes  # the content text as signed, or the whole encoding when verbatim


@lru_cache(maxsize=64)
def templates(order: tuple[str, ...]) -> tuple[bytes, bytes]:
    """``%b`` templates of the text before and after the content, for one key order."""
    at = order.index("content")
    lines = [b'  "' + k.encode() + b'": %b' for k in order]
    head = b"{\n" + b",\n".join([*lines[:at], b'  "content": '])
    tail = b"".join(b",\n" + line for line in lines[at + 1 :]) + b"\n}"
    return head, tail


def frame(order: tuple[str, ...], fields: dict[str, bytes]) -> tuple[bytes, bytes]:
    """(text before the content, text after it) of a message whose envelope values (JSON texts) are ``fields``."""
    head, tail = templates(order)
    at = order.index("content")
    return head % tuple(fields[k] for k in order[:at]), tail % tuple(fields[k] for k in order[at + 1 :])


def fields_of(author: str, previous: str | None, sequence: int, timestamp: int, signature: bytes) -> dict[str, bytes]:
    """The JSON text of each envelope value."""
    return {
        "previous": b"null" if previous is None else b'"' + previous.encode() + b'"',
        "author": b'"' + author.encode() + b'"',
        "sequence": str(sequence).encode(),
        "timestamp": str(timestamp).encode(),
        "hash": b'"sha256"',
        "signature": b'"' + base64.b64encode(signature) + SIG_SUFFIX + b'"',
    }


def _timestamp(value: object) -> int | None:
    """An integral timestamp that JavaScript prints as digits (``1000.0`` too); None for anything else."""
    if type(value) is float and value.is_integer():
        value = int(value)
    return value if type(value) is int and 0 <= value < MAX_TIMESTAMP else None


def _signature(value: object) -> bytes | None:
    if not isinstance(value, str) or not value.endswith(".sig.ed25519"):
        return None
    text = value[: -len(".sig.ed25519")].encode()
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    return raw if len(raw) == 64 and base64.b64encode(raw) == text else None


@lru_cache(maxsize=256)
def _is_envelope(order: tuple[str, ...]) -> bool:
    return sorted(order) == sorted(KEYS)


def split(msg: Message, author: str, previous: str | None, sequence: int) -> Envelope:
    """The envelope of ``msg`` as the next message after ``previous``; verbatim when it cannot be derived."""
    value = msg.value
    order = tuple(value)
    timestamp = _timestamp(value.get("timestamp"))
    signature = _signature(value.get("signature"))
    if _is_envelope(order) and timestamp is not None and signature is not None and value["hash"] == "sha256":
        head, tail = frame(order, fields_of(author, previous, sequence, timestamp, signature))
        enc = msg.encoded
        if len(enc) > len(head) + len(tail) and enc.startswith(head) and enc.endswith(tail):
            return Envelope(order, timestamp, signature, enc[len(head) : len(enc) - len(tail)])
    return Envelope((), timestamp or 0, None, msg.encoded)
