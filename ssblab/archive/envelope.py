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

import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter

import numpy as np
import numpy.typing as npt

from ssblab.archive.errors import NotArchivable
from ssblab.core.message import Message

__all__ = [
    "KEYS", "MAX_TIMESTAMP", "SIG_SUFFIX", "Envelope", "Envelopes", "Picker", "content_type", "split",
    "split_block", "templates",
]

KEYS = ("previous", "author", "sequence", "timestamp", "hash", "content", "signature")
MAX_TIMESTAMP = 2**53  # integers beyond this are not exact JavaScript numbers
SIG_SUFFIX = b".sig.ed25519"
Picker = Callable[[tuple[bytes, ...]], tuple[bytes, ...]]


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


def _timestamp(value: object) -> int | None:
    """An integral timestamp that JavaScript prints as digits (``1000.0`` too); None for anything else."""
    if type(value) is float and value.is_integer():
        value = int(value)
    return value if type(value) is int and 0 <= value < MAX_TIMESTAMP else None


def _signature(value: object) -> bytes | None:
    """The 64 bytes of a ``<canonical base64>.sig.ed25519`` signature (the base64 must re-encode to itself)."""
    if not isinstance(value, str) or not value.endswith(".sig.ed25519") or not value.isascii():
        return None
    text = value[: -len(".sig.ed25519")].encode()
    try:
        raw = binascii.a2b_base64(text, strict_mode=True)
    except binascii.Error:
        return None
    return raw if len(raw) == 64 and binascii.b2a_base64(raw, newline=False) == text else None


@lru_cache(maxsize=256)
def _is_envelope(order: tuple[str, ...]) -> bool:
    return sorted(order) == sorted(KEYS)


@lru_cache(maxsize=16)
def _quoted(ref: str) -> bytes:
    return b'"' + ref.encode() + b'"'


def _picker(indexes: list[int]) -> Callable[[tuple[bytes, ...]], tuple[bytes, ...]]:
    if len(indexes) > 1:
        return itemgetter(*indexes)
    return (lambda texts: (texts[indexes[0]],)) if indexes else (lambda texts: ())


@lru_cache(maxsize=64)
def _formats(order: tuple[str, ...]) -> tuple[bytes, Picker, bytes, Picker]:
    """`templates` of ``order`` and pickers of the values before and after the content from a `KEYS` tuple."""
    at = order.index("content")
    head, tail = templates(order)
    return head, _picker([KEYS.index(k) for k in order[:at]]), tail, _picker([KEYS.index(k) for k in order[at + 1 :]])


def split(msg: Message, author: str, previous: str | None, sequence: int) -> Envelope:
    """The envelope of ``msg`` as the next message after ``previous``; verbatim when it cannot be derived."""
    value = msg.value
    order = tuple(value)
    timestamp = _timestamp(value.get("timestamp"))
    signature = _signature(value.get("signature"))
    if _is_envelope(order) and timestamp is not None and signature is not None and value["hash"] == "sha256":
        head_format, pick_head, tail_format, pick_tail = _formats(order)
        texts = (
            b"null" if previous is None else b'"' + previous.encode() + b'"',
            _quoted(author),
            b"%d" % sequence,
            b"%d" % timestamp,
            b'"sha256"',
            b"",
            b'"' + value["signature"].encode() + b'"',
        )
        head, tail = head_format % pick_head(texts), tail_format % pick_tail(texts)
        enc = msg.encoded
        if len(enc) > len(head) + len(tail) and enc.startswith(head) and enc.endswith(tail):
            return Envelope(order, timestamp, signature, enc[len(head) : len(enc) - len(tail)])
    return Envelope((), timestamp or 0, None, msg.encoded)


@dataclass(frozen=True, slots=True)
class Envelopes:
    """A block's messages split into columns: what `split` gives for each, and each content's type."""

    orders: list[tuple[str, ...] | None]  # None: stored verbatim
    timestamps: npt.NDArray[np.int64]  # the timestamp column: a verbatim row repeats the row before (0 first)
    signatures: bytes  # 64 bytes a message, zeros when verbatim
    contents: list[bytes]  # the content text as signed, or the whole encoding when verbatim
    types: list[bytes | None]  # content.type as UTF-8 (lone surrogates kept), None when there is none


def content_type(msg: Message) -> bytes | None:
    content = msg.value.get("content")
    kind = content.get("type") if isinstance(content, dict) else None
    return kind.encode("utf-8", "surrogatepass") if isinstance(kind, str) else None


def split_block(messages: Sequence[Message], author: str, previous: str | None, first: int) -> Envelopes:
    """`split` each message as the author's next one after ``previous``, from sequence ``first`` on.

    Raises:
        NotArchivable: a message of another author or sequence (a block is one feed, in order).
    """
    envelopes = []
    for i, msg in enumerate(messages):
        if msg.author != author or msg.sequence != first + i:
            raise NotArchivable(f"message {i} is not {author} sequence {first + i}: a block is one feed, in order")
        envelopes.append(split(msg, author, previous, first + i))
        previous = msg.id
    stamps, last = [], 0
    for env in envelopes:
        last = env.timestamp if env.signature is not None else last
        stamps.append(last)
    return Envelopes(
        [env.order if env.signature is not None else None for env in envelopes],
        np.array(stamps, dtype=np.int64),
        b"".join(env.signature or bytes(64) for env in envelopes),
        [env.content for env in envelopes],
        [content_type(m) for m in messages],
    )
