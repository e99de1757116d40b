"""Set Replication Trees between two peers over muxrpc: the duplex method ``reconcile.sync``.

A thin asyncio shell around `Session`: the caller (initiator) names the trDAG's root as the call's argument, the
server looks its replica up, and both sides run their session in lockstep on one duplex stream, each item one
`codec` message as a binary body. A `ReconcileError` on either side ends the stream with the check's text, so the
other side fails too instead of waiting; a peer that goes silent is cut off by ``timeout``.

Both ends always check content ids: ``content_id`` is a required argument, so a peer cannot push a known id with
a forged payload (the pure `Session` leaves it optional for the algorithm's own tests with named nodes).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

from ssblab.net.aio import Handler, RpcConnection
from ssblab.net.errors import RemoteCallError
from ssblab.net.muxrpc import CallType
from ssblab.reconcile.aggregate import NONCE_BYTES
from ssblab.reconcile.codec import decode, encode
from ssblab.reconcile.dag import Node, TrDag
from ssblab.reconcile.errors import Check, ReconcileError
from ssblab.reconcile.session import ReconcileRole, Session, State

__all__ = ["DEFAULT_TIMEOUT", "METHOD", "ContentId", "reconcile", "reconcile_handler"]

METHOD = "reconcile.sync"
DEFAULT_TIMEOUT = 30.0


def _replies(session: Session, item: Any) -> list[bytes]:
    if not isinstance(item, bytes | bytearray):
        raise ReconcileError(Check.UNEXPECTED_MESSAGE, f"expected a binary item, got {type(item).__name__}")
    return [encode(reply) for reply in session.receive(decode(bytes(item)))]


async def _next(items: AsyncIterator[Any], timeout: float) -> Any:
    try:
        return await asyncio.wait_for(anext(items), timeout)
    except TimeoutError:
        raise ReconcileError(Check.CLOSED, f"the peer sent nothing for {timeout} s") from None
    except StopAsyncIteration:
        raise ReconcileError(Check.CLOSED, "the peer ended the stream before the session was done") from None


ContentId = Callable[[Node], bytes]


async def reconcile(rpc: RpcConnection, dag: TrDag, *, content_id: ContentId,
                    timeout: float = DEFAULT_TIMEOUT) -> TrDag:
    """Reconcile our replica ``dag`` with the peer's; returns the union, every part of it checked.

    Args:
        rpc: the connection.
        dag: our replica.
        content_id: the id a message must have given its content (e.g. `simulate.content_id`); every message the
            peer pushes is checked against it.
        timeout: seconds the peer may stay silent.

    Raises:
        ReconcileError: a check failed on our side (the peer is told) or the peer failed, stalled or left.
    """
    session = Session(ReconcileRole.INITIATOR, dag, os.urandom(NONCE_BYTES), content_id=content_id)
    stream = await rpc.duplex(METHOD, dag.root.hex())
    items = aiter(stream)
    try:
        await stream.send(encode(session.start()))
        while session.state is not State.DONE:
            for reply in _replies(session, await _next(items, timeout)):
                await stream.send(reply)
    except ReconcileError as exc:
        await stream.end(str(exc))
        raise
    except (ConnectionError, RemoteCallError) as exc:  # the connection dropped, or the peer ended with an error
        raise ReconcileError(Check.CLOSED, f"the peer failed: {exc}") from exc
    await stream.end()
    return session.result


def reconcile_handler(replica: Callable[[bytes], TrDag | None], on_result: Callable[[TrDag], None], *,
                      content_id: ContentId, timeout: float = DEFAULT_TIMEOUT) -> Handler:
    """The server side: ``replica(root)`` gives our trDAG for a root (None: we hold none), ``on_result`` gets the
    union when a session succeeds; ``content_id`` as for `reconcile`."""

    async def sync(conn: RpcConnection, incoming: AsyncIterator[Any], root_hex: str = "") -> AsyncIterator[bytes]:
        try:
            dag = replica(bytes.fromhex(root_hex))
        except ValueError:
            dag = None
        if dag is None:
            raise ReconcileError(Check.ROOT_MISMATCH, f"no replica of the trDAG rooted at {root_hex[:16]}…")
        session = Session(ReconcileRole.RESPONDER, dag, os.urandom(NONCE_BYTES), content_id=content_id)
        yield encode(session.start())
        while session.state is not State.DONE:
            for reply in _replies(session, await _next(incoming, timeout)):
                yield reply
        on_result(session.result)

    return Handler(CallType.DUPLEX, sync)
