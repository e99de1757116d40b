"""Replicate between two local stores over a real connection on 127.0.0.1.

What the demo and the tutorials use to show replication without a network: one store is served by a
`ReplicaServer`, the other pulls from it with `replicate`, over the same secret handshake, box-stream and muxrpc
(and EBT, or history streams) as with any remote peer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from nacl.signing import SigningKey

from ssblab.net.address import MultiserverAddress
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.peer import ReplicaServer
from ssblab.replicate.result import ReplicationResult
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store

__all__ = ["replicate_locally", "replicate_stores"]


async def replicate_locally(origin: Store, replica: Store, feeds: Iterable[str], *, mode: str = "ebt",
                            on_stored: Callable[[int], None] | None = None) -> ReplicationResult:
    """Serve ``origin`` on a free loopback port and replicate ``feeds`` from it into ``replica``."""
    server_key, client_key = SigningKey.generate(), SigningKey.generate()
    server = ReplicaServer(LiveStore(origin), server_key)
    listener = await server.start("127.0.0.1", 0)
    address = MultiserverAddress("127.0.0.1", listener.sockets[0].getsockname()[1], bytes(server_key.verify_key))
    wants = tuple(Want(feed, None, "listed") for feed in feeds)
    try:
        return await replicate(address, LiveStore(replica), client_key, ReplicateOptions(mode=mode, feeds=wants),
                               on_stored=on_stored)
    finally:
        listener.close()
        for conn in list(server.sessions):
            await conn.close()
        await listener.wait_closed()


def replicate_stores(origin: Store, replica: Store, feeds: Iterable[str], *, mode: str = "ebt",
                     on_stored: Callable[[int], None] | None = None) -> ReplicationResult:
    """`replicate_locally` for code that is not async (the CLI, notebooks)."""
    return asyncio.run(replicate_locally(origin, replica, feeds, mode=mode, on_stored=on_stored))
