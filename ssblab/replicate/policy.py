"""Who may call what on a replication server, and how much: a pure decision table.

Strategy: roles are decided once per connection (``master`` is the server's own key, ``blocked`` a key the server's
identity blocks, everyone else ``anonymous``); each call is then one lookup in ``ALLOWED`` plus a token bucket per
connection (the clock is a parameter). Invariants: anonymous peers get only what replication needs (the
``ANONYMOUS_METHODS`` of ssb-server 16: history, EBT, blobs, ping, whoami is master-only there but harmless and
asked by JS clients, so we answer it); ``master`` may call everything; a blocked peer may call nothing.

Seats (`seat_for`): a peer that does no work cannot keep a newcomer out. When the server is full, the peer idle the
longest (no call of its own open) gives up its seat; only when every seated peer is busy is the newcomer refused.
The last ``reserved`` seats go only to trusted peers (the master and the feeds the server's identity follows), so
a crowd of busy strangers cannot lock its owner and friends out; at least one seat stays open to anyone.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from ssblab.net.budget import DEFAULT_BUDGET

__all__ = ["ANONYMOUS_METHODS", "Bucket", "Permission", "Policy", "Seat", "is_allowed", "may_read_feed", "role_of",
           "seat_for", "take"]

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

    ``rate`` is calls per second per connection with bursts of ``burst``; calls to methods we do not serve have
    a bucket of their own, at the same rate with bursts of ``rejected_burst`` (a client probes a few methods; a
    flood that reconnects must not get thousands of answers each time); ``max_streams`` counts the open streams of
    one connection; ``max_connections`` the peers
    connected at once (master included), of which ``reserved`` are for trusted peers; ``idle_timeout`` is how
    long a peer may stay with no call open; ``max_buffered`` the bytes held for all peers at once
    (`ssblab.net.budget`).
    """

    max_connections: int = 64
    max_streams: int = 256
    rate: float = 500.0
    burst: int = 2000
    private: bool = False
    reserved: int = 4
    rejected_burst: int = 64
    idle_timeout: float = 30.0
    max_buffered: int = DEFAULT_BUDGET


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


def take(bucket: Bucket | None, now: float, policy: Policy, burst: int | None = None) -> tuple[Bucket, bool]:
    """Spend one token if there is one; the bucket refills at ``policy.rate`` per second up to ``burst`` (default
    ``policy.burst``)."""
    burst = policy.burst if burst is None else burst
    if bucket is None:
        bucket = Bucket(float(burst), now)
    tokens = min(float(burst), bucket.tokens + max(0.0, now - bucket.at) * policy.rate)
    if tokens < 1:
        return replace(bucket, tokens=tokens, at=now), False
    return Bucket(tokens - 1, now), True


def may_read_feed(policy: Policy, peer: str, role: Permission, author: str, followed_by_author: set[str]) -> bool:
    """Privacy mode: a feed goes to its author, the master, and identities the author follows."""
    if not policy.private or role is Permission.MASTER or peer == author:
        return True
    return peer in followed_by_author


@dataclass(frozen=True)
class Seat:
    """What the seat decision knows of a connected peer: ``busy`` while a call of its own is open, idle since
    ``idle_since`` otherwise."""

    holder: Hashable
    trusted: bool
    busy: bool
    idle_since: float


def seat_for(policy: Policy, trusted: bool, seats: Sequence[Seat]) -> tuple[bool, Hashable | None]:
    """Whether a new peer gets a seat, and whose seat it takes (see the module docstring).

    Returns:
        ``(admitted, holder to drop)``; the holder is None when a seat is free.

    Examples:
        >>> policy = Policy(max_connections=2, reserved=1)
        >>> busy, idle = Seat("busy", False, True, 0.0), Seat("idle", False, False, 5.0)
        >>> seat_for(policy, False, [busy]), seat_for(policy, True, [busy])
        ((False, None), (True, None))
        >>> seat_for(policy, False, [idle]), seat_for(policy, True, [busy, idle])
        ((True, 'idle'), (True, 'idle'))
    """
    strangers = [seat for seat in seats if not seat.trusted]
    open_to_strangers = max(1, policy.max_connections - policy.reserved)
    full = len(seats) >= policy.max_connections or (not trusted and len(strangers) >= open_to_strangers)
    if not full:
        return True, None
    candidates = [seat for seat in (seats if trusted else strangers) if not seat.busy]
    if not candidates:
        return False, None
    longest = min(candidates, key=lambda seat: (seat.trusted, seat.idle_since))  # strangers first
    return True, longest.holder
