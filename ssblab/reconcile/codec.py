"""Bytes for the reconcile messages: a tag byte, then LEB128 varints, length-prefixed bytes, fixed hashes.

Decoding is strict (minimal varints, no trailing bytes, counts bounded by the bytes left) so that any input
either decodes to one message or raises ``ReconcileError(ENCODING)``, never crashes or allocates without
bound.
"""

from __future__ import annotations

from ssblab.core.varint import encode_uvarint
from ssblab.reconcile.aggregate import HASH_BYTES, Aggregate
from ssblab.reconcile.dag import Node
from ssblab.reconcile.errors import Check, ReconcileError
from ssblab.reconcile.messages import Bucket, Hello, Message, Step

__all__ = ["MAX_VARINT_BYTES", "TAG_HELLO", "TAG_STEP", "decode", "encode"]

TAG_HELLO = 1
TAG_STEP = 2
MAX_VARINT_BYTES = 9  # up to 2**63 - 1


def _varint(n: int) -> bytes:
    if not 0 <= n < 1 << (7 * MAX_VARINT_BYTES):
        raise ReconcileError(Check.ENCODING, f"{n} is not an unsigned 63-bit integer")
    return encode_uvarint(n)


def _blob(b: bytes) -> bytes:
    return _varint(len(b)) + b


def _aggregate(a: Aggregate) -> bytes:
    return _varint(a.count) + a.xor.to_bytes(HASH_BYTES, "big")


def _node(n: Node) -> bytes:
    return _blob(n.id) + _varint(len(n.parents)) + b"".join(_blob(p) for p in n.parents) + _blob(n.payload)


def encode(message: Message) -> bytes:
    """One message as bytes.

    Raises:
        ReconcileError: ``ENCODING`` for a negative or oversized integer (the wire carries no negative count).
    """
    if isinstance(message, Hello):
        return b"".join(
            (
                bytes([TAG_HELLO]),
                _varint(message.version),
                _blob(message.root),
                _blob(message.nonce),
                _varint(message.max_depth),
            )
        )
    parts = [bytes([TAG_STEP]), _varint(message.round)]
    parts.append(b"\x01" + _aggregate(message.total) if message.total is not None else b"\x00")
    parts.append(_varint(len(message.aggregates)) + b"".join(_aggregate(a) for a in message.aggregates))
    parts.append(_varint(len(message.buckets)))
    for bucket in message.buckets:
        parts.append(_varint(bucket.depth) + _varint(len(bucket.hashes)) + b"".join(bucket.hashes))
    parts.append(_varint(len(message.pushes)) + b"".join(_node(n) for n in message.pushes))
    return b"".join(parts)


class _Reader:
    """A cursor over one message's bytes; every read checks the bytes left."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def fail(self, what: str) -> ReconcileError:
        return ReconcileError(Check.ENCODING, f"{what} at byte {self.pos} of {len(self.data)}")

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise self.fail(f"{n} bytes past the end")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def varint(self) -> int:
        value = 0
        for i in range(MAX_VARINT_BYTES):
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                if byte == 0 and i > 0:
                    raise self.fail("non-minimal varint")
                return value
        raise self.fail("varint too long")

    def count(self, min_item_bytes: int) -> int:
        n = self.varint()
        if n * min_item_bytes > len(self.data) - self.pos:
            raise self.fail(f"{n} items cannot fit")
        return n

    def blob(self) -> bytes:
        return self.take(self.count(1))

    def aggregate(self) -> Aggregate:
        return Aggregate(self.varint(), int.from_bytes(self.take(HASH_BYTES), "big"))

    def node(self) -> Node:
        node_id = self.blob()
        parents = tuple(self.blob() for _ in range(self.count(1)))
        return Node(node_id, parents, self.blob())

    def bucket(self) -> Bucket:
        depth = self.varint()
        return Bucket(depth, tuple(self.take(HASH_BYTES) for _ in range(self.count(HASH_BYTES))))


def _step(r: _Reader) -> Step:
    round_ = r.varint()
    flag = r.take(1)[0]
    if flag > 1:
        raise r.fail("total flag is neither 0 nor 1")
    total = r.aggregate() if flag else None
    aggregates = tuple(r.aggregate() for _ in range(r.count(1 + HASH_BYTES)))
    buckets = tuple(r.bucket() for _ in range(r.count(2)))
    pushes = tuple(r.node() for _ in range(r.count(3)))
    return Step(round_, total, aggregates, buckets, pushes)


def decode(data: bytes) -> Message:
    """The message in ``data`` (exactly one, nothing after it).

    Raises:
        ReconcileError: ``ENCODING`` for an unknown tag, a truncated field, a bad varint or trailing bytes.
    """
    r = _Reader(bytes(data))
    tag = r.take(1)[0]
    message: Message
    if tag == TAG_HELLO:
        message = Hello(r.varint(), r.blob(), r.blob(), r.varint())
    elif tag == TAG_STEP:
        message = _step(r)
    else:
        raise r.fail(f"unknown tag {tag}")
    if r.pos != len(data):
        raise r.fail("trailing bytes")
    return message
