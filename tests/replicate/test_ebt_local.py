"""EBT mode between two ssblab peers, the fallback to createHistoryStream, and the persisted remote clocks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from ssblab.replicate.clocks import ClockStore
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.peer import ReplicaServer
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store

from .helpers import filled_store, ids_by_feed, network, served, signing_key

ME = SigningKey(bytes([31]) * 32)


def feeds() -> tuple[Want, ...]:
    return tuple(Want(feed, None, "test") for feed in network()[0].ids)


def run_ebt(source: Store, replica: Store, *, ebt_server: bool = True) -> object:
    async def main() -> object:
        server = ReplicaServer(LiveStore(source), signing_key(network()[0].keypairs[0]), ebt=ebt_server)
        listener = await server.start()
        from ssblab.net.address import MultiserverAddress
        address = MultiserverAddress("127.0.0.1", listener.sockets[0].getsockname()[1],
                                     bytes(server.signing_key.verify_key))
        try:
            return await replicate(address, LiveStore(replica), ME, ReplicateOptions(mode="ebt", feeds=feeds()))
        finally:
            listener.close()

    return asyncio.run(asyncio.wait_for(main(), 60))


def test_ebt_replica_equals_source_and_clock_is_persisted(tmp_path: Path) -> None:
    source, replica = filled_store(tmp_path / "a"), Store(tmp_path / "b")
    result = run_ebt(source, replica)
    assert result.errors == [] and result.mode == "ebt"  # type: ignore[attr-defined]
    assert ids_by_feed(replica) == ids_by_feed(source)
    clock = ClockStore(tmp_path / "b").load(network()[0].keypairs[0].id)
    assert clock == {feed: head.sequence for feed, head in source.heads().items()}
    again = run_ebt(source, replica)  # request skipping: nothing changed, nothing sent
    assert again.messages == 0 and again.errors == []  # type: ignore[attr-defined]


def test_ebt_resumes_a_partial_replica(tmp_path: Path) -> None:
    messages = network()[1]
    source, replica = filled_store(tmp_path / "a"), filled_store(tmp_path / "b", messages[:150])
    result = run_ebt(source, replica)
    assert result.messages == source.count() - 150  # type: ignore[attr-defined]
    assert ids_by_feed(replica) == ids_by_feed(source)


def test_falls_back_to_history_when_the_peer_refuses_ebt(tmp_path: Path) -> None:
    source, replica = filled_store(tmp_path / "a"), Store(tmp_path / "b")
    result = run_ebt(source, replica, ebt_server=False)
    assert result.mode.startswith("ebt (peer refused ebt")  # type: ignore[attr-defined]
    assert result.routes["history"].feeds == len(network()[0].ids) and result.unserved == []  # type: ignore[attr-defined]
    assert ids_by_feed(replica) == ids_by_feed(source)


def test_served_helper_offers_ebt(tmp_path: Path) -> None:
    source = filled_store(tmp_path / "a")

    async def main() -> bool:
        async with served(source, ME) as (_, server):
            return "ebt.replicate" in server.handlers()

    assert asyncio.run(main())


def test_ebt_live_pushes_messages_appended_later(tmp_path: Path) -> None:
    """A message appended to the server's store by anyone reaches a live EBT client without a new request."""
    from ssblab.core.message import create_message

    net, _ = network()
    source, replica = filled_store(tmp_path / "a"), Store(tmp_path / "b")
    author = net.keypairs[1]
    head = source.head(author.id)
    assert head is not None
    new = create_message(author, {"type": "post", "text": "pushed"}, previous=source.get(head.id),
                         timestamp=2_000_000_000_000)

    async def main() -> None:
        async with served(source, signing_key(net.keypairs[0])) as (address, server):
            options = ReplicateOptions(mode="ebt", feeds=feeds(), live=True)
            task = asyncio.create_task(replicate(address, LiveStore(replica), ME, options))
            while replica.count() < source.count():
                await asyncio.sleep(0.05)
            server.live.append([new])
            while replica.head(author.id).sequence <= head.sequence:  # type: ignore[union-attr]
                await asyncio.sleep(0.05)
            task.cancel()

    asyncio.run(asyncio.wait_for(main(), 60))
    assert replica.head(author.id).id == new.id  # type: ignore[union-attr]


@pytest.mark.parametrize("count", [600, 6_000])
def test_a_forged_signature_over_ebt_stops_the_feed_with_the_store_verdict(tmp_path: Path, count: int) -> None:
    """Signature checks run ahead in a worker thread, but only prove: a forged message in the middle of a burst is
    the store's ``signature`` error, its valid prefix is stored, and nothing after it. The long burst outruns the
    workers (past ``UNCHECKED_MAX`` waiting, the validator checks on the loop): the same verdicts."""
    from collections.abc import AsyncIterator
    from typing import Any

    from ssblab.core.keys import Keypair
    from ssblab.net.address import MultiserverAddress
    from ssblab.net.aio import Handler, serve
    from ssblab.net.ebt import encode_note
    from ssblab.net.muxrpc import CallType
    from tests.signed import signed_posts

    author, server_key = Keypair.generate(bytes([41]) * 32), SigningKey(bytes([42]) * 32)
    good, at = signed_posts(author, count), count * 2 // 3
    forged = dict(good[at].value, content={"type": "post", "text": "not what was signed"})
    sent = [m.value for m in good[:at]] + [forged] + [m.value for m in good[at + 1:]]

    async def ebt(conn: object, incoming: AsyncIterator[Any], *args: Any) -> AsyncIterator[Any]:
        yield {author.id: encode_note(len(good), False)}  # the server's notes go first
        for value in sent:
            yield value
        async for _ in incoming:  # until the client ends the stream
            pass

    async def main() -> object:
        listener = await serve(server_key, handlers={"ebt.replicate": Handler(CallType.DUPLEX, ebt)})
        address = MultiserverAddress("127.0.0.1", listener.sockets[0].getsockname()[1], bytes(server_key.verify_key))
        try:
            options = ReplicateOptions(mode="ebt", feeds=(Want(author.id, None, "test"),))
            return await replicate(address, LiveStore(replica), ME, options)
        finally:
            listener.close()

    replica = Store(tmp_path / "b")
    result = asyncio.run(asyncio.wait_for(main(), 60))
    assert [m.id for m in replica.feed(author.id)] == [m.id for m in good[:at]]
    assert result.errors and {e.feed for e in result.errors} == {author.id}  # type: ignore[attr-defined]
    assert result.errors[0].code == "signature", result.errors  # type: ignore[attr-defined]
