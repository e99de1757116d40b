"""asyncio shell: TCP + shs + box-stream + muxrpc, built from the pure machines of ``ssblab.net``.

Strategy: this module owns every socket, task, clock and random ephemeral key; the protocol decisions stay
in the cores. One reader task per connection decrypts bytes, feeds muxrpc and turns its events into future
results, stream queues and handler tasks; every write drains the machines' outgoing bytes through the
box-stream encoder.

Invariants: each wait on the peer is bounded (``timeout`` for connect and handshake, optional per call), so
a silent peer fails with :class:`HandshakeError` or :class:`TimeoutError` instead of hanging; when the
connection ends, every pending call and stream fails with :class:`ConnectionError`. With a `BufferBudget`, the
bytes a connection holds for its peer (a partly received packet, stream items its handlers have not taken) are
reported to it after every read, and the connection it names is aborted; an ended connection holds nothing.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from nacl.public import PrivateKey
from nacl.signing import SigningKey

from ssblab.net.address import MultiserverAddress, parse_multiserver
from ssblab.net.boxstream import BoxStreamDecoder, BoxStreamEncoder, BoxStreamGoodbye
from ssblab.net.budget import BufferBudget
from ssblab.net.errors import BudgetExceeded, HandshakeError, LocalProtocolError, NetProtocolError
from ssblab.net.muxrpc import (
    CallFailed,
    CallRejected,
    CallResponse,
    CallType,
    ConnectionClosed,
    IncomingCall,
    MuxRpcConnection,
    MuxRpcEvent,
    StreamData,
    StreamEnded,
)
from ssblab.net.shs import MAIN_NETWORK_KEY, ClientHandshake, HandshakeComplete, ServerHandshake

__all__ = [
    "DEFAULT_TIMEOUT",
    "DuplexStream",
    "Handler",
    "OnRejected",
    "RpcConnection",
    "as_signing_key",
    "connect",
    "default_handlers",
    "feed_id",
    "serve",
]

DEFAULT_TIMEOUT = 10.0
_READ_SIZE = 65536
_END = object()


@dataclass(frozen=True)
class Handler:
    """A method we serve. ``func(conn, *args)`` for async and source; ``func(conn, incoming, *args)`` for sink
    and duplex, where ``incoming`` iterates the peer's items. Async returns a value, source/duplex return an
    async iterator, sink returns None."""

    call_type: CallType
    func: Callable[..., Any]


def feed_id(public_key: bytes) -> str:
    return f"@{base64.b64encode(public_key).decode()}.ed25519"


def default_handlers(signing_key: SigningKey) -> dict[str, Handler]:
    """``whoami`` and ``gossip.ping``, the methods every SSB peer answers."""

    async def whoami(conn: RpcConnection) -> dict[str, str]:
        return {"id": feed_id(bytes(signing_key.verify_key))}

    async def ping(conn: RpcConnection, incoming: AsyncIterator[Any], *args: Any) -> AsyncIterator[int]:
        async for _ in incoming:  # pull-ping: answer each of the peer's timestamps with ours
            yield int(time.time() * 1000)

    return {"whoami": Handler(CallType.ASYNC, whoami), "gossip.ping": Handler(CallType.DUPLEX, ping)}


class _Inbox:
    """The items the peer sent on one call, not yet taken, with the bytes they arrived as (budgeted)."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[tuple[Any, int]] = asyncio.Queue()
        self.held = 0

    def put(self, item: Any, size: int = 0) -> None:
        self.held += size
        self._queue.put_nowait((item, size))

    async def items(self) -> AsyncIterator[Any]:
        """Until the end; an exception item (the stream failed) is raised."""
        while True:
            item, size = await self._queue.get()
            self.held -= size
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item


OnRejected = Callable[["RpcConnection", CallRejected], None]


class RpcConnection:
    """A live muxrpc connection; created by :func:`connect` and :func:`serve`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, done: HandshakeComplete,
                 handlers: Mapping[str, Handler], *, budget: BufferBudget[RpcConnection] | None = None,
                 on_rejected: OnRejected | None = None) -> None:
        """``budget`` counts what this connection holds for its peer; ``on_rejected`` hears of each call to a
        method we do not serve (already answered with the JS error)."""
        keys = done.result.keys
        self.remote_public_key = done.result.remote_public_key
        self.remote_id = feed_id(self.remote_public_key)
        self._reader, self._writer = reader, writer
        self._box_in = BoxStreamDecoder(keys.decrypt_key, keys.decrypt_nonce)
        self._box_out = BoxStreamEncoder(keys.encrypt_key, keys.encrypt_nonce)
        self._handlers = dict(handlers)
        self._rpc = MuxRpcConnection({name: h.call_type for name, h in self._handlers.items()})
        self._futures: dict[int, asyncio.Future[Any]] = {}
        self._queues: dict[int, _Inbox] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._budget, self._on_rejected = budget, on_rejected
        self._aborted: BaseException | None = None
        self._box_in.receive_data(done.trailing)
        self._reader_task = asyncio.create_task(self._read_loop())
        self.closed = asyncio.Event()

    async def call_async(self, name: str | Sequence[str], *args: Any, timeout: float | None = None) -> Any:
        """Call an async (or sync) method and wait for its answer; RemoteCallError if it fails."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        request = self._rpc.call(name, args, CallType.ASYNC)
        self._futures[request] = future
        await self._flush()
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._futures.pop(request, None)

    async def source(self, name: str | Sequence[str], *args: Any) -> AsyncIterator[Any]:
        """Call a source method; iterate its items. Leaving the loop early aborts the stream."""
        request = self._rpc.call(name, args, CallType.SOURCE)
        inbox = self._queues[request] = _Inbox()
        await self._flush()
        try:
            async for item in inbox.items():
                yield item
        finally:
            self._queues.pop(request, None)
            if not self._rpc.closed and not self._rpc.is_ended(request):
                self._rpc.end(request)
                await self._flush()

    async def duplex(self, name: str | Sequence[str], *args: Any) -> DuplexStream:
        """Call a duplex method (e.g. ``ebt.replicate``); send with the stream, iterate it to receive."""
        request = self._rpc.call(name, args, CallType.DUPLEX)
        inbox = self._queues[request] = _Inbox()
        await self._flush()
        return DuplexStream(self, request, inbox)

    async def close(self) -> None:
        """Send both goodbyes, close the socket and fail whatever is still pending."""
        if not self._rpc.closed and not self._writer.is_closing():
            self._rpc.close()
            with contextlib.suppress(ConnectionError, LocalProtocolError):
                await self._flush()
                self._writer.write(self._box_out.goodbye())
                await self._writer.drain()
        self._reader_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader_task
        await self._shutdown(ConnectionError("connection closed locally"))

    async def wait_closed(self) -> None:
        await self.closed.wait()

    def abort(self, reason: BaseException) -> None:
        """Drop the connection at once, without goodbye (a peer over a limit); pending calls fail with ``reason``.
        What it held stops counting in the budget now."""
        self._aborted = reason
        if self._budget is not None:
            self._budget.release(self)
        self._writer.transport.abort()

    @property
    def held(self) -> int:
        """Bytes held for the peer: a partly received packet and the stream items not yet taken."""
        return self._rpc.buffered + sum(inbox.held for inbox in self._queues.values())

    # --- internals -----------------------------------------------------------------------------------------

    async def _flush(self) -> None:
        data = self._rpc.data_to_send()
        if data and not self._writer.is_closing():
            self._writer.write(self._box_out.encode(data))
            await self._writer.drain()

    async def _read_loop(self) -> None:
        reason: BaseException = ConnectionError("connection closed by peer")
        try:
            while self._aborted is None and (data := await self._reader.read(_READ_SIZE)):
                self._box_in.receive_data(data)
                if not await self._pump():
                    break
                self._account()
        except Exception as exc:  # the shell boundary: any failure ends the connection, never a hang
            reason = exc
        await self._shutdown(self._aborted or reason)

    def _account(self) -> None:
        """Report what we hold to the budget; drop the connections it names (the biggest holders) until the total
        is within it again."""
        if self._budget is None or self._aborted is not None:
            return
        victim = self._budget.hold(self, self.held)
        while victim is not None:
            victim.abort(BudgetExceeded(victim.held, self._budget.limit))
            victim = self._budget.over()

    async def _pump(self) -> bool:
        """Move decrypted bytes into muxrpc and act on its events; False once the peer said goodbye."""
        while (chunk := self._box_in.next_event()) is not None:
            if isinstance(chunk, BoxStreamGoodbye):
                return False
            self._rpc.receive_data(chunk)
        while (event := self._rpc.next_event()) is not None:
            if isinstance(event, ConnectionClosed):
                return False
            self._dispatch(event)
        await self._flush()
        return True

    def _dispatch(self, event: MuxRpcEvent) -> None:
        if isinstance(event, CallResponse | CallFailed):
            future = self._futures.get(event.request)
            if future is not None and not future.done():
                if isinstance(event, CallFailed):
                    future.set_exception(event.error.exception())
                else:
                    _settle(future, event.value)
        elif isinstance(event, StreamData | StreamEnded):
            inbox = self._queues.get(event.request)
            if inbox is not None:
                inbox.put(_stream_item(event), len(event.body) if isinstance(event, StreamData) else 0)
        elif isinstance(event, IncomingCall):
            if event.call_type is not CallType.ASYNC:  # now, so items in the same batch are not lost
                self._queues[event.request] = _Inbox()
            task = asyncio.create_task(self._serve_call(event))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif isinstance(event, CallRejected) and self._on_rejected is not None:
            self._on_rejected(self, event)

    async def _serve_call(self, call: IncomingCall) -> None:
        handler = self._handlers[".".join(call.name)]
        try:
            if call.call_type is CallType.ASYNC:
                self._rpc.respond(call.request, await handler.func(self, *call.args))
            else:
                await self._serve_stream(call, handler)
        except Exception as exc:  # the handler's failure goes to the caller, in the JS error shape
            if call.call_type is CallType.ASYNC:
                self._rpc.respond_error(call.request, str(exc) or type(exc).__name__)
            elif not self._rpc.is_ended(call.request):
                self._rpc.end(call.request, str(exc) or type(exc).__name__)
        with contextlib.suppress(ConnectionError, LocalProtocolError):
            await self._flush()

    async def _serve_stream(self, call: IncomingCall, handler: Handler) -> None:
        inbox = self._queues[call.request]
        try:
            if call.call_type is CallType.SOURCE:
                outgoing = handler.func(self, *call.args)
            else:
                outgoing = handler.func(self, inbox.items(), *call.args)
            if call.call_type is CallType.SINK:
                await outgoing
            else:
                await self._send_all(call.request, outgoing)
            if not self._rpc.is_ended(call.request):
                self._rpc.end(call.request)
        finally:
            self._queues.pop(call.request, None)

    async def _send_all(self, request: int, items: AsyncIterator[Any]) -> None:
        async for item in items:
            if self._rpc.is_ended(request):
                break  # the caller aborted the stream
            self._rpc.send(request, item)
            await self._flush()
            await asyncio.sleep(0)  # let the reader see an abort between items of a fast source

    async def _shutdown(self, reason: BaseException) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        for future in self._futures.values():
            if not future.done():
                error = reason if isinstance(reason, ConnectionError) else ConnectionError(reason)
                future.set_exception(error)
        for inbox in self._queues.values():
            inbox.put(ConnectionError(f"stream interrupted: {reason}"))
        for task in list(self._tasks):
            task.cancel()
        if self._budget is not None:
            self._budget.release(self)
        self._rpc.discard()
        self._writer.close()


class DuplexStream:
    """Both directions of one duplex call made with :meth:`RpcConnection.duplex`."""

    def __init__(self, conn: RpcConnection, request: int, inbox: _Inbox) -> None:
        self._conn, self.request, self._inbox = conn, request, inbox

    async def send(self, value: Any) -> None:
        """Write one item; LocalProtocolError once either side has ended the stream."""
        self._conn._rpc.send(self.request, value)
        await self._conn._flush()

    async def end(self, error: str | None = None) -> None:
        """End our side (normally or with an error); the peer answers with its end."""
        if not self._conn._rpc.closed and not self._conn._rpc.is_ended(self.request):
            self._conn._rpc.end(self.request, error)
            await self._conn._flush()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._inbox.items()


def _settle(future: asyncio.Future[Any], value: Callable[[], Any]) -> None:
    try:
        future.set_result(value())
    except NetProtocolError as exc:
        future.set_exception(exc)


def _stream_item(event: StreamData | StreamEnded) -> Any:
    if isinstance(event, StreamEnded):
        return _END if event.error is None else event.error.exception()
    try:
        return event.value()
    except NetProtocolError as exc:
        return exc


async def _handshake(machine: ClientHandshake | ServerHandshake, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter, timeout: float) -> HandshakeComplete:
    """Run a handshake machine over a socket; a silent peer is a HandshakeError naming the awaited step."""
    async def run() -> HandshakeComplete:
        while True:
            done = machine.next_event()
            if outgoing := machine.data_to_send():
                writer.write(outgoing)
                await writer.drain()
            if done is not None:
                return done
            data = await reader.read(_READ_SIZE)
            if not data:
                raise HandshakeError(machine.state.value.split()[-1], "peer closed the connection")
            machine.receive_data(data)

    try:
        return await asyncio.wait_for(run(), timeout)
    except TimeoutError:
        raise HandshakeError(machine.state.value.split()[-1], f"no answer within {timeout} s") from None
    except ConnectionError as exc:
        raise HandshakeError(machine.state.value.split()[-1], f"connection failed: {exc}") from exc


def as_signing_key(key: SigningKey | bytes) -> SigningKey:
    """Accept a pynacl SigningKey or its 32-byte seed, so callers need not share a keypair class."""
    return key if isinstance(key, SigningKey) else SigningKey(bytes(key))


@asynccontextmanager
async def connect(address: str | MultiserverAddress, signing_key: SigningKey | bytes,
                  network_key: bytes = MAIN_NETWORK_KEY, *, timeout: float = DEFAULT_TIMEOUT,
                  handlers: Mapping[str, Handler] | None = None) -> AsyncIterator[RpcConnection]:
    """Dial ``net:HOST:PORT~shs:KEY``, shake hands, and yield the muxrpc connection.

    Examples:
        async with connect(address, SigningKey.generate()) as rpc:
            me = await rpc.call_async("whoami")
            async for msg in rpc.source("createHistoryStream", {"id": me["id"]}):
                ...
    """
    target = address if isinstance(address, MultiserverAddress) else parse_multiserver(address)
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(target.host, target.port), timeout)
    except TimeoutError:
        raise HandshakeError("connect", f"no TCP connection to {target.host}:{target.port} within {timeout} s"
                             ) from None
    try:
        machine = ClientHandshake(as_signing_key(signing_key), target.public_key, PrivateKey.generate(),
                                  network_key)
        conn = RpcConnection(reader, writer, await _handshake(machine, reader, writer, timeout),
                             handlers or {})
        try:
            yield conn
        finally:
            await conn.close()
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def serve(signing_key: SigningKey | bytes, host: str = "127.0.0.1", port: int = 0,
                network_key: bytes = MAIN_NETWORK_KEY, *, handlers: Mapping[str, Handler] | None = None,
                timeout: float = DEFAULT_TIMEOUT,
                on_connection: Callable[[RpcConnection], Awaitable[None]] | None = None,
                budget: BufferBudget[RpcConnection] | None = None,
                on_rejected: OnRejected | None = None) -> asyncio.Server:
    """Listen for peers; each one shakes hands, then its calls go to ``handlers`` (default: whoami, ping).

    A failed handshake just closes that socket. ``on_connection`` runs once per connected peer; ``budget`` and
    ``on_rejected`` go to every connection (`RpcConnection`).
    """
    signing_key = as_signing_key(signing_key)
    served = dict(default_handlers(signing_key) if handlers is None else handlers)

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        machine = ServerHandshake(signing_key, PrivateKey.generate(), network_key)
        try:
            done = await _handshake(machine, reader, writer, timeout)
        except HandshakeError:
            writer.close()
            return
        conn = RpcConnection(reader, writer, done, served, budget=budget, on_rejected=on_rejected)
        if on_connection is not None:
            await on_connection(conn)
        await conn.wait_closed()

    return await asyncio.start_server(accept, host, port)
