"""A server-wide budget for the bytes peers make us hold, as a pure ledger (no I/O, no clock).

Why: each connection buffers what its peer sent until it is whole (a packet-stream packet may announce 16 MiB)
and the stream items its handlers have not taken yet. Sixty peers sending most of a 16 MiB packet each once made
a server hold about 1 GB. The shell reports each connection's holding after every read; when the total passes the
limit, the ledger names the holder to drop: the one holding the most, which is the hostile one whenever honest
peers send SSB-sized packets (messages are at most 8 KiB, blob chunks 64 KiB).

Invariant: ``total`` is the sum of the holdings recorded and never counts a released holder.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from ssblab.net.errors import LocalProtocolError

__all__ = ["DEFAULT_BUDGET", "BufferBudget", "H"]

DEFAULT_BUDGET = 64 * 2**20  # 64 MiB
H = TypeVar("H", bound=Hashable)


class BufferBudget(Generic[H]):
    """Bytes held per holder (a connection) and in all, against ``limit``.

    Examples:
        >>> budget = BufferBudget(100)
        >>> budget.hold("a", 60), budget.hold("b", 30), budget.hold("b", 50)
        (None, None, 'a')
        >>> budget.release("a"); budget.total, budget.over()
        (50, None)
    """

    def __init__(self, limit: int = DEFAULT_BUDGET) -> None:
        if limit < 1:
            raise LocalProtocolError(f"a buffer budget is at least 1 byte, got {limit}")
        self.limit = limit
        self.total = 0
        self._held: dict[H, int] = {}

    def hold(self, holder: H, size: int) -> H | None:
        """Record that ``holder`` now holds ``size`` bytes; the holder to drop when the total passes the limit."""
        self.total += size - self._held.get(holder, 0)
        if size:
            self._held[holder] = size
        else:
            self._held.pop(holder, None)
        return self.over()

    def over(self) -> H | None:
        """The holder holding the most while the total is past the limit; None within it."""
        if self.total <= self.limit:
            return None
        return max(self._held, key=self._held.__getitem__)

    def release(self, holder: H) -> None:
        """Forget ``holder`` (its connection ended): its bytes no longer count."""
        self.total -= self._held.pop(holder, 0)

    def held(self, holder: H) -> int:
        return self._held.get(holder, 0)
