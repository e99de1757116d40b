"""Errors of the replication peer: what a remote did wrong, or what it may not do."""

from __future__ import annotations

from ssblab.core.errors import SsbError

__all__ = ["PermissionDenied", "ReplicationError"]


class ReplicationError(SsbError):
    """Replicating one feed (or one blob) from one peer failed; ``feed`` names it, the message says why.

    ``stored`` is how many of the feed's messages this run stored before the failure (they stay stored).
    """

    def __init__(self, message: str, *, feed: str | None = None, code: str = "replication") -> None:
        super().__init__(message, code=code)
        self.feed = feed
        self.stored = 0

    def to_json(self) -> dict[str, str | int | None]:
        return {"feed": self.feed, "code": self.code, "message": str(self), "stored": self.stored}


class PermissionDenied(SsbError):
    """A peer called a method its role may not call (the message is the JS muxrpc wording)."""

    def __init__(self, method: str, why: str = "") -> None:
        detail = f"method:{method} is not in list of allowed methods" + (f" ({why})" if why else "")
        super().__init__(detail, code="permission")
        self.method = method
