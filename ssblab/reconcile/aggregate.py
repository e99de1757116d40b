"""Aggregates ``(count, XOR)`` of per-session keyed hashes, and why they are safe (seed 001, "Security").

Strategy. An aggregate summarises a set of message ids as ``(|S|, h(s_1) xor ... xor h(s_n))``. Union of
disjoint sets is ``(c1 + c2, x1 xor x2)`` and the difference of a set and a subset is ``(c1 - c2, x1 xor
x2)``, so a tree node's aggregate follows from its children's, and a receiver can check the peer's tree for
consistency without seeing its leaves. ``h`` is not the message id itself but a keyed hash under a key fresh
to each session (:func:`derive_key`).

Security argument (the draft left it open).

*Why a key.* With ``h = id`` (or any fixed public hash) an author can grind message ids offline until some
set of them XORs to the same value as another set: two messages each is a birthday search in ``2**(l/2)``
work, and Wagner's generalised birthday algorithm makes four or more cheaper still. Handing one set to Alice
and the other to Bob at the same depth makes their aggregates equal, so the two would never replicate those
messages. With ``h_K(id) = BLAKE2b(id, key=K, digest_size=l/8)``, a PRF under a key that did not exist when
the messages were written, the values ``h_K`` of distinct ids are independent and uniform to anybody who
wrote them earlier.

*Why both sides contribute.* ``K = BLAKE2b(root | nonce_initiator | nonce_responder)`` with a fresh 32-byte
nonce from each side (drawn by the shell's RNG and passed in: the core has no randomness). As long as one
side is honest, ``K`` is unpredictable to everybody before the session, whoever authored the messages. A
dishonest peer learns ``K`` (and can choose its nonce after seeing ours) but gains nothing from it: the only
aggregates it can make collide are those of the set it claims to hold, which it controls anyway; withholding
messages is always possible and no reconciliation protocol can prevent it.

*Why l = 128 bits.* For two different sets the XOR over their non-empty symmetric difference is uniform, so
a single comparison wrongly says "equal" with probability ``2**-l``, however the sets were chosen before the
key. Nobody can test candidates offline (the key is fresh), so there is no birthday factor: the union bound
over ``q`` comparisons gives ``q * 2**-l``. A session compares fewer than ``2 m`` tree nodes for ``m``
depths; even ``2**40`` sessions of ``2**24`` comparisons each stay below ``2**-64`` at ``l = 128``, while 64
bits would leave nothing to spare at that scale. A wrong "equal" costs only a missed message (the next
session, under a new key, finds it); it can never make a side accept a wrong message, because pushed
messages are checked against their content and against the buckets that announced them. 16 bytes per
aggregate is the price.

Invariants: ``count >= 0``; ``count == 0`` implies ``xor == 0``; ``0 <= xor < 2**l``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["EMPTY", "HASH_BITS", "HASH_BYTES", "NONCE_BYTES", "Aggregate", "SessionKey", "aggregate_of", "derive_key"]

HASH_BITS = 128
HASH_BYTES = HASH_BITS // 8
NONCE_BYTES = 32
_PERSON_KEY = b"ssblab-recon-key"  # BLAKE2b personalisation: at most 16 bytes
_PERSON_ID = b"ssblab-recon-id"


@dataclass(frozen=True)
class Aggregate:
    """``(count, XOR)`` of the keyed hashes of a set of message ids."""

    count: int
    xor: int

    def union(self, other: Aggregate) -> Aggregate:
        """The aggregate of the union of two disjoint sets."""
        return Aggregate(self.count + other.count, self.xor ^ other.xor)

    def minus(self, subset: Aggregate) -> Aggregate:
        """The aggregate of ``self``'s set without ``subset``'s set (which it must contain)."""
        return Aggregate(self.count - subset.count, self.xor ^ subset.xor)

    def is_plausible(self) -> bool:
        """Whether some set could have this aggregate (the cheap check on every received aggregate)."""
        return self.count >= 0 and 0 <= self.xor < 1 << HASH_BITS and (self.count > 0 or self.xor == 0)


EMPTY = Aggregate(0, 0)


def aggregate_of(hashes: Iterable[bytes]) -> Aggregate:
    """The aggregate of a set given by its keyed hashes."""
    count, xor = 0, 0
    for h in hashes:
        count += 1
        xor ^= int.from_bytes(h, "big")
    return Aggregate(count, xor)


@dataclass(frozen=True)
class SessionKey:
    """The per-session key of the keyed hash ``h_K``."""

    key: bytes

    def digest(self, message_id: bytes) -> bytes:
        """``h_K(id)``: the ``HASH_BYTES`` that stand for a message id in this session."""
        return hashlib.blake2b(message_id, key=self.key, digest_size=HASH_BYTES, person=_PERSON_ID).digest()


def derive_key(root: bytes, initiator_nonce: bytes, responder_nonce: bytes) -> SessionKey:
    """The session key from the trDAG root and both sides' nonces (in role order, so both derive the same)."""
    material = len(root).to_bytes(4, "big") + root + initiator_nonce + responder_nonce
    return SessionKey(hashlib.blake2b(material, digest_size=32, person=_PERSON_KEY).digest())
