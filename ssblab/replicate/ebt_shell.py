"""The asyncio shell around the pure EBT core (``ssblab.net.ebt``): ``ebt.replicate`` streams, both roles.

Strategy: one `EbtShell` per process holds the single `EbtState` for every peer. Incoming stream items become
events (a message value → ``MessageReceived``, any other object → ``NotesReceived``), a 1 s timer becomes ``Tick``,
and events that arrive within one loop turn are applied in one step (``step_all``); effects are carried out in
order: notes and messages go to the peer's outbound queue (so a range is written
before later single messages, as the core's contract asks), ``Append`` effects are parsed at once and collect
into batches that ``LiveStore.append`` validates and commits (group commit: a burst makes few big transactions,
since each costs an fsync), each answered by ``Appended`` or ``AppendFailed``; ``PersistClock`` writes the peer's
clock to `ClockStore` for request skipping next time.

Signature checks, most of the CPU a message costs, run ahead of the commit in worker threads of the loop's default
executor (`prove_signatures`: up to ``SIGNATURE_BATCH`` messages a call, ``CHECKERS`` calls at once, libsodium
without the GIL), so the event loop goes on decrypting and stepping the core on the other core meanwhile. A commit
takes the longest prefix of the pending appends whose checks are over, so appends reach the store in the core's
order; the workers only prove (a proof lets the validator skip the same check), and every verdict is the store's.

Invariants: a message reaches the store only through validation, and on the loop's thread (SQLite and the core
stay there; the worker sees only immutable messages); a feed whose message fails is blocked for that
peer by the core and reported as a `ReplicationError`; the client side ends when ``is_caught_up`` holds (or never,
in live mode), or within a tick of the connection closing; with a `Budget`, a message it refuses is not stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ssblab.core.encoding import is_plain
from ssblab.core.errors import InvalidMessage
from ssblab.core.message import Message, prove_signatures
from ssblab.net.aio import DuplexStream, RpcConnection
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
    step_all,
)
from ssblab.replicate.clocks import ClockStore
from ssblab.replicate.errors import ReplicationError
from ssblab.replicate.hub import LiveStore, load_value
from ssblab.replicate.limits import Budget
from ssblab.store.received import Received

__all__ = ["CHECKERS", "COMMIT_AT", "COMMIT_DELAY", "EBT_ARGS", "GROUP_COMMIT", "IDLE_POLL", "SIGNATURE_BATCH", "TICK",
           "UNCHECKED_MAX", "EbtClient", "EbtShell"]

TICK = 1.0
IDLE_POLL = 0.01  # seconds between checks whether a client session has caught up
GROUP_COMMIT = 0.05  # seconds between looks at what is ready to commit
COMMIT_AT = 2000  # ready messages that are committed at the next look, even while more arrive
COMMIT_DELAY = 0.25  # seconds at most between commits while messages keep arriving
CHECKERS = 2  # batches of signature checks in worker threads at once: one queued while one runs, both at the end
SIGNATURE_BATCH = 512  # messages per batch at most (about 40 ms of libsodium): the GIL changes hands once a batch
# Appends waiting for a worker at most: past it the validator checks them on the loop at commit, which slows the
# reading down, so a peer that sends faster than the workers check cannot make the queue grow without bound.
UNCHECKED_MAX = 8 * SIGNATURE_BATCH
EBT_ARGS = {"version": 3, "format": "classic"}
_END = object()


@dataclass(slots=True)
class _Pending:
    """One Append on its way to the store: the message parsed (or why it is none), whether the worker's
    signature check is over (``checked``) and proved the signature (``proven``), and whether the value is plain."""

    peer: str
    value: Any
    outcome: Message | InvalidMessage
    checked: bool
    proven: bool = False
    plain: bool | None = None


class EbtShell:
    """Carries out the EBT core's effects over live streams and the store."""

    def __init__(self, live: LiveStore, local_id: str, wanted: Iterable[str], clocks: ClockStore, *,
                 clock: Callable[[], float] = time.monotonic, budget: Budget | None = None) -> None:
        self.live, self.clocks, self._now, self.budget = live, clocks, clock, budget
        self.remote_clocks: dict[str, dict[str, int]] = {}  # each peer's clock as it left: what it offered
        heads = {feed: head.sequence for feed, head in live.store.heads().items()}
        self.state = EbtState.initial(heads, local_id=local_id)
        self.errors: list[ReplicationError] = []
        self._out: dict[str, asyncio.Queue[Any]] = {}
        self._appends: list[_Pending] = []  # in the core's order; committed from the front
        self._unchecked: deque[tuple[_Pending, Message]] = deque()  # appends whose signature check has not started
        self._checking = 0  # batches of signature checks in worker threads now
        self._offload = live.store.hmac_key is None  # proofs are of main-network signatures
        self._commit: asyncio.TimerHandle | None = None  # the next look at what is ready (`_flush`)
        self._arrived = False  # an Append came since the last look
        self._window = 0.0  # loop time of the last commit, or of the first Append after a quiet spell
        self._events: list[Event] = []  # events waiting for the end of the loop turn (`_later`)
        self.want(wanted)
        live.listeners.append(self._on_stored)

    def _on_stored(self, messages: list[Message]) -> None:
        """Whoever appended them (EBT, a history stream, a publish), peers hear of new messages of wanted feeds."""
        for msg in messages:
            if msg.author in self.state.wanted:
                self._later(Appended(msg.author, msg.sequence, msg.value, self._now()))

    def close(self) -> None:
        for pending, _ in self._unchecked:  # no new checks: a pending commit lets the validator check these itself
            pending.checked = True
        self._unchecked.clear()
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

    def offered(self, peer: str) -> dict[str, int]:
        """What ``peer`` told us it holds per feed (-1: it does not replicate the feed), now or when it left."""
        state = self.state.peers.get(peer)
        return dict(state.clock) if state is not None else self.remote_clocks.get(peer, {})

    def is_idle(self, peer: str) -> bool:
        """Nothing left to send ``peer`` or to store, and the core says the session with it is caught up."""
        out = self._out.get(peer)
        return not self._appends and not self._events and (out is None or out.empty()) \
            and is_caught_up(self.state, peer)

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
                self._later(MessageReceived(peer, item["author"], item["sequence"], item, self._now()))
            else:
                self._later(NotesReceived(peer, item, self._now()))
            # no yield here: items already buffered are read in this loop turn, so they form one append batch

    async def _tick(self, peer: str) -> None:
        while True:
            await asyncio.sleep(TICK)
            self._step(Tick(self._now()))

    def _step(self, event: Event) -> None:
        """Apply ``event`` now, after the events still waiting (order is kept)."""
        self._events.append(event)
        self._drain()

    def _later(self, event: Event) -> None:
        """Apply ``event`` at the end of this loop turn, in one step with the others that arrive meanwhile (a
        burst of messages read from the socket, or the Appended answers of one commit)."""
        if not self._events:
            asyncio.get_running_loop().call_soon(self._drain)
        self._events.append(event)

    def _drain(self) -> None:
        events, self._events = self._events, []
        if events:
            self.state, effects = step_all(self.state, events)
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
                    out.put_nowait(load_value(value))
            else:
                out.put_nowait(_END)
        elif isinstance(effect, Append):
            self._appends.append(self._pending(effect.peer, effect.message))
            self._arrived = True
            if self._commit is None:  # group commit: one transaction for many messages, not one each
                loop = asyncio.get_running_loop()
                self._window, self._commit = loop.time(), loop.call_later(GROUP_COMMIT, self._flush)
            self._check()
        elif isinstance(effect, PersistClock):
            self.remote_clocks[effect.peer] = dict(effect.clock)
            self.clocks.save(effect.peer, effect.clock)

    def _pending(self, peer: str, value: Any) -> _Pending:
        """Parse an appended value now, and queue its signature check for the workers."""
        plain = is_plain(value)  # once: the store's compact encoding needs the same walk
        try:
            msg = Message.from_value(value, plain=plain)
        except InvalidMessage as exc:
            return _Pending(peer, value, exc, checked=True)
        offload = self._offload and len(self._unchecked) < UNCHECKED_MAX
        pending = _Pending(peer, value, msg, checked=not offload, plain=plain)
        if offload:
            self._unchecked.append((pending, msg))
        return pending

    def _check(self) -> None:
        """Hand the next batch of signature checks to a worker thread, unless ``CHECKERS`` are busy already."""
        if self._checking >= CHECKERS or not self._unchecked:
            return
        batch = [self._unchecked.popleft() for _ in range(min(SIGNATURE_BATCH, len(self._unchecked)))]
        future = asyncio.get_running_loop().run_in_executor(None, prove_signatures, [msg for _, msg in batch])
        self._checking += 1
        future.add_done_callback(lambda done: self._checked([pending for pending, _ in batch], done))

    def _checked(self, batch: list[_Pending], done: asyncio.Future[list[bool]]) -> None:
        """A batch is back from the worker (a failed check proves nothing: the validator checks those itself)."""
        self._checking -= 1
        proofs = done.result() if not done.cancelled() and done.exception() is None else [False] * len(batch)
        for pending, proof in zip(batch, proofs, strict=True):
            pending.checked, pending.proven = True, proof
        self._check()
        if not (self._checking or self._arrived) and self._commit is not None:
            self._commit.cancel()  # the last checks of a burst that has ended: commit now, not at the next look
            self._flush()

    def _flush(self) -> None:
        """Every GROUP_COMMIT seconds while Appends wait: commit those whose signature checks are over once a burst
        pauses, COMMIT_AT of them are ready, or COMMIT_DELAY has passed (a commit costs an fsync, so a burst makes
        few big ones); validate and store them in one transaction and answer each one."""
        loop = asyncio.get_running_loop()
        ready = next((i for i, pending in enumerate(self._appends) if not pending.checked), len(self._appends))
        due = ready >= COMMIT_AT or not self._arrived or loop.time() - self._window >= COMMIT_DELAY
        self._arrived = False
        if not (ready and due):
            self._commit = loop.call_later(GROUP_COMMIT, self._flush)
            return
        batch, self._appends = self._appends[:ready], self._appends[ready:]
        self._window = loop.time()
        self._commit = loop.call_later(GROUP_COMMIT, self._flush) if self._appends else None
        taken: list[_Pending] = []
        for pending in batch:
            outcome = pending.outcome
            if isinstance(outcome, Message) and self.budget is not None and not self.budget.take(len(outcome.encoded)):
                break  # the run stops; what the budget refused is not stored
            taken.append(pending)
        report = self.live.append(Received("ebt", p.outcome, proven=p.proven, plain=p.plain)
                                  for p in taken if isinstance(p.outcome, Message))  # `_on_stored`: Appended
        errors = {(e.author, e.sequence): e for e in report.errors}
        for pending in taken:
            value, outcome = pending.value, pending.outcome
            author, seq = value.get("author"), value.get("sequence")
            if isinstance(outcome, Message) and (author, seq) not in errors and self.live.sequence(author) >= seq:
                continue
            error = outcome if isinstance(outcome, InvalidMessage) else errors.get((author, seq), "not stored")
            self.errors.append(ReplicationError(f"{author} from {pending.peer} (ebt): {error}", feed=author,
                                                code=getattr(error, "code", "ebt")))
            self._step(AppendFailed(pending.peer, author, str(error)))


class EbtClient:
    """Our side of the ``ebt.replicate`` stream we open to one remote, kept for a whole run: each round adds its
    feeds to the same session (`pull`), since a remote refuses a second stream from a peer it is still in
    session with."""

    def __init__(self, shell: EbtShell, conn: RpcConnection) -> None:
        self.shell, self.conn, self.peer = shell, conn, conn.remote_id
        self._tasks: list[asyncio.Task[None]] = []
        self._duplex: DuplexStream | None = None

    async def open(self) -> None:
        self._duplex = await self.conn.duplex("ebt.replicate", EBT_ARGS)
        out = self.shell._connect(self.peer, "client")
        self._tasks = [asyncio.create_task(self.shell._read(self.peer, self._duplex)),
                       asyncio.create_task(self.shell._tick(self.peer)), asyncio.create_task(self._send(out))]

    async def _send(self, out: asyncio.Queue[Any]) -> None:
        assert self._duplex is not None
        while (item := await out.get()) is not _END:
            await self._duplex.send(item)

    async def close(self) -> None:
        if self._duplex is not None:
            with contextlib.suppress(Exception):
                await self._duplex.end()
            await self.shell._disconnect(self.peer, self._tasks)
            self._duplex = None
        self.shell.close()

    async def pull(self, feeds: list[str], *, live: bool = False) -> tuple[list[str], list[ReplicationError]]:
        """Replicate ``feeds`` until caught up (or, ``live``, until the remote leaves); returns the feeds the
        remote served and this round's errors.

        A feed is served when the remote's clock says it replicates the feed and we hold that far (a remote
        declines the feeds outside its own replication set with -1, or by never naming them).

        Raises:
            RemoteCallError: the remote refused ``ebt.replicate`` (it has no EBT); nothing was replicated.
        """
        known = len(self.shell.errors)
        if self._duplex is None:
            await self.open()
        self.shell.want(feeds)
        closed = False
        try:
            await self._until_caught_up(live)
        except ConnectionError:
            closed = True
        errors = self.shell.errors[known:]
        failed = {error.feed for error in errors}
        offered = self.shell.offered(self.peer)
        served = [feed for feed in feeds if feed not in failed and offered.get(feed, -1) >= 0
                  and self.shell.live.sequence(feed) >= offered[feed]]
        if closed:
            done = set(served) | failed
            errors += [ReplicationError(f"{feed} from {self.peer} (ebt): connection closed", feed=feed,
                                        code="connection-closed") for feed in feeds if feed not in done]
        return served, errors

    async def _until_caught_up(self, live: bool) -> None:
        reader, sender = self._tasks[0], self._tasks[2]
        while True:
            if reader.done():
                reader.result()  # the remote ended the stream: raise its error (a refusal), if any
                return
            if sender.done():
                return  # the core ended the stream
            if self.conn.closed.is_set():
                raise ConnectionError("connection closed")
            if (not live and self.shell.is_idle(self.peer)) or (self.shell.budget and self.shell.budget.reason):
                return
            await asyncio.sleep(IDLE_POLL)
