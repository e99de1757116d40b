"""Pull feeds and blobs from one remote peer into a `LiveStore`, by createHistoryStream and blobs.get.

Strategy: one task per feed asks for ``createHistoryStream({id, seq: head + 1})`` (so a rerun resumes where the
store stands) and hands its messages in batches to a `GroupWriter`, which commits every batch that is ready in
the same event-loop turn in one transaction. A batch is cut when the stream's queue is momentarily empty, so a fast
peer gets big transactions and a trickling live feed still lands at once.

Invariants: nothing reaches the store but through `Store.append` (validation), so a malicious peer can at worst
stop its own stream; a feed is dropped from this peer at its first bad message (shape, signature, wrong author or
sequence, fork, size) with a `ReplicationError` naming the feed, the peer and the rule, and its valid prefix stays
stored; no wait on the peer is unbounded outside live mode (``stall`` seconds per item); a connection that closes
ends every feed at once (``connection-closed``), those still waiting for their turn included; a message the run's
`Budget` refuses is not stored.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from itertools import chain
from typing import Any

from ssblab.core.errors import InvalidMessage, InvalidRef, SsbError
from ssblab.core.message import Message, check_shape
from ssblab.net.aio import RpcConnection
from ssblab.replicate.errors import ReplicationError
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.limits import Budget, Limits, Stopped

__all__ = [
    "BATCH",
    "CONCURRENCY",
    "FLUSH_AT",
    "GROUP_COMMIT",
    "HAS_CHUNK",
    "STALL_TIMEOUT",
    "GroupWriter",
    "fetch_blobs",
    "parse_item",
    "pull_feed",
    "pull_feeds",
]

STALL_TIMEOUT = 30.0
BATCH = 500
HAS_CHUNK = 100
CONCURRENCY = 16
GROUP_COMMIT = 0.05  # seconds a batch may wait for others to share its transaction
FLUSH_AT = 4 * BATCH
_END = object()
_CLOSED = object()


class GroupWriter:
    """Group commit: batches handed in within ``GROUP_COMMIT`` seconds (or until ``FLUSH_AT`` messages wait) go to
    the store in one `append`, so the per-transaction cost (an fsync) is paid once for many feeds."""

    def __init__(self, live: LiveStore) -> None:
        self.live = live
        self._pending: list[tuple[list[Message], asyncio.Future[list[InvalidMessage]]]] = []
        self._waiting = 0
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None

    async def append(self, batch: list[Message]) -> list[InvalidMessage]:
        """Store ``batch`` (one feed's messages, in order); returns that feed's validation errors."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[InvalidMessage]] = loop.create_future()
        self._pending.append((batch, future))
        self._waiting += len(batch)
        if self._handle is None:
            self._handle = loop.call_later(GROUP_COMMIT, self._flush)
        elif self._waiting >= FLUSH_AT:
            self._handle.cancel()
            self._handle = loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        pending, self._pending, self._waiting, self._handle = self._pending, [], 0, None
        try:
            report = self.live.append(chain.from_iterable(batch for batch, _ in pending))
        except Exception as exc:  # a store failure fails every waiting batch, never silently
            for _, future in pending:
                if not future.done():
                    future.set_exception(exc)
            return
        for batch, future in pending:
            if not future.done():
                future.set_result([e for e in report.errors if e.author == batch[0].author])


def parse_item(item: Any, feed: str, expected: int) -> Message:
    """One streamed message, checked to be the feed's next one (the store checks the rest)."""
    value = item["value"] if isinstance(item, dict) and "value" in item and "key" in item else item
    msg = Message.from_value(value)
    check_shape(msg)
    if msg.author != feed:
        raise ReplicationError(f"stream of {feed} sent a message of {msg.author!r:.80}", feed=feed,
                               code="wrong-author")
    if msg.sequence != expected:
        raise ReplicationError(f"stream of {feed} sent sequence {msg.sequence!r:.20}, expected {expected}",
                               feed=feed, code="sequence-order")
    return msg


async def _pump(source: AsyncIterator[Any], queue: asyncio.Queue[Any]) -> None:
    try:
        async for item in source:
            await queue.put(item)
        await queue.put(_END)
    except Exception as exc:  # handed to the consumer, which names the feed
        await queue.put(exc)


class _FeedPull:
    """One feed's history stream as it is validated and stored, in batches, from the store's head on."""

    def __init__(self, conn: RpcConnection, writer: GroupWriter, feed: str, budget: Budget,
                 on_stored: Callable[[int], None] | None) -> None:
        self.conn, self.writer, self.feed, self.budget, self.on_stored = conn, writer, feed, budget, on_stored
        self.start = self.expected = writer.live.sequence(feed) + 1
        self.batch: list[Message] = []

    def error(self, why: str, code: str) -> ReplicationError:
        return ReplicationError(f"{self.feed} from {self.conn.remote_id}: {why}", feed=self.feed, code=code)

    def closed(self) -> ReplicationError:
        return self.error("connection closed", "connection-closed")

    @property
    def stored(self) -> int:
        return self.writer.live.sequence(self.feed) - self.start + 1

    async def flush(self) -> None:
        if self.batch:
            errors, self.batch = await self.writer.append(self.batch), []
            if errors:
                raise self.error(str(errors[0]), errors[0].code)
            if self.on_stored:
                self.on_stored(self.stored)

    def accept(self, item: Any) -> None:
        """Queue a streamed item for storing; a stream error or an invalid message raises ReplicationError."""
        if item is _CLOSED or isinstance(item, ConnectionError):
            raise self.closed()
        if isinstance(item, Exception):
            raise self.error(f"stream failed: {item}", "stream") from item
        try:
            msg = parse_item(item, self.feed, self.expected)
        except InvalidMessage as exc:
            raise self.error(str(exc), exc.code) from exc
        if not self.budget.take(len(msg.encoded)):
            raise self.budget.stopped_feed(self.feed)
        self.batch.append(msg)
        self.expected += 1


async def pull_feed(conn: RpcConnection, writer: GroupWriter, feed: str, *, live: bool = False,
                    stall: float = STALL_TIMEOUT, on_stored: Callable[[int], None] | None = None,
                    budget: Budget | None = None, queue: asyncio.Queue[Any] | None = None) -> int:
    """Replicate one feed from ``conn`` from the store's head on; returns how many messages were stored.

    ``queue`` is where the stream's items wait (`pull_feeds` puts its closing signal there too).

    Raises:
        ReplicationError: the peer sent a bad message, stalled, failed the stream or dropped the connection, or
            the run's budget ran out; whatever validated before it is stored.
    """
    pull = _FeedPull(conn, writer, feed, budget or Budget(Limits()), on_stored)
    if conn.closed.is_set():
        raise pull.closed()
    queue = asyncio.Queue(maxsize=4 * BATCH) if queue is None else queue
    source = conn.source("createHistoryStream", {"id": feed, "seq": pull.expected, "keys": False, "live": live})
    pump = asyncio.create_task(_pump(source, queue))
    try:
        while True:
            if queue.empty() or len(pull.batch) >= BATCH:
                await pull.flush()
            try:
                item = await asyncio.wait_for(queue.get(), None if live else stall)
            except TimeoutError:
                raise pull.error(f"peer stalled, nothing for {stall} s", "stalled") from None
            if item is _END:
                await pull.flush()
                return pull.stored
            try:
                pull.accept(item)
            except ReplicationError:
                await pull.flush()  # what validated before the bad item is kept
                raise
    finally:
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
        with contextlib.suppress(Exception):
            await source.aclose()  # type: ignore[attr-defined]  # an async generator: ends the remote stream


async def pull_feeds(conn: RpcConnection, live: LiveStore, feeds: Iterable[str], *, live_mode: bool = False,
                     concurrency: int = CONCURRENCY, stall: float = STALL_TIMEOUT, budget: Budget | None = None,
                     on_stored: Callable[[int], None] | None = None) -> tuple[list[str], list[ReplicationError]]:
    """Replicate many feeds at once (all of them in live mode); returns the feeds served and per-feed errors.

    A closed connection ends every feed at once: those streaming get the signal in their queue, those waiting
    for their turn see the connection closed when it comes.
    """
    writer, feeds = GroupWriter(live), list(dict.fromkeys(feeds))
    gate = asyncio.Semaphore(len(feeds) if live_mode else concurrency)
    budget = budget or Budget(Limits())
    queues: set[asyncio.Queue[Any]] = set()

    async def one(feed: str) -> str | ReplicationError:
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=4 * BATCH)
        async with gate:
            queues.add(queue)
            try:
                await pull_feed(conn, writer, feed, live=live_mode, stall=stall, on_stored=_progress(on_stored),
                                budget=budget, queue=queue)
                return feed
            except ReplicationError as exc:
                return exc
            finally:
                queues.discard(queue)

    async def closing() -> None:
        await conn.wait_closed()
        for queue in queues:
            with contextlib.suppress(asyncio.QueueFull):  # a full queue ends with the stream's own error
                queue.put_nowait(_CLOSED)

    watch = asyncio.create_task(closing())
    try:
        outcomes = await asyncio.gather(*(one(feed) for feed in feeds))
    finally:
        watch.cancel()
    errors = [o for o in outcomes if isinstance(o, ReplicationError) and not isinstance(o, Stopped)]
    return [o for o in outcomes if isinstance(o, str)], errors


def _progress(on_stored: Callable[[int], None] | None) -> Callable[[int], None] | None:
    """`pull_feed` reports a feed's running total; the progress bar wants each increase."""
    if on_stored is None:
        return None
    last = 0

    def tick(total: int) -> None:
        nonlocal last
        on_stored(total - last)
        last = total
    return tick


async def fetch_blobs(conn: RpcConnection, live: LiveStore, refs: Iterable[str], *, max_size: int = 5 * 1024 * 1024,
                      timeout: float = STALL_TIMEOUT) -> tuple[int, list[ReplicationError]]:
    """Fetch the blobs in ``refs`` we lack and the peer has; each is checked against its hash before it is kept."""
    blobs, fetched, errors = live.store.blobs, 0, list[ReplicationError]()
    if conn.closed.is_set():
        return 0, [ReplicationError(f"blobs from {conn.remote_id}: connection closed", code="connection-closed")]
    missing = sorted(ref for ref in set(refs) if not blobs.has(ref))
    for start in range(0, len(missing), HAS_CHUNK):
        chunk = missing[start:start + HAS_CHUNK]
        try:
            answers = await conn.call_async("blobs.has", chunk, timeout=timeout)
        except (SsbError, ConnectionError, TimeoutError) as exc:
            return fetched, [*errors, ReplicationError(f"blobs.has on {conn.remote_id} failed: {exc}", code="blobs")]
        for ref, has in zip(chunk, answers if isinstance(answers, list) else [], strict=False):
            if has is True:
                try:
                    data = await asyncio.wait_for(_blob_bytes(conn, ref, max_size), timeout)
                    blobs.add(data, expected=ref)
                    fetched += 1
                except (SsbError, ConnectionError, TimeoutError) as exc:
                    errors.append(ReplicationError(f"blob {ref} from {conn.remote_id}: {exc or 'timed out'}",
                                                   code="blob"))
    return fetched, errors


async def _blob_bytes(conn: RpcConnection, ref: str, max_size: int) -> bytes:
    parts, size = [], 0
    async for part in conn.source("blobs.get", {"key": ref, "max": max_size}):
        if not isinstance(part, bytes):
            raise InvalidRef(f"blobs.get sent a {type(part).__name__}, not bytes")
        size += len(part)
        if size > max_size:
            raise InvalidRef(f"blob is larger than the max {max_size} bytes")
        parts.append(part)
    return b"".join(parts)
