"""The messages two sessions exchange: a :class:`Hello` each, then one :class:`Step` each per round.

Both sides send at once and answer each other's step with their next one (lockstep), so a duplex stream (a
muxrpc duplex call) carries them. Both sides take the same decisions from the same pair of aggregates, which
keeps their frontiers equal without any message saying which node is which.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssblab.reconcile.aggregate import Aggregate
from ssblab.reconcile.dag import Node

__all__ = ["VERSION", "Bucket", "Hello", "Message", "Step"]

VERSION = 1


@dataclass(frozen=True)
class Hello:
    """Component 1 (the trDAG, by its root id), the nonce for the session key, and phase 1's maximum depth."""

    version: int
    root: bytes
    nonce: bytes
    max_depth: int


@dataclass(frozen=True)
class Bucket:
    """All keyed hashes of one depth, sent when that leaf of the forest differs."""

    depth: int
    hashes: tuple[bytes, ...]


@dataclass(frozen=True)
class Step:
    """One round: aggregates of the frontier, buckets of differing leaves, pushed messages.

    ``total`` (the aggregate of every depth >= 1) is sent in round 1 only. ``aggregates`` follow the
    frontier's order: the forest roots in round 1, then the children of every node that differed, in order.
    """

    round: int
    total: Aggregate | None
    aggregates: tuple[Aggregate, ...]
    buckets: tuple[Bucket, ...]
    pushes: tuple[Node, ...]

    @property
    def is_searching(self) -> bool:
        """Whether the search still runs: the next step of both sides may carry pushes only."""
        return bool(self.aggregates or self.buckets)


Message = Hello | Step
