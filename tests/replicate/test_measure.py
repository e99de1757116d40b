"""Measured replication: the relay counts the real bytes, and a reconnect with request skipping sends fewer."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import orjson
import pytest
from nacl.signing import SigningKey

from ssblab.net.aio import feed_id
from ssblab.replicate.clocks import ClockStore
from ssblab.replicate.measure import CountingRelay, append_posts, forget_clock, measure_stores
from ssblab.store import Store

from .helpers import filled_store, ids_by_feed, network

SERVER, CLIENT = SigningKey(bytes([41]) * 32), SigningKey(bytes([42]) * 32)


@pytest.mark.parametrize("mode", ["history", "ebt"])
def test_a_measured_run_replicates_and_counts_the_wire(tmp_path: Path, mode: str) -> None:
    net, messages = network()
    with filled_store(tmp_path / "origin") as origin, Store(tmp_path / "replica") as replica:
        measured = measure_stores(origin, replica, net.ids, mode=mode, server_key=SERVER, client_key=CLIENT)
        assert ids_by_feed(replica) == ids_by_feed(origin)
    assert (measured.mode, measured.feeds, measured.messages, measured.errors) == (mode, len(net.ids),
                                                                                   len(messages), 0)
    # Everything sent down is at least the messages themselves, as compact JSON (framing only adds).
    assert measured.bytes_down > sum(len(orjson.dumps(m.value)) for m in messages)
    assert 0 < measured.bytes_up < measured.bytes_down
    assert measured.to_row()["bytes_total"] == measured.bytes_up + measured.bytes_down


def test_request_skipping_sends_fewer_bytes_on_reconnect(tmp_path: Path) -> None:
    net, _ = network()
    with filled_store(tmp_path / "origin") as origin, Store(tmp_path / "replica") as replica:
        measure_stores(origin, replica, net.ids, mode="ebt", server_key=SERVER, client_key=CLIENT)
        # The server keeps the clock the client announced (empty feeds): a second session, with nothing new,
        # lets it learn how far the client really is.
        again = measure_stores(origin, replica, net.ids, mode="ebt", server_key=SERVER, client_key=CLIENT)
        heads = {feed: head.sequence for feed, head in origin.heads().items()}
    assert again.messages == 0
    assert ClockStore(tmp_path / "origin").load(feed_id(bytes(CLIENT.verify_key))) == heads
    assert ClockStore(tmp_path / "replica").load(feed_id(bytes(SERVER.verify_key))) == heads
    shutil.copytree(tmp_path / "replica", tmp_path / "forgetful")
    changed = {feed: net.keypair(feed) for feed in net.ids[:2]}
    with Store(tmp_path / "origin") as origin:
        new = append_posts(origin, changed, 3, timestamp=2_000_000_000_000.0)
        with Store(tmp_path / "replica") as replica:
            skipping = measure_stores(origin, replica, net.ids, mode="ebt", server_key=SERVER, client_key=CLIENT)
        forget_clock(tmp_path / "forgetful", SERVER)
        forget_clock(tmp_path / "origin", CLIENT)
        with Store(tmp_path / "forgetful") as forgetful:
            full = measure_stores(origin, forgetful, net.ids, mode="ebt", server_key=SERVER, client_key=CLIENT)
    assert skipping.messages == full.messages == len(new) == 6
    assert skipping.bytes_up < full.bytes_up and skipping.bytes_down < full.bytes_down


def test_append_posts_continues_each_feed(tmp_path: Path) -> None:
    net, _ = network()
    feed = net.ids[0]
    with filled_store(tmp_path / "s") as store:
        before = store.head(feed)
        assert before is not None
        made = append_posts(store, {feed: net.keypair(feed)}, 2, timestamp=5.0)
        assert [m.sequence for m in made] == [before.sequence + 1, before.sequence + 2]
        assert made[0].previous == before.id and [m.timestamp for m in made] == [5.0, 6.0]
        assert store.head(feed).id == made[-1].id  # type: ignore[union-attr]


def test_the_relay_closes_a_client_when_the_target_is_gone() -> None:
    async def main() -> int:
        holder = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        dead_port = holder.sockets[0].getsockname()[1]
        holder.close()
        await holder.wait_closed()
        relay = CountingRelay("127.0.0.1", dead_port)
        port = await relay.start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            data = await asyncio.wait_for(reader.read(10), 5)
            writer.close()
            assert data == b""
            return relay.count.connections
        finally:
            await relay.close()

    assert asyncio.run(main()) == 1
