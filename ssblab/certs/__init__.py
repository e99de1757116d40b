"""Merkle-tree certificates for partial replication of a feed (see :mod:`ssblab.certs.merkle`)."""

from ssblab.certs.merkle import (
    HASH_BYTES,
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
    "HASH_BYTES",
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
