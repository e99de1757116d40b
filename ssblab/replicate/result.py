"""What one replication run did, route by route: the ``ssblab replicate --json`` contract and its text form.

A requested feed is *served* by a route when that route ended with the remote having told us everything it
holds of the feed: over EBT, the remote's note for the feed said it replicates it and we reached that sequence;
over a history stream, the stream ended without an error (an empty stream is an answer too). ``unserved`` is
every requested feed that no route served, so ``errors == [] and unserved == []`` means the replica has all
the remote was asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ssblab.replicate.errors import ReplicationError

__all__ = ["ROUTES", "ReplicationResult", "RouteCount"]

ROUTES = ("ebt", "history")


@dataclass
class RouteCount:
    """Feeds a route served and messages it stored."""

    feeds: int = 0
    messages: int = 0

    def to_json(self) -> dict[str, int]:
        return {"feeds": self.feeds, "messages": self.messages}


@dataclass
class ReplicationResult:
    """One run; ``messages`` counts every message stored, also those of a feed that later failed."""

    mode: str
    feeds: int = 0
    messages: int = 0
    blobs: int = 0
    seconds: float = 0.0
    errors: list[ReplicationError] = field(default_factory=list)
    unserved: list[str] = field(default_factory=list)
    routes: dict[str, RouteCount] = field(default_factory=lambda: {route: RouteCount() for route in ROUTES})
    stopped: str | None = None  # the limit that ended the run early, if one did

    @property
    def ok(self) -> bool:
        """Every requested feed served, nothing failed."""
        return not self.errors and not self.unserved

    def to_json(self) -> dict[str, Any]:
        return {"feeds": self.feeds, "messages": self.messages, "blobs": self.blobs,
                "seconds": round(self.seconds, 3), "mode": self.mode,
                "routes": {name: count.to_json() for name, count in self.routes.items()},
                "unserved": sorted(self.unserved), "stopped": self.stopped,
                "errors": [e.to_json() for e in self.errors]}

    def summary(self) -> list[str]:
        """The text output's lines: the totals, then what each route did, then what was not served."""
        routes = ", ".join(f"{name} {count.messages} messages of {count.feeds} feeds"
                           for name, count in self.routes.items() if count.feeds or count.messages)
        lines = [f"{self.messages} messages from {self.feeds} feeds, {self.blobs} blobs in {round(self.seconds, 3)} s "
                 f"({self.mode}{': ' + routes if routes else ''})"]
        if self.stopped:
            lines.append(f"stopped early: the {self.stopped} limit was reached")
        if self.unserved:
            lines.append(f"{len(self.unserved)} requested feeds were not served: {', '.join(sorted(self.unserved)[:5])}"
                         + (" …" if len(self.unserved) > 5 else ""))
        return lines
