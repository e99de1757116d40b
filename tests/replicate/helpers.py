"""Shared builders for the replication tests: a generated network in a store, a served replica in a loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path

from nacl.signing import SigningKey

from ssblab.core.keys import Keypair
from ssblab.core.message import Message
from ssblab.generate import GeneratedNetwork, NetworkSpec
from ssblab.net.address import MultiserverAddress
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.peer import ReplicaServer
from ssblab.replicate.policy import Policy
from ssblab.store import Store

SPEC = NetworkSpec(authors=6, messages=400, seed=11)


@cache
def network() -> tuple[GeneratedNetwork, tuple[Message, ...]]:
    net = GeneratedNetwork(SPEC)
    return net, tuple(net.messages())


def signing_key(keypair: Keypair) -> SigningKey:
    return SigningKey(keypair.seed)


def filled_store(path: Path, messages: tuple[Message, ...] | None = None) -> Store:
    store = Store(path)
    store.append(network()[1] if messages is None else messages)
    return store


def ids_by_feed(store: Store) -> dict[str, list[str]]:
    feeds: dict[str, list[str]] = {}
    for author, msg_id in store.db.execute("SELECT author, id FROM messages ORDER BY author, sequence"):
        feeds.setdefault(author, []).append(msg_id)
    return feeds


@asynccontextmanager
async def served(store: Store, key: SigningKey, policy: Policy | None = None
                 ) -> AsyncIterator[tuple[MultiserverAddress, ReplicaServer]]:
    """A `ReplicaServer` over ``store`` on a loopback port, closed afterwards."""
    server = ReplicaServer(LiveStore(store), key, policy)
    listener = await server.start()
    port = listener.sockets[0].getsockname()[1]
    try:
        yield MultiserverAddress("127.0.0.1", port, bytes(key.verify_key)), server
    finally:
        listener.close()
        for conn in list(server.sessions):
            await conn.close()
        await asyncio.wait_for(listener.wait_closed(), 5)
