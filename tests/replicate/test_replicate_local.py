"""ssblab replicating from ssblab over loopback: history streams, resumption, live, blobs, whoami/ping."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from ssblab.core.message import create_message
from ssblab.net.aio import connect
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store

from .helpers import filled_store, ids_by_feed, network, served, signing_key

ANON = SigningKey(bytes([9]) * 32)


def all_feeds() -> tuple[Want, ...]:
    return tuple(Want(feed, None, "test") for feed in network()[0].ids)


def run(coro: object) -> object:
    return asyncio.run(asyncio.wait_for(coro, 60))  # type: ignore[arg-type]


def test_replica_equals_source(tmp_path: Path) -> None:
    source, replica = filled_store(tmp_path / "a"), Store(tmp_path / "b")
    key = signing_key(network()[0].keypairs[0])

    async def main() -> object:
        async with served(source, key) as (address, _):
            return await replicate(address, LiveStore(replica), ANON, ReplicateOptions(feeds=all_feeds()))

    result = run(main())
    assert result.errors == [] and result.messages == source.count()  # type: ignore[attr-defined]
    assert ids_by_feed(replica) == ids_by_feed(source)


def test_resumes_from_the_head_without_duplicates(tmp_path: Path) -> None:
    messages = network()[1]
    source = filled_store(tmp_path / "a")
    replica = filled_store(tmp_path / "b", messages[: len(messages) // 2])
    before = replica.count()
    key = signing_key(network()[0].keypairs[0])

    async def main() -> object:
        async with served(source, key) as (address, _):
            return await replicate(address, LiveStore(replica), ANON, ReplicateOptions(feeds=all_feeds()))

    result = run(main())
    assert result.messages == source.count() - before  # type: ignore[attr-defined]
    assert ids_by_feed(replica) == ids_by_feed(source)


def test_history_stream_options(tmp_path: Path) -> None:
    source = filled_store(tmp_path / "a")
    net, _ = network()
    author = max(source.heads().values(), key=lambda h: h.sequence).author
    key = signing_key(net.keypairs[0])

    async def main() -> tuple[list[object], list[object], object, object]:
        async with served(source, key) as (address, _), connect(address, ANON) as rpc:
            keyed = [m async for m in rpc.source("createHistoryStream", {"id": author, "seq": 3, "limit": 2})]
            plain = [m async for m in rpc.source("createHistoryStream", {"id": author, "keys": False})]
            who = await rpc.call_async("whoami", timeout=5)
            pong = await rpc.duplex("gossip.ping", {})
            await pong.send(1)
            answer = await asyncio.wait_for(pong.__aiter__().__anext__(), 5)
            return keyed, plain, who, answer

    keyed, plain, who, pong = run(main())  # type: ignore[misc]
    assert [m["value"]["sequence"] for m in keyed] == [3, 4]  # type: ignore[index]
    assert keyed[0]["key"] == source.get(keyed[0]["key"]).id  # type: ignore[index, union-attr]
    assert [m["sequence"] for m in plain] == list(range(1, source.head(author).sequence + 1))  # type: ignore[index]
    assert who == {"id": net.keypairs[0].id} and isinstance(pong, int)


def test_live_stream_sends_new_messages(tmp_path: Path) -> None:
    net, _ = network()
    author = net.keypairs[1]
    source, replica = filled_store(tmp_path / "a"), Store(tmp_path / "b")
    head = source.head(author.id)
    assert head is not None
    extra = [create_message(author, {"type": "post", "text": "live"}, previous=source.get(head.id),
                            timestamp=2_000_000_000_000)]

    async def main() -> None:
        async with served(source, signing_key(net.keypairs[0])) as (address, server):
            options = ReplicateOptions(feeds=(Want(author.id, None, "test"),), live=True)
            task = asyncio.create_task(replicate(address, LiveStore(replica), ANON, options))
            while replica.head(author.id) is None or replica.head(author.id).sequence < head.sequence:
                await asyncio.sleep(0.05)
            server.live.append(extra)
            while replica.head(author.id).sequence < head.sequence + 1:
                await asyncio.sleep(0.05)
            task.cancel()

    run(main())
    assert replica.head(author.id).id == extra[0].id


def test_blobs_are_fetched_and_checked(tmp_path: Path) -> None:
    net, _ = network()
    source, replica = filled_store(tmp_path / "a"), Store(tmp_path / "b")
    data = b"a blob for replication" * 100
    ref = source.blobs.add(data)
    author = net.keypairs[2]
    post = create_message(author, {"type": "post", "text": f"see {ref}", "mentions": [{"link": ref}]},
                          previous=source.get(source.head(author.id).id),
                          timestamp=2_000_000_000_000)
    source.append([post])

    async def main() -> object:
        async with served(source, signing_key(net.keypairs[0])) as (address, _):
            options = ReplicateOptions(feeds=all_feeds(), blobs=True)
            return await replicate(address, LiveStore(replica), ANON, options)

    result = run(main())
    assert result.blobs == 1 and replica.blobs.get(ref) == data  # type: ignore[attr-defined]


def test_hops_rounds_follow_the_graph(tmp_path: Path) -> None:
    net, _ = network()
    source, replica = filled_store(tmp_path / "a"), Store(tmp_path / "b")
    key = signing_key(net.keypairs[0])
    seen: list[list[Want]] = []

    async def main() -> object:
        async with served(source, key) as (address, _):
            options = ReplicateOptions(hops=1)
            return await replicate(address, LiveStore(replica), ANON, options, on_wants=seen.append)

    result = run(main())
    follows = {c for c, s in LiveStore(source).contacts(net.keypairs[0].id).items() if s == "follow"}
    assert [(w.feed, w.hops) for w in seen[0]] == [(net.keypairs[0].id, 0)]
    assert set(replica.heads()) == ({net.keypairs[0].id} | follows) & set(source.heads())
    assert result.feeds == len(seen[-1])  # type: ignore[attr-defined]


@pytest.mark.parametrize("limit", [0, 1])
def test_limit_zero_and_one(tmp_path: Path, limit: int) -> None:
    source = filled_store(tmp_path / "a")
    author = next(iter(source.heads()))

    async def main() -> list[object]:
        async with served(source, SigningKey(bytes(32))) as (address, _), connect(address, ANON) as rpc:
            return [m async for m in rpc.source("createHistoryStream", {"id": author, "limit": limit})]

    assert len(run(main())) == limit  # type: ignore[arg-type]
