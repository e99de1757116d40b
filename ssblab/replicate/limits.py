"""How much one replication run may take in: messages, bytes and wall time, shared by every route of the run.

Why: a peer that trickles one valid message just under the stall timeout, or streams valid messages for ever,
keeps a per-stream timeout happy; only a bound over the whole run ends it. Strategy: one `Budget` per run;
each route asks it before taking a message in (`Budget.take`), and the runner races the routes against
`Budget.stopped` and the deadline, then gives the routes `GRACE` seconds to commit what they hold before it
cancels them. Invariants: a refused message is never stored; once one limit is reached every route stops, and
what was stored before stays stored.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ssblab.replicate.errors import ReplicationError

__all__ = ["GRACE", "Budget", "Limits", "Stopped"]

GRACE = 1.0  # seconds the routes get to wind down (commit their last batch) once the run stops


@dataclass(frozen=True)
class Limits:
    """Bounds of one run (``--max-messages``, ``--max-bytes``, ``--deadline``; the ``--stall`` timeout is per
    stream). The defaults are far above a whole replica of today's network yet end any endless stream or
    hostile trickle within the hour."""

    max_messages: int = 5_000_000
    max_bytes: int = 4 * 2**30  # of signed message encodings
    deadline: float = 3600.0  # seconds from connected to done (live mode has none)


class Stopped(ReplicationError):
    """A route ended a feed because the run reached a limit: the feed is unserved, not failed (the run-level
    `Budget.error` says why)."""


class Budget:
    """What a run has taken in so far; refuses messages beyond its `Limits` and then signals `stopped`."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.messages = 0
        self.bytes = 0
        self.reason: str | None = None  # the limit that stopped the run: "max-messages", "max-bytes", "deadline"
        self.stopped = asyncio.Event()

    def take(self, size: int) -> bool:
        """Count one message of ``size`` bytes; False (and the run stops) when it would pass a limit."""
        if self.reason is None:
            if self.messages + 1 > self.limits.max_messages:
                self.stop("max-messages")
            elif self.bytes + size > self.limits.max_bytes:
                self.stop("max-bytes")
            else:
                self.messages += 1
                self.bytes += size
                return True
        return False

    def stop(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
            self.stopped.set()

    def stopped_feed(self, feed: str) -> Stopped:
        return Stopped(f"{feed}: the run stopped ({self.reason})", feed=feed, code=self.reason or "limit")

    def error(self) -> ReplicationError:
        """The run-level error that says which limit ended the run."""
        limits = self.limits
        detail = {"max-messages": f"{limits.max_messages} messages", "max-bytes": f"{limits.max_bytes} bytes",
                  "deadline": f"{limits.deadline} s"}.get(self.reason or "", "")
        return ReplicationError(f"the run stopped at its limit of {detail} (--{self.reason}); what came before "
                                "is stored", code=self.reason or "limit")
