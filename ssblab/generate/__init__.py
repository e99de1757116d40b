"""Seeded, realistic SSB networks with real keys and signatures (``ssblab generate``).

The distributions are those of ssb-fixtures 4 (see `frequencies`); the output streams, so a million messages
need no more memory than a thousand. Same spec, same bytes.
"""

from ssblab.generate.jsonl import Summary, message_kind, write_jsonl
from ssblab.generate.network import (
    GeneratedNetwork,
    InvalidSpec,
    NetworkSpec,
    derive_keypairs,
    generate_network,
)

__all__ = [
    "GeneratedNetwork",
    "InvalidSpec",
    "NetworkSpec",
    "Summary",
    "derive_keypairs",
    "generate_network",
    "message_kind",
    "write_jsonl",
]
