"""Who may call what on a replication server, and how much: a pure decision table.

Strategy: roles are decided once per connection (``master`` is the server's own key, ``blocked`` a key the server's
identity blocks, everyone else ``anonymous``); each call is then one lookup in ``ALLOWED`` plus a token bucket per
connection (the clock is a parameter). Invariants: anonymous peers get only what replication needs (the
``ANONYMOUS_METHODS`` of ssb-server 16: history, EBT, blobs, ping, whoami is master-only there but harmless and
asked by JS clients, so we answer it); ``master`` may call everything; a blocked peer may call nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

__all__ = ["ANONYMOUS_METHODS", "Bucket", "Permission", "Policy", "is_allowed", "may_read_feed", "role_of", "take"]

ANONYMOUS_METHODS = frozenset({
    "whoami",
    "createHistoryStream",
    "ebt.replicate",
    "blobs.has",
    "blobs.get",
    "blobs.size",
    "blobs.createWants",
    "gossip.ping",
})


class Permission(Enum):
    """What a connected peer may call on this server, as ssb-server's permissions: its own identity (master)
    everything, another peer the anonymous methods, a blocked one nothing."""

    MASTER = "master"
    ANONYMOUS = "anonymous"
    BLOCKED = "blocked"


@dataclass(frozen=True)
class Policy:
    """Limits of one server. ``private`` serves a feed only to its author and the identities it follows.

    ``rate`` is calls per second per connection with bursts of ``burst``; ``max_streams`` counts the open
    streams of one connection; ``max_connections`` the peers connected at once (master included).
    """

    max_connections: int = 64
    max_streams: int = 256
    rate: float = 500.0
    burst: int = 2000
    private: bool = False


@dataclass(frozen=True)
class Bucket:
    """A token bucket: ``tokens`` left at time ``at`` (seconds, any monotonic origin)."""

    tokens: float
    at: float


def role_of(peer: str, server: str, blocked: frozenset[str] | set[str]) -> Permission:
    if peer == server:
        return Permission.MASTER
    return Permission.BLOCKED if peer in blocked else Permission.ANONYMOUS


def is_allowed(role: Permission, method: str) -> bool:
    """Whether ``role`` may call ``method`` at all (limits aside)."""
    if role is Permission.MASTER:
        return True
    return role is Permission.ANONYMOUS and method in ANONYMOUS_METHODS


def take(bucket: Bucket | None, now: float, policy: Policy) -> tuple[Bucket, bool]:
    """Spend one token if there is one; the bucket refills at ``policy.rate`` per second up to ``burst``."""
    if bucket is None:
        bucket = Bucket(float(policy.burst), now)
    tokens = min(float(policy.burst), bucket.tokens + max(0.0, now - bucket.at) * policy.rate)
    if tokens < 1:
        return replace(bucket, tokens=tokens, at=now), False
    return Bucket(tokens - 1, now), True


def may_read_feed(policy: Policy, peer: str, role: Permission, author: str, followed_by_author: set[str]) -> bool:
    """Privacy mode: a feed goes to its author, the master, and identities the author follows."""
    if not policy.private or role is Permission.MASTER or peer == author:
        return True
    return peer in followed_by_author
