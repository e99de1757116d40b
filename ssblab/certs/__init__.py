"""Merkle-tree certificates for partial replication of a feed (see :mod:`ssblab.certs.merkle`), checked against
the diamonds the author signed in a ``merkle-anchor`` message (:mod:`ssblab.certs.anchor`)."""

from ssblab.certs.anchor import ANCHOR_TYPE, anchor_content, read_anchor
from ssblab.certs.merkle import (
    HASH_BYTES,
    Anchor,
    Certificate,
    CertificateError,
    CertRule,
    FeedTree,
    check_consistent,
    decode,
    diamond_height,
    encode,
    leaf_hash,
    node_hash,
    required_length,
    verify,
    verify_order,
)

__all__ = [
    "ANCHOR_TYPE",
    "HASH_BYTES",
    "Anchor",
    "CertRule",
    "Certificate",
    "CertificateError",
    "FeedTree",
    "anchor_content",
    "check_consistent",
    "decode",
    "diamond_height",
    "encode",
    "leaf_hash",
    "node_hash",
    "read_anchor",
    "required_length",
    "verify",
    "verify_order",
]
