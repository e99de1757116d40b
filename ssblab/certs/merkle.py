"""Merkle-tree certificates: prove a feed's message order with a logarithmic certificate (seed 002).

Strategy. The leaves are the feed's message ids in sequence order (index ``k`` is the 0-based position, so SSB
sequence ``k + 1``), hashed with sha256 and RFC 6962 domain separation: ``leaf = H(0x00 | id)`` and
``node = H(0x01 | left | right)``, so that a leaf can never be passed off as an inner node. No inner node is
stored in the feed: any replica that holds the leaves recomputes them.

A *diamond* ``D_i`` is the root of the complete tree over the first ``2**i`` leaves (``D_0`` is the first
leaf). The certificate of message ``k`` works downwards from the smallest diamond that contains it,
``D_j`` with ``j = k.bit_length()``, and carries:

* ``path``: the ``j`` sibling hashes from the leaf up to ``D_j``; the top one is always ``D_{j-1}``, because
  ``k >= 2**(j-1)``;
* ``diamonds``: ``D_0 .. D_j``, every diamond that existed once ``D_j`` did;
* ``spine``: ``R_0 .. R_{j-2}``, the right halves with ``D_{i+1} = node(D_i, R_i)``, which link every listed
  diamond to the next one.

Invariants a valid certificate satisfies (each is a :class:`CertRule`): all hashes are 32 bytes; the list
lengths follow from ``index`` alone; folding the leaf up the path (left or right by the bits of ``index``)
gives ``D_j``; the top sibling is ``D_{j-1}``; the spine links ``D_0 .. D_j``. So every byte of every field is
bound to ``D_j`` and a change anywhere is detected (up to a sha256 collision).

Why this proves order. Two certificates of one feed agree on every diamond they share (else the feed forked
or a certificate is forged: :func:`check_consistent`). Given that, the earlier leaf sits at position ``k1``
inside ``D_{j1}``, which the later certificate's spine hashes into its own ``D_{j2}``, next to position
``k2 > k1``. Whoever trusts ``D_{j2}`` learns that the author put message ``k1`` before message ``k2`` from
``3 j + 1`` hashes, ``j <= log2(k2) + 1``, instead of walking the ``k2 - k1`` backlinks (and fetching those
messages) of the hash chain. Agreement alone is not trust: an attacker's tree can keep a genuine certificate's
small diamonds. So :func:`verify_order` requires an :class:`Anchor`, the diamonds the author signed in a
``merkle-anchor`` message (:mod:`ssblab.certs.anchor`), and every diamond of both certificates must be its.

Limitation (kept on purpose, as in the seed): a certificate for ``k`` can be issued once the feed holds
``2**j`` messages (:func:`required_length`), since ``D_j`` does not exist before. Newer messages stay covered
by the ordinary hash chain from the last closed diamond, at most ``k / 2`` links.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from ssblab.core.errors import SsbError
from ssblab.core.varint import encode_uvarint

__all__ = [
    "HASH_BYTES",
    "LEAF_PREFIX",
    "NODE_PREFIX",
    "Anchor",
    "CertRule",
    "Certificate",
    "CertificateError",
    "FeedTree",
    "check_consistent",
    "decode",
    "diamond_height",
    "encode",
    "leaf_hash",
    "node_hash",
    "required_length",
    "verify",
    "verify_order",
]

HASH_BYTES = 32
LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"


class CertRule(StrEnum):
    """The checks a certificate can fail; the value is the stable error ``code``."""

    INDEX = "index"  # a negative index, or one the tree cannot certify yet
    HASH_LENGTH = "hash-length"  # a hash that is not 32 bytes
    SHAPE = "shape"  # path, diamond or spine count does not follow from the index
    LEAF = "leaf"  # the leaf is not the hash of the message id it should certify
    PATH = "path"  # the path does not lead from the leaf to the top diamond
    DIAMOND_LINK = "diamond-link"  # the top sibling is not the previous diamond
    SPINE = "spine"  # the spine does not link one diamond to the next
    FORK = "fork"  # two certificates disagree on a shared diamond or on one position
    ORDER = "order"  # the "earlier" certificate is not at a lower index
    ENCODING = "encoding"  # bytes that are not an encoded certificate
    ANCHOR = "anchor"  # no signed anchor vouches for the certificate's diamonds


class CertificateError(SsbError):
    """A certificate (or pair of certificates) that fails a :class:`CertRule`."""

    def __init__(self, rule: CertRule, detail: str) -> None:
        self.rule = rule
        self.detail = detail
        super().__init__(f"{rule.value}: {detail}", code=f"cert-{rule.value}")


def _as_bytes(message_id: bytes | str) -> bytes:
    return message_id.encode("utf-8") if isinstance(message_id, str) else bytes(message_id)


def leaf_hash(message_id: bytes | str) -> bytes:
    """The leaf for one message id (``str`` ids are hashed as their UTF-8 text)."""
    return hashlib.sha256(LEAF_PREFIX + _as_bytes(message_id)).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The inner node over two subtrees."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def diamond_height(index: int) -> int:
    """``j``: the smallest diamond ``D_j`` whose leaves include ``index``."""
    return index.bit_length()


def required_length(index: int) -> int:
    """How many messages the feed must hold before message ``index`` can be certified."""
    return 1 << diamond_height(index)


@dataclass(frozen=True)
class Certificate:
    """Proof that leaf ``index`` sits in the top diamond, linked to all smaller diamonds."""

    index: int
    leaf: bytes
    path: tuple[bytes, ...]
    diamonds: tuple[bytes, ...]
    spine: tuple[bytes, ...]

    @property
    def height(self) -> int:
        return diamond_height(self.index)

    @property
    def anchor(self) -> bytes:
        """The top diamond ``D_j``: what a verifier has to trust (or cross-check)."""
        return self.diamonds[-1]

    @property
    def hash_count(self) -> int:
        return 1 + len(self.path) + len(self.diamonds) + len(self.spine)


@dataclass(frozen=True)
class Anchor:
    """Diamonds ``D_0 .. D_J`` that ``author`` signed in its message ``message_id`` at ``sequence`` (build it with
    `ssblab.certs.anchor.read_anchor`, which checks the message and its signature)."""

    author: str
    sequence: int
    message_id: str
    diamonds: tuple[bytes, ...]

    def vouches_for(self, cert: Certificate) -> None:
        """Raise unless every diamond of ``cert`` is this anchor's."""
        if cert.height >= len(self.diamonds):
            raise CertificateError(CertRule.ANCHOR, f"index {cert.index} needs D_{cert.height}; the anchor "
                                                    f"{self.message_id} covers only {1 << (len(self.diamonds) - 1)} "
                                                    "messages")
        for i, (ours, signed) in enumerate(zip(cert.diamonds, self.diamonds, strict=False)):
            if ours != signed:
                raise CertificateError(CertRule.ANCHOR, f"D_{i} of index {cert.index} is not the one "
                                                        f"{self.author} signed in {self.message_id}")


@dataclass(frozen=True)
class FeedTree:
    """All complete subtrees of a feed: ``levels[h][i]`` covers leaves ``[i * 2**h, (i+1) * 2**h)``."""

    levels: tuple[tuple[bytes, ...], ...]

    @classmethod
    def from_ids(cls, message_ids: Iterable[bytes | str]) -> FeedTree:
        return cls.from_leaves(leaf_hash(m) for m in message_ids)

    @classmethod
    def from_leaves(cls, leaves: Iterable[bytes]) -> FeedTree:
        level = tuple(leaves)
        levels = [level]
        while len(level) >= 2:
            level = tuple(node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2))
            levels.append(level)
        return cls(tuple(levels))

    @property
    def length(self) -> int:
        return len(self.levels[0])

    def diamond(self, height: int) -> bytes:
        """``D_height``, the root of the first ``2**height`` leaves."""
        if height >= len(self.levels) or not self.levels[height]:
            raise CertificateError(CertRule.INDEX, f"diamond {height} needs {1 << height} messages")
        return self.levels[height][0]

    def certificate(self, index: int) -> Certificate:
        """The certificate of message ``index`` (0-based position in the feed).

        Raises:
            CertificateError: ``index`` is negative or the feed is shorter than ``required_length(index)``.

        Examples:
            >>> tree = FeedTree.from_ids([b"m0", b"m1", b"m2", b"m3"])
            >>> cert = tree.certificate(2)
            >>> (len(cert.path), len(cert.diamonds), len(cert.spine))
            (2, 3, 1)
            >>> verify(cert, b"m2") == tree.diamond(2)
            True
        """
        if index < 0 or required_length(index) > self.length:
            needed = required_length(index)
            detail = f"message {index} needs {needed} messages, the feed has {self.length}"
            raise CertificateError(CertRule.INDEX, detail)
        j = diamond_height(index)
        return Certificate(
            index=index,
            leaf=self.levels[0][index],
            path=tuple(self.levels[h][(index >> h) ^ 1] for h in range(j)),
            diamonds=tuple(self.levels[h][0] for h in range(j + 1)),
            spine=tuple(self.levels[h][1] for h in range(max(j - 1, 0))),
        )


def _check_shape(cert: Certificate) -> None:
    if cert.index < 0:
        raise CertificateError(CertRule.INDEX, f"negative index {cert.index}")
    j = cert.height
    expected = {"path": j, "diamonds": j + 1, "spine": max(j - 1, 0)}
    actual = {"path": len(cert.path), "diamonds": len(cert.diamonds), "spine": len(cert.spine)}
    if actual != expected:
        raise CertificateError(CertRule.SHAPE, f"index {cert.index} needs {expected}, got {actual}")
    for name in ("leaf", "path", "diamonds", "spine"):
        value = getattr(cert, name)
        for position, h in enumerate((value,) if name == "leaf" else value):
            if not isinstance(h, bytes) or len(h) != HASH_BYTES:
                raise CertificateError(CertRule.HASH_LENGTH, f"{name}[{position}] of index {cert.index}")


def verify(cert: Certificate, message_id: bytes | str | None = None) -> bytes:
    """Check one certificate on its own and return its anchor ``D_j``.

    Args:
        cert: the certificate.
        message_id: when given, the leaf must be this message's hash.

    Raises:
        CertificateError: the first rule the certificate breaks.
    """
    _check_shape(cert)
    if message_id is not None and cert.leaf != leaf_hash(message_id):
        raise CertificateError(CertRule.LEAF, f"leaf of index {cert.index} is not the hash of {message_id!r}")
    node = cert.leaf
    for h, sibling in enumerate(cert.path):
        node = node_hash(sibling, node) if (cert.index >> h) & 1 else node_hash(node, sibling)
    if node != cert.anchor:
        raise CertificateError(CertRule.PATH, f"path of index {cert.index} does not reach D_{cert.height}")
    if cert.path and cert.path[-1] != cert.diamonds[-2]:
        detail = f"top sibling of index {cert.index} is not D_{cert.height - 1}"
        raise CertificateError(CertRule.DIAMOND_LINK, detail)
    for i, right in enumerate(cert.spine):
        if node_hash(cert.diamonds[i], right) != cert.diamonds[i + 1]:
            raise CertificateError(CertRule.SPINE, f"D_{i} does not lead to D_{i + 1} in index {cert.index}")
    return cert.anchor


def check_consistent(a: Certificate, b: Certificate) -> None:
    """Check that two valid certificates can come from one unforked feed.

    Raises:
        CertificateError: either certificate is invalid, or they disagree on a shared diamond or position.
    """
    verify(a)
    verify(b)
    for i, (da, db) in enumerate(zip(a.diamonds, b.diamonds, strict=False)):
        if da != db:
            raise CertificateError(CertRule.FORK, f"D_{i} differs between index {a.index} and {b.index}")
    if a.index == b.index and a.leaf != b.leaf:
        raise CertificateError(CertRule.FORK, f"two different leaves at index {a.index}")


def verify_order(earlier: Certificate, later: Certificate, anchor: Anchor) -> None:
    """Check that message ``earlier.index`` came before ``later.index`` in the feed that signed ``anchor``.

    Raises:
        CertificateError: a certificate is invalid, they are inconsistent, a diamond is not the anchor's (rule
            ``anchor``), or the order is not increasing.

    Examples:
        >>> tree = FeedTree.from_ids(f"m{i}" for i in range(8))
        >>> signed = Anchor("@feed", 9, "%anchor", tuple(tree.diamond(h) for h in range(4)))  # read_anchor's
        >>> verify_order(tree.certificate(1), tree.certificate(6), signed)
        >>> verify_order(tree.certificate(6), tree.certificate(1), signed)  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        ...
        CertificateError: order: index 6 is not before index 1
    """
    check_consistent(earlier, later)
    anchor.vouches_for(earlier)
    anchor.vouches_for(later)
    if earlier.index >= later.index:
        raise CertificateError(CertRule.ORDER, f"index {earlier.index} is not before index {later.index}")


def encode(cert: Certificate) -> bytes:
    """``varint(index) | leaf | path | diamonds | spine``: the lengths follow from the index, none is sent."""
    _check_shape(cert)
    return encode_uvarint(cert.index) + b"".join((cert.leaf, *cert.path, *cert.diamonds, *cert.spine))


def decode(data: bytes) -> Certificate:
    """The inverse of :func:`encode`; only the shape is checked, call :func:`verify` for the hashes.

    Raises:
        CertificateError: ``ENCODING`` for a bad varint or a length that does not match the index.
    """
    index, shift, pos = 0, 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise CertificateError(CertRule.ENCODING, "truncated or oversized index varint")
        byte = data[pos]
        index |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not byte & 0x80:
            break
    j = diamond_height(index)
    counts = (1, j, j + 1, max(j - 1, 0))
    if len(data) - pos != HASH_BYTES * sum(counts) or (pos > 1 and data[pos - 1] == 0):
        raise CertificateError(CertRule.ENCODING, f"{len(data)} bytes are no certificate of index {index}")
    hashes = [data[i : i + HASH_BYTES] for i in range(pos, len(data), HASH_BYTES)]
    parts: list[tuple[bytes, ...]] = []
    for count in counts:
        parts.append(tuple(hashes[:count]))
        hashes = hashes[count:]
    return Certificate(index, parts[0][0], parts[1], parts[2], parts[3])
