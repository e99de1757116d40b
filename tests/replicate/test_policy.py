"""Who may do what on ``ReplicaServer``: the pure table, then the same rules over real connections."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from ssblab.core.keys import Keypair
from ssblab.core.message import create_message
from ssblab.net.aio import connect
from ssblab.net.errors import RemoteCallError
from ssblab.replicate.policy import (
    ANONYMOUS_METHODS,
    Bucket,
    Permission,
    Policy,
    is_allowed,
    may_read_feed,
    role_of,
    take,
)
from ssblab.store import Store

from .helpers import served

SERVER = Keypair.generate(bytes([1]) * 32)
ALICE, BOB, CAROL = (Keypair.generate(bytes([n]) * 32) for n in (2, 3, 4))


def run(coro: object) -> object:
    return asyncio.run(asyncio.wait_for(coro, 30))  # type: ignore[arg-type]


def test_decision_table() -> None:
    assert role_of(SERVER.id, SERVER.id, {SERVER.id}) is Permission.MASTER
    assert role_of(ALICE.id, SERVER.id, {ALICE.id}) is Permission.BLOCKED
    assert role_of(BOB.id, SERVER.id, {ALICE.id}) is Permission.ANONYMOUS
    assert all(is_allowed(Permission.ANONYMOUS, m) for m in ANONYMOUS_METHODS)
    assert not is_allowed(Permission.ANONYMOUS, "createLogStream") and is_allowed(Permission.MASTER, "createLogStream")
    assert not any(is_allowed(Permission.BLOCKED, m) for m in ANONYMOUS_METHODS)
    private = Policy(private=True)
    assert may_read_feed(private, BOB.id, Permission.ANONYMOUS, ALICE.id, {BOB.id})
    assert not may_read_feed(private, CAROL.id, Permission.ANONYMOUS, ALICE.id, {BOB.id})
    assert may_read_feed(private, ALICE.id, Permission.ANONYMOUS, ALICE.id, set())
    assert may_read_feed(Policy(), CAROL.id, Permission.ANONYMOUS, ALICE.id, set())


def test_token_bucket_refills_with_time() -> None:
    policy = Policy(rate=2.0, burst=2)
    bucket, ok1 = take(None, 0.0, policy)
    bucket, ok2 = take(bucket, 0.0, policy)
    bucket, ok3 = take(bucket, 0.0, policy)
    assert (ok1, ok2, ok3) == (True, True, False)
    bucket, ok4 = take(bucket, 0.5, policy)  # half a second: one token back
    assert ok4 and bucket == Bucket(0.0, 0.5)


def graph_store(path: Path) -> Store:
    """The server blocks Carol; Alice follows Bob and posts."""
    store = Store(path)
    block = create_message(SERVER, {"type": "contact", "contact": CAROL.id, "blocking": True}, timestamp=1)
    follow = create_message(ALICE, {"type": "contact", "contact": BOB.id, "following": True}, timestamp=2)
    post = create_message(ALICE, {"type": "post", "text": "for my friends"}, previous=follow, timestamp=3)
    store.append([block, follow, post])
    return store


def test_anonymous_master_and_blocked(tmp_path: Path) -> None:
    store = graph_store(tmp_path / "s")

    async def main() -> None:
        async with served(store, SigningKey(SERVER.seed)) as (address, _):
            async with connect(address, SigningKey(BOB.seed)) as anon:
                with pytest.raises(RemoteCallError, match="createLogStream is not in list of allowed methods"):
                    [m async for m in anon.source("createLogStream", {})]
                assert len([m async for m in anon.source("createHistoryStream", {"id": ALICE.id})]) == 2
            async with connect(address, SigningKey(SERVER.seed)) as master:
                assert len([m async for m in master.source("createLogStream", {})]) == 3
            async with connect(address, SigningKey(CAROL.seed)) as blocked:
                with pytest.raises(ConnectionError):
                    await blocked.call_async("whoami", timeout=5)

    run(main())


def test_private_mode_serves_a_feed_to_whom_its_author_follows(tmp_path: Path) -> None:
    store = graph_store(tmp_path / "s")

    async def read(address: object, who: Keypair) -> int:
        async with connect(address, SigningKey(who.seed)) as rpc:  # type: ignore[arg-type]
            return len([m async for m in rpc.source("createHistoryStream", {"id": ALICE.id})])

    async def main() -> None:
        async with served(store, SigningKey(SERVER.seed), Policy(private=True)) as (address, _):
            assert await read(address, BOB) == 2 and await read(address, ALICE) == 2
            assert await read(address, SERVER) == 2
            with pytest.raises(RemoteCallError, match="private"):
                await read(address, Keypair.generate(bytes([5]) * 32))

    run(main())


def test_connection_stream_and_rate_limits(tmp_path: Path) -> None:
    store = graph_store(tmp_path / "s")

    async def main() -> None:
        policy = Policy(max_connections=1, max_streams=1, rate=0.001, burst=2)  # two calls, then none
        async with served(store, SigningKey(SERVER.seed), policy) as (address, _), \
                connect(address, SigningKey(BOB.seed)) as first:
            live = first.source("createHistoryStream", {"id": ALICE.id, "live": True})
            assert (await live.__anext__())["value"]["sequence"] == 1
            with pytest.raises(RemoteCallError, match="at most 1 open streams"):
                [m async for m in first.source("createHistoryStream", {"id": ALICE.id})]
            async with connect(address, SigningKey(ALICE.seed)) as second:
                with pytest.raises(ConnectionError):
                    await second.call_async("whoami", timeout=5)
            with pytest.raises(RemoteCallError, match="rate limit"):
                await first.call_async("whoami", timeout=5)
            await live.aclose()

    run(main())
