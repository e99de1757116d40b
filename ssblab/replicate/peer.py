"""The replication server: muxrpc handlers over a `LiveStore`, behind the `policy` decision table.

Strategy: every handler is wrapped once by `ReplicaServer._guard`, which looks up the caller's per-connection
session (its role, decided right after the handshake; its token bucket; its open calls) and either lets the call
through or fails it with the JS "not in list of allowed methods" wording. Calls to methods we do not serve take a
token from a bucket of their own (`on_rejected`); a peer that runs out on those is dropped. Blocked peers are
closed in ``on_connection`` before any of their calls is dispatched; when the server is full, the seat of the peer
idle the longest goes to the newcomer (`policy.seat_for`), and a peer with no call open for ``idle_timeout`` is
closed. What all peers make the server hold is capped by one `BufferBudget`. A handler's unexpected failure
reaches the caller as "internal error", never as its own text (which may be SQLite's).

Invariants: a handler never holds a SQLite cursor across an ``await`` (`LiveStore` reads in pages); a live history
stream follows appends made by any writer of the same `LiveStore`; every call counted in a session is uncounted
when it ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from nacl.signing import SigningKey

from ssblab.core.errors import InvalidRef, SsbError
from ssblab.core.refs import is_blob_id, is_feed_id
from ssblab.core.strict_json import MAX_SAFE_INTEGER
from ssblab.net.aio import Handler, RpcConnection, as_signing_key, default_handlers, feed_id, serve
from ssblab.net.budget import BufferBudget
from ssblab.net.muxrpc import CallRejected, CallType
from ssblab.net.shs import MAIN_NETWORK_KEY
from ssblab.replicate.clocks import ClockStore
from ssblab.replicate.ebt_shell import EbtShell
from ssblab.replicate.errors import PermissionDenied, ReplicationError
from ssblab.replicate.hub import LiveStore, wire_record
from ssblab.replicate.policy import (
    Bucket,
    Permission,
    Policy,
    Seat,
    is_allowed,
    may_read_feed,
    role_of,
    seat_for,
    take,
)

__all__ = ["ANNOUNCE_DELAY", "BLOB_CHUNK", "BLOB_MAX", "HistoryQuery", "ReplicaServer", "Session"]

BLOB_CHUNK = 65536
BLOB_MAX = 5 * 1024 * 1024  # ssb-blobs' default max
ANNOUNCE_DELAY = 2.0


@dataclass
class Session:
    """What the server knows about one connected peer: ``calls`` of its own open (``streams`` of them streams),
    idle since ``last_active`` when none is."""

    peer: str
    role: Permission
    trusted: bool = False
    last_active: float = 0.0
    bucket: Bucket | None = None
    rejected: Bucket | None = None  # calls to methods we do not serve
    calls: int = 0
    streams: int = 0
    called: asyncio.Event = field(default_factory=asyncio.Event)
    haves: asyncio.Queue[dict[str, int]] = field(default_factory=asyncio.Queue)


@dataclass(frozen=True)
class HistoryQuery:
    """createHistoryStream's options: ``seq`` is the first sequence sent (inclusive, as ssb-db reads it)."""

    id: str
    seq: int = 1
    limit: int | None = None
    live: bool = False
    old: bool = True
    keys: bool = True

    @classmethod
    def parse(cls, opts: Any, rest: tuple[Any, ...]) -> HistoryQuery:
        if isinstance(opts, str):  # the legacy positional form (id, seq, live)
            opts = {"id": opts, "seq": rest[0] if rest else 0, "live": bool(rest[1:2] and rest[1])}
        if not isinstance(opts, dict) or not is_feed_id(opts.get("id")):
            raise ReplicationError(f"createHistoryStream: 'id' must be a feed id, got {opts!r:.120}", code="args")
        seq, limit = opts.get("seq", opts.get("sequence", 1)), opts.get("limit")
        if not _is_count(seq, signed=True) or (limit is not None and not _is_count(limit)):
            raise ReplicationError(f"createHistoryStream: seq and limit are integers below 2**53, got seq "
                                   f"{seq!r:.40} and limit {limit!r:.40}", code="args")
        return cls(opts["id"], max(seq, 1), limit, opts.get("live") is True, opts.get("old") is not False,
                   opts.get("keys") is not False)


def _is_count(value: Any, signed: bool = False) -> TypeGuard[int]:
    """An integer JS can hold exactly (SQLite's 64-bit integers hold them too)."""
    low = -MAX_SAFE_INTEGER if signed else -1
    return type(value) is int and low < value < MAX_SAFE_INTEGER


class ReplicaServer:
    """Serves a store to peers: history, blobs, ping; the server's own key may call everything."""

    def __init__(self, live: LiveStore, signing_key: SigningKey | bytes, policy: Policy | None = None, *,
                 clock: Callable[[], float] = time.monotonic, ebt: bool = True,
                 extra: dict[str, Handler] | None = None) -> None:
        self.live, self.signing_key = live, as_signing_key(signing_key)
        self.id, self.policy, self._clock = feed_id(bytes(self.signing_key.verify_key)), policy or Policy(), clock
        self.sessions: dict[RpcConnection, Session] = {}
        self.wants: dict[str, int] = {}
        self._extra = extra or {}
        self.ebt = EbtShell(live, self.id, live.store.heads(), ClockStore(live.store.path)) if ebt else None
        self.budget: BufferBudget[RpcConnection] = BufferBudget(self.policy.max_buffered)
        self._tasks: set[asyncio.Task[None]] = set()

    def handlers(self) -> dict[str, Handler]:
        own = {
            **default_handlers(self.signing_key),
            "createHistoryStream": Handler(CallType.SOURCE, self._history),
            "createLogStream": Handler(CallType.SOURCE, self._log),
            "blobs.has": Handler(CallType.ASYNC, self._blobs_has),
            "blobs.size": Handler(CallType.ASYNC, self._blobs_size),
            "blobs.get": Handler(CallType.SOURCE, self._blobs_get),
            "blobs.createWants": Handler(CallType.SOURCE, self._blobs_wants),
            **({"ebt.replicate": Handler(CallType.DUPLEX, self._ebt)} if self.ebt else {}),
            **self._extra,
        }
        return {name: self._guard(name, handler) for name, handler in own.items()}

    async def start(self, host: str = "127.0.0.1", port: int = 0, network_key: bytes = MAIN_NETWORK_KEY,
                    *, timeout: float = 10.0) -> asyncio.Server:
        return await serve(self.signing_key, host, port, network_key, handlers=self.handlers(), timeout=timeout,
                           on_connection=self.on_connection, budget=self.budget, on_rejected=self.on_rejected)

    async def on_connection(self, conn: RpcConnection) -> None:
        """Refuse blocked peers, and newcomers when every seat is busy; else seat them (maybe in an idle peer's
        seat) and open their session."""
        stances = self.live.contacts(self.id)
        role = role_of(conn.remote_id, self.id, {contact for contact, stance in stances.items() if stance == "block"})
        trusted = role is Permission.MASTER or stances.get(conn.remote_id) == "follow"
        seats = [Seat(c, s.trusted, s.calls > 0, s.last_active) for c, s in self.sessions.items()]
        admitted, evicted = seat_for(self.policy, trusted, seats) if role is not Permission.BLOCKED else (False, None)
        if not admitted:
            await conn.close()
            return
        if isinstance(evicted, RpcConnection):
            self.sessions.pop(evicted, None)
            evicted.abort(ReplicationError("dropped: idle while the server was full", code="idle"))
        session = self.sessions[conn] = Session(conn.remote_id, role, trusted, self._clock())
        for job in (self._forget(conn), self._announce(conn), self._answer_wants(conn), self._reap(conn, session)):
            task = asyncio.create_task(job)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def on_rejected(self, conn: RpcConnection, call: CallRejected) -> None:
        """A call to a method we do not serve (answered already) costs a token; a peer out of tokens is dropped."""
        session = self._session(conn)
        session.rejected, ok = take(session.rejected, self._clock(), self.policy, self.policy.rejected_burst)
        if not ok:
            conn.abort(ReplicationError(f"dropped: over the rate limit of {self.policy.rate}/s with calls to "
                                        f"methods not served ({'.'.join(call.name)[:60]})", code="rate-limit"))

    async def _forget(self, conn: RpcConnection) -> None:
        await conn.wait_closed()
        self.sessions.pop(conn, None)

    async def _reap(self, conn: RpcConnection, session: Session) -> None:
        """Close the connection once its peer has had no call open for ``idle_timeout`` seconds."""
        timeout = self.policy.idle_timeout
        while True:
            idle_for = self._clock() - session.last_active
            if session.calls == 0 and idle_for >= timeout:
                try:
                    await asyncio.wait_for(conn.close(), ANNOUNCE_DELAY)  # goodbye, unless the peer reads nothing
                except TimeoutError:
                    conn.abort(ReplicationError(f"closed: no call for {timeout} s", code="idle"))
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(conn.wait_closed(), timeout - idle_for if session.calls == 0 else timeout)
                return

    async def _announce(self, conn: RpcConnection) -> None:
        """Ask the peer for one message of its own feed and drop it: JS ssb-replicate (legacy) starts pulling
        the feeds it wants from us only once we have called createHistoryStream on it. We wait for the peer's
        first call (or ``ANNOUNCE_DELAY``): a call that arrives before JS has set up its listener is missed."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._session(conn).called.wait(), ANNOUNCE_DELAY)
        query = {"id": conn.remote_id, "seq": 1, "limit": 1, "keys": False}
        with contextlib.suppress(Exception):
            async for _ in conn.source("createHistoryStream", query):
                pass

    async def _answer_wants(self, conn: RpcConnection) -> None:
        """ssb-blobs: read the peer's wants (``{id: -hops}``) from its createWants and answer those we hold with
        ``{id: size}`` on ours, so it comes for them with blobs.get."""
        session = self._session(conn)
        with contextlib.suppress(TimeoutError):  # as in _announce: after the peer's listeners are set up
            await asyncio.wait_for(session.called.wait(), ANNOUNCE_DELAY)
        with contextlib.suppress(Exception):
            async for wants in conn.source("blobs.createWants"):
                if isinstance(wants, dict):
                    haves = {ref: size for ref, hops in wants.items()
                             if isinstance(hops, int) and hops < 0 and is_blob_id(ref)
                             and (size := self.live.store.blobs.size(ref)) is not None}
                    if haves:
                        session.haves.put_nowait(haves)

    # --- the gate ------------------------------------------------------------------------------------------

    def _session(self, conn: RpcConnection) -> Session:
        session = self.sessions.get(conn)
        return session if session is not None else Session(conn.remote_id, Permission.BLOCKED)

    def _admit(self, conn: RpcConnection, name: str, stream: bool) -> Session:
        session = self._session(conn)
        session.called.set()
        session.last_active = self._clock()
        if not is_allowed(session.role, name):
            raise PermissionDenied(name)
        session.bucket, ok = take(session.bucket, self._clock(), self.policy)
        if not ok:
            raise ReplicationError(f"{name}: rate limit of {self.policy.rate}/s exceeded", code="rate-limit")
        if stream and session.streams >= self.policy.max_streams:
            raise ReplicationError(f"{name}: at most {self.policy.max_streams} open streams", code="stream-limit")
        session.streams += stream
        session.calls += 1
        return session

    def _done(self, session: Session, stream: bool) -> None:
        session.streams -= stream
        session.calls -= 1
        session.last_active = self._clock()

    def _guard(self, name: str, handler: Handler) -> Handler:
        inner = handler.func
        if handler.call_type is CallType.ASYNC:
            async def call(conn: RpcConnection, *args: Any) -> Any:
                session = self._admit(conn, name, stream=False)
                try:
                    with _internal_errors(name):
                        return await inner(conn, *args)
                finally:
                    self._done(session, stream=False)
            return Handler(handler.call_type, call)

        async def stream(conn: RpcConnection, *args: Any) -> AsyncIterator[Any]:
            session = self._admit(conn, name, stream=True)
            try:
                with _internal_errors(name):
                    async for item in inner(conn, *args):
                        yield item
            finally:
                self._done(session, stream=True)
        return Handler(handler.call_type, stream)

    # --- history -------------------------------------------------------------------------------------------

    async def _history(self, conn: RpcConnection, opts: Any = None, *rest: Any) -> AsyncIterator[Any]:
        query = HistoryQuery.parse(opts, rest)
        session = self._session(conn)
        followed = {c for c, s in self.live.contacts(query.id).items() if s == "follow"} if self.policy.private \
            else set()
        if not may_read_feed(self.policy, session.peer, session.role, query.id, followed):
            raise PermissionDenied("createHistoryStream", f"{query.id} is private to the feeds its author follows")
        since = query.seq - 1 if query.old else self.live.sequence(query.id)
        left = query.limit
        while left is None or left > 0:
            for value, received, sequence, msg_id in self.live.history(query.id, since, left):
                yield wire_record(value, received, msg_id, query.keys)
                since, left = sequence, None if left is None else left - 1
            if not query.live:
                return
            await self.live.wait_beyond(query.id, since)

    async def _log(self, conn: RpcConnection, opts: Any = None) -> AsyncIterator[Any]:
        """Master only: the whole log in local order (``keys`` as in createHistoryStream; not live)."""
        keys = not (isinstance(opts, dict) and opts.get("keys") is False)
        after = 0
        while rows := self.live.log_page(after):
            for seq, value, received, msg_id in rows:
                yield wire_record(value, received, msg_id, keys)
                after = seq

    def _ebt(self, conn: RpcConnection, incoming: AsyncIterator[Any], opts: Any = None) -> AsyncIterator[Any]:
        if not isinstance(opts, dict) or opts.get("version") != 3:
            raise ReplicationError(f"ebt.replicate: only version 3 is served, got {opts!r:.80}", code="args")
        assert self.ebt is not None
        return self.ebt.serve(conn.remote_id, incoming)

    # --- blobs ---------------------------------------------------------------------------------------------

    async def _blobs_has(self, conn: RpcConnection, ids: Any) -> Any:
        return _per_blob(ids, self.live.store.blobs.has)

    async def _blobs_size(self, conn: RpcConnection, ids: Any) -> Any:
        return _per_blob(ids, self.live.store.blobs.size)

    async def _blobs_get(self, conn: RpcConnection, arg: Any) -> AsyncIterator[bytes]:
        ref = arg.get("key", arg.get("id")) if isinstance(arg, dict) else arg
        limit = arg.get("max", BLOB_MAX) if isinstance(arg, dict) else BLOB_MAX
        if not isinstance(ref, str) or not is_blob_id(ref):
            raise ReplicationError(f"blobs.get: not a blob id: {ref!r:.80}", code="args")
        data = self.live.store.blobs.get(ref)
        if data is None:
            raise ReplicationError(f"could not get blob {ref}", code="blob-missing")
        if isinstance(limit, int) and len(data) > limit:
            raise ReplicationError(f"blob {ref} is {len(data)} bytes, over the max {limit}", code="blob-size")
        for start in range(0, len(data), BLOB_CHUNK):
            yield data[start:start + BLOB_CHUNK]

    async def _blobs_wants(self, conn: RpcConnection, *args: Any) -> AsyncIterator[dict[str, int]]:
        """Our wants as ``{id: -1}`` (ssb-blobs' first message), then ``{id: size}`` for the peer's wants we hold."""
        yield dict(self.wants)
        session = self._session(conn)
        while True:
            yield await session.haves.get()


@contextlib.contextmanager
def _internal_errors(name: str) -> Iterator[None]:
    """A handler's own errors (`SsbError`) reach the caller as they are; anything else is a bug or a damaged store,
    and its text (SQLite's, say) stays here."""
    try:
        yield
    except SsbError:
        raise
    except Exception as exc:
        raise ReplicationError(f"{name}: internal error ({type(exc).__name__})", code="internal") from exc


def _per_blob(ids: Any, probe: Callable[[str], Any]) -> Any:
    """ssb-blobs answers a single id with one value and a list with a list."""
    many = ids if isinstance(ids, list) else [ids]
    try:
        answers = [probe(ref) for ref in many]
    except InvalidRef as exc:
        raise ReplicationError(f"blobs: {exc}", code="args") from exc
    return answers if isinstance(ids, list) else answers[0]
