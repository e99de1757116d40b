"""Measure a replication between two local stores: bytes on the wire each way, messages, time.

Why: comparing EBT with history streams, or a reconnect with and without request skipping, is a question of
bytes; the replication shell does not count them, and should not have to. Strategy: the client dials a
:class:`CountingRelay` on 127.0.0.1 that forwards every byte to the real server and counts what passes in each
direction, so the figures are what a network would carry (handshake, box-stream framing and muxrpc headers
included) and the protocol code is the unmodified one. Identities are parameters, so a second run with the same
keys is a *reconnect*: both sides find the other's clock from last time (``replication.sqlite3``) and EBT's
request skipping applies; :func:`forget_clock` erases that memory to measure the same run without it.

Invariants: the relay is closed (and every connection through it) when a measurement returns, failed or not;
nothing reaches a store except through the replication code's validation.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nacl.signing import SigningKey

from ssblab.core.errors import UsageError
from ssblab.core.keys import Keypair
from ssblab.core.message import Message, create_message
from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import feed_id
from ssblab.replicate.clocks import ClockStore
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.peer import ReplicaServer
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store

__all__ = [
    "CountingRelay",
    "Measurement",
    "WireCount",
    "append_posts",
    "forget_clock",
    "measure_replication",
    "measure_stores",
]

_CHUNK = 65536
SETTLE_TIMEOUT = 2.0  # seconds the server may take to notice that the client hung up


@dataclass
class WireCount:
    """Bytes that crossed the relay: ``up`` from the client (dialer) to the server, ``down`` back."""

    up: int = 0
    down: int = 0
    connections: int = 0

    @property
    def total(self) -> int:
        return self.up + self.down


@dataclass
class CountingRelay:
    """A TCP relay on 127.0.0.1 that forwards to ``(host, port)`` and counts the bytes each way."""

    host: str
    port: int
    count: WireCount = field(default_factory=WireCount)
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> int:
        """Listen on a free loopback port; returns it."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await task
        if self._server is not None:
            await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.count.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.close()
            return
        pipes = [asyncio.create_task(self._pipe(reader, up_writer, "up")),
                 asyncio.create_task(self._pipe(up_reader, writer, "down"))]
        self._tasks.update(pipes)
        try:
            await asyncio.gather(*pipes, return_exceptions=True)
        finally:
            self._tasks.difference_update(pipes)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, direction: str) -> None:
        """Copy until EOF, counting; then half-close the other side so the peer sees the end too."""
        try:
            while data := await source.read(_CHUNK):
                setattr(self.count, direction, getattr(self.count, direction) + len(data))
                sink.write(data)
                await sink.drain()
            if sink.can_write_eof():
                sink.write_eof()
        except ConnectionError:
            pass
        finally:
            if direction == "down" or sink.is_closing():
                sink.close()


@dataclass(frozen=True)
class Measurement:
    """One replication run as measured: what it moved, what it cost on the wire, how long it took."""

    mode: str
    feeds: int
    messages: int
    seconds: float
    bytes_up: int
    bytes_down: int
    errors: int

    @property
    def bytes_total(self) -> int:
        return self.bytes_up + self.bytes_down

    def to_row(self) -> dict[str, Any]:
        """A flat dict (for a DataFrame row)."""
        return {"mode": self.mode, "feeds": self.feeds, "messages": self.messages, "seconds": self.seconds,
                "bytes_up": self.bytes_up, "bytes_down": self.bytes_down, "bytes_total": self.bytes_total,
                "errors": self.errors}


async def measure_replication(origin: Store, replica: Store, feeds: Iterable[str], *, mode: str = "ebt",
                              server_key: SigningKey, client_key: SigningKey) -> Measurement:
    """Serve ``origin`` as ``server_key``, replicate ``feeds`` into ``replica`` as ``client_key`` through a relay.

    Args:
        origin: the store served (its folder receives the server's remote clocks).
        replica: the store filled (its folder receives the client's remote clocks).
        feeds: the feeds to replicate.
        mode: ``ebt`` or ``history``.
        server_key, client_key: the two identities; the same pair again is a reconnect (request skipping).
    """
    server = ReplicaServer(LiveStore(origin), server_key)
    listener = await server.start("127.0.0.1", 0)
    relay = CountingRelay("127.0.0.1", listener.sockets[0].getsockname()[1])
    port = await relay.start()
    address = MultiserverAddress("127.0.0.1", port, bytes(server_key.verify_key))
    options = ReplicateOptions(mode=mode, feeds=tuple(Want(feed, None, "listed") for feed in feeds))
    started = time.perf_counter()
    try:
        result = await replicate(address, LiveStore(replica), client_key, options)
    finally:
        seconds = time.perf_counter() - started
        await _settle(server)
        listener.close()
        for conn in list(server.sessions):
            await conn.close()
        await relay.close()
        await listener.wait_closed()
        if server.ebt is not None:
            server.ebt.close()
    return Measurement(result.mode, result.feeds, result.messages, seconds, relay.count.up, relay.count.down,
                       len(result.errors))


async def _settle(server: ReplicaServer) -> None:
    """Let the server see the client leave, so its EBT side persists the client's clock (request skipping)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while time.monotonic() < deadline and (server.sessions or (server.ebt is not None and server.ebt.state.peers)):
        await asyncio.sleep(0.01)


def measure_stores(origin: Store, replica: Store, feeds: Iterable[str], *, mode: str = "ebt",
                   server_key: SigningKey, client_key: SigningKey) -> Measurement:
    """:func:`measure_replication` for code outside an event loop (scripts, benchmarks).

    In Jupyter, where a loop is already running, ``await measure_replication(...)`` instead.
    """
    return asyncio.run(measure_replication(origin, replica, feeds, mode=mode, server_key=server_key,
                                           client_key=client_key))


def forget_clock(store_folder: str | Path, peer: SigningKey | str) -> None:
    """Erase what this store remembers of ``peer``'s EBT clock, so the next session with it starts from nothing."""
    peer_id = peer if isinstance(peer, str) else feed_id(bytes(peer.verify_key))
    clocks = ClockStore(store_folder)
    try:
        clocks.save(peer_id, {})
    finally:
        clocks.close()


def append_posts(store: Store, keypairs: Mapping[str, Keypair], per_feed: int, *, timestamp: float) -> list[Message]:
    """Publish ``per_feed`` new posts on each feed of ``keypairs`` (after its head in ``store``); returns them.

    ``timestamp`` is the claimed time of the first new post (the next ones 1 ms apart): a parameter, no clock.

    Raises:
        ValueError: ``store`` refused one of them (it would be a bug: the messages are signed in order).
    """
    made: list[Message] = []
    for n, (feed, keypair) in enumerate(sorted(keypairs.items())):
        head = store.head(feed)
        previous = store.get(head.id) if head else None
        for i in range(per_feed):
            previous = create_message(keypair, {"type": "post", "text": f"news {i + 1} from {feed[:8]}"},
                                      previous=previous, timestamp=timestamp + n * per_feed + i)
            made.append(previous)
    report = store.append(made)
    if report.errors:
        raise UsageError(f"append_posts: the store refused {len(report.errors)} new posts: {report.errors[0]}")
    return made
