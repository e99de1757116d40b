"""The asyncio shell around the pure EBT core (``ssblab.net.ebt``): ``ebt.replicate`` streams, both roles.

Strategy: one `EbtShell` per process holds the single `EbtState` for every peer. Incoming stream items become
events (a message value → ``MessageReceived``, any other object → ``NotesReceived``), a 1 s timer becomes ``Tick``,
and effects are carried out in order: notes and messages go to the peer's outbound queue (so a range is written
before later single messages, as the core's contract asks), ``Append`` effects collect into one batch that
``LiveStore.append`` validates and commits at the end of the loop turn, each answered by ``Appended`` or
``AppendFailed``; ``PersistClock`` writes the peer's clock to `ClockStore` for request skipping next time.

Invariants: a message reaches the store only through validation; a feed whose message fails is blocked for that
peer by the core and reported as a `ReplicationError`; the client side ends when ``is_caught_up`` holds (or never,
in live mode).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import Any

import orjson

from ssblab.core.errors import InvalidMessage
from ssblab.core.message import Message
from ssblab.net.aio import RpcConnection
from ssblab.net.ebt import (
    Append,
    Appended,
    AppendFailed,
    EbtState,
    Effect,
    EndStream,
    Event,
    MessageReceived,
    NotesReceived,
    PeerConnected,
    PeerDisconnected,
    PersistClock,
    Replicate,
    SendMessage,
    SendMessages,
    SendNotes,
    Tick,
    is_caught_up,
    is_message_value,
    step,
)
from ssblab.net.errors import RemoteCallError
from ssblab.replicate.client import ReplicationResult, pull_feeds
from ssblab.replicate.clocks import ClockStore
from ssblab.replicate.errors import ReplicationError
from ssblab.replicate.hub import LiveStore

TICK = 1.0
GROUP_COMMIT = 0.02  # seconds
EBT_ARGS = {"version": 3, "format": "classic"}
_END = object()


class EbtShell:
    """Carries out the EBT core's effects over live streams and the store."""

    def __init__(self, live: LiveStore, local_id: str, wanted: Iterable[str], clocks: ClockStore, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.live, self.clocks, self._now = live, clocks, clock
        heads = {feed: head.sequence for feed, head in live.store.heads().items()}
        self.state = EbtState.initial(heads, local_id=local_id)
        self.errors: list[ReplicationError] = []
        self._out: dict[str, asyncio.Queue[Any]] = {}
        self._appends: list[tuple[str, Any]] = []
        self.want(wanted)
        live.listeners.append(self._on_stored)

    def _on_stored(self, messages: list[Message]) -> None:
        """Whoever appended them (EBT, a history stream, a publish), peers hear of new messages of wanted feeds."""
        for msg in messages:
            if msg.author in self.state.wanted:
                self._step(Appended(msg.author, msg.sequence, msg.value, self._now()))

    def close(self) -> None:
        if self._on_stored in self.live.listeners:
            self.live.listeners.remove(self._on_stored)
        self.clocks.close()

    def want(self, feeds: Iterable[str]) -> None:
        for feed in feeds:
            self._step(Replicate(feed, True))

    # --- the two roles -------------------------------------------------------------------------------------

    async def serve(self, peer: str, incoming: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """Our side of an ``ebt.replicate`` the peer opened (we are the server: our notes go first)."""
        out = self._connect(peer, "server")
        tasks = [asyncio.create_task(self._read(peer, incoming)), asyncio.create_task(self._tick(peer))]
        try:
            while (item := await out.get()) is not _END:
                yield item
        finally:
            await self._disconnect(peer, tasks)

    async def replicate(self, conn: RpcConnection, *, live: bool = False) -> None:
        """Open ``ebt.replicate`` on ``conn`` (we are the client) and run it until caught up (or for ever).

        Raises:
            RemoteCallError: the peer refused the stream (e.g. it has no EBT): the caller falls back to history.
        """
        peer = conn.remote_id
        duplex = await conn.duplex("ebt.replicate", EBT_ARGS)
        out = self._connect(peer, "client")
        tasks = [asyncio.create_task(self._read(peer, duplex)), asyncio.create_task(self._tick(peer))]
        try:
            while True:
                if not live and is_caught_up(self.state, peer) and not self._appends and out.empty():
                    break
                try:
                    item = await asyncio.wait_for(out.get(), TICK)
                except TimeoutError:
                    if tasks[0].done():
                        tasks[0].result()  # the peer ended the stream: raise its error, if any
                        break
                    continue
                if item is _END:
                    break
                await duplex.send(item)
            await duplex.end()
        finally:
            await self._disconnect(peer, tasks)

    # --- plumbing ------------------------------------------------------------------------------------------

    def _connect(self, peer: str, role: str) -> asyncio.Queue[Any]:
        self._out[peer] = asyncio.Queue()
        self._step(PeerConnected(peer, self.clocks.load(peer), self._now(), role))  # type: ignore[arg-type]
        return self._out[peer]

    async def _disconnect(self, peer: str, tasks: list[asyncio.Task[None]]) -> None:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._step(PeerDisconnected(peer, self._now()))
        self._out.pop(peer, None)

    async def _read(self, peer: str, incoming: AsyncIterable[Any]) -> None:
        async for item in incoming:
            if is_message_value(item):
                self._step(MessageReceived(peer, item["author"], item["sequence"], item, self._now()))
            else:
                self._step(NotesReceived(peer, item, self._now()))
            # no yield here: items already buffered are read in this loop turn, so they form one append batch

    async def _tick(self, peer: str) -> None:
        while True:
            await asyncio.sleep(TICK)
            self._step(Tick(self._now()))

    def _step(self, event: Event) -> None:
        self.state, effects = step(self.state, event)
        for effect in effects:
            self._apply(effect)

    def _apply(self, effect: Effect) -> None:
        if isinstance(effect, SendNotes | SendMessage | SendMessages | EndStream):
            out = self._out.get(effect.peer)
            if out is None:
                return
            if isinstance(effect, SendNotes):
                out.put_nowait(effect.notes)
            elif isinstance(effect, SendMessage):
                out.put_nowait(effect.message)
            elif isinstance(effect, SendMessages):
                count = effect.to_sequence - effect.from_sequence + 1
                for value, *_ in self.live.history(effect.author, effect.from_sequence - 1, count):
                    out.put_nowait(orjson.loads(value))
            else:
                out.put_nowait(_END)
        elif isinstance(effect, Append):
            if not self._appends:  # group commit: one transaction per GROUP_COMMIT window, not per message
                asyncio.get_running_loop().call_later(GROUP_COMMIT, self._flush)
            self._appends.append((effect.peer, effect.message))
        elif isinstance(effect, PersistClock):
            self.clocks.save(effect.peer, effect.clock)

    def _flush(self) -> None:
        """Validate and store every pending Append in one transaction; answer each one."""
        batch, self._appends = self._appends, []
        parsed: list[tuple[str, Any, Message | InvalidMessage]] = []
        for peer, value in batch:
            try:
                parsed.append((peer, value, Message.from_value(value)))
            except InvalidMessage as exc:
                parsed.append((peer, value, exc))
        report = self.live.append(m for _, _, m in parsed if isinstance(m, Message))  # `_on_stored`: Appended
        errors = {(e.author, e.sequence): e for e in report.errors}
        for peer, value, msg in parsed:
            author, seq = value.get("author"), value.get("sequence")
            if isinstance(msg, Message) and (author, seq) not in errors and self.live.sequence(author) >= seq:
                continue
            error = msg if isinstance(msg, InvalidMessage) else errors.get((author, seq), "not stored")
            self.errors.append(ReplicationError(f"{author} from {peer} (ebt): {error}", feed=author,
                                                code=getattr(error, "code", "ebt")))
            self._step(AppendFailed(peer, author, str(error)))


async def pull_ebt(conn: RpcConnection, live: LiveStore, me: str, feeds: list[str], result: ReplicationResult, *,
                   stall: float, live_mode: bool = False, on_stored: Callable[[int], None] | None = None) -> int:
    """The runner's EBT mode: replicate ``feeds`` by EBT, or by createHistoryStream when the peer refuses EBT."""
    before = live.store.count()
    shell = EbtShell(live, me, feeds, ClockStore(live.store.path))
    try:
        await shell.replicate(conn, live=live_mode)
    except RemoteCallError as exc:
        result.mode = f"history (peer refused ebt: {exc})"
        stored, errors = await pull_feeds(conn, live, feeds, live_mode=live_mode, stall=stall, on_stored=on_stored)
        result.errors.extend(errors)
        return stored
    finally:
        shell.close()
    result.errors.extend(shell.errors)
    stored = live.store.count() - before
    if on_stored:
        on_stored(stored)
    return stored
