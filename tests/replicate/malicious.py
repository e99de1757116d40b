"""A misbehaving peer built from ``ssblab.net``: it serves createHistoryStream from a scripted list of values and
then does what the script's ``after`` says (end, stall, hang up, or write garbage into the box stream)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from nacl.signing import SigningKey

from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import Handler, RpcConnection, serve
from ssblab.net.muxrpc import CallType


@asynccontextmanager
async def malicious_peer(key: SigningKey, values: Sequence[Any] | Callable[[str], Iterable[Any]], after: str = "end",
                         *, delay: float = 0.0) -> AsyncIterator[MultiserverAddress]:
    """Serve ``values`` (or ``values(feed)``, which may never end) to every createHistoryStream call, one item
    every ``delay`` seconds, then ``after``: ``end`` | ``stall`` | ``hangup`` | ``garbage``."""

    async def history(conn: RpcConnection, *args: Any) -> AsyncIterator[Any]:
        feed = args[0].get("id") if args and isinstance(args[0], dict) else ""
        for value in values(feed) if callable(values) else values:
            if delay:
                await asyncio.sleep(delay)
            yield value
        if after == "stall":
            await asyncio.sleep(3600)
        elif after == "hangup":
            conn._writer.close()  # drop the TCP connection without goodbye
            await asyncio.sleep(3600)
        elif after == "garbage":
            conn._writer.write(os.urandom(200))  # bytes that are no box-stream frame
            await asyncio.sleep(3600)

    server = await serve(key, handlers={"createHistoryStream": Handler(CallType.SOURCE, history)})
    try:
        yield MultiserverAddress("127.0.0.1", server.sockets[0].getsockname()[1], bytes(key.verify_key))
    finally:
        server.close()


@asynccontextmanager
async def silent_peer() -> AsyncIterator[int]:
    """A TCP port that accepts and never says a word (a stalled handshake)."""
    writers: list[asyncio.StreamWriter] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        for writer in writers:
            writer.close()
        server.close()
