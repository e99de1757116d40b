"""Hostile remotes over real sockets against the replicate client: a remote that hangs up mid-run, one that
trickles a message just under the stall timeout, one that streams valid messages for ever, and a feed that fails
after some of its messages were stored. Each attack gets a bounded run, a named error and an exact account."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from nacl.signing import SigningKey

from ssblab.core.keys import Keypair
from ssblab.core.message import Message, create_message
from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import Handler, RpcConnection, serve
from ssblab.net.muxrpc import CallType
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.limits import Limits
from ssblab.replicate.result import ReplicationResult
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store
from tests.signed import signed_posts

from .malicious import malicious_peer

PEER = SigningKey(bytes([31]) * 32)
ME = SigningKey(bytes([32]) * 32)
AUTHOR = Keypair.generate(bytes([33]) * 32)
OTHERS = [Keypair.generate(bytes([40 + i]) * 32).id for i in range(40)]
GOOD = signed_posts(AUTHOR, 6)


def endless(author: Keypair) -> Iterator[dict[str, Any]]:
    """Valid messages of one feed, for ever."""
    previous: Message | None = None
    sequence = 0
    while True:
        sequence += 1
        previous = create_message(author, {"type": "post", "text": f"more {sequence}"}, previous=previous,
                                  timestamp=1_000 + sequence)
        yield previous.value


@asynccontextmanager
async def hanging_up_peer(key: SigningKey, served: dict[str, list[dict[str, Any]]], after: float
                          ) -> AsyncIterator[MultiserverAddress]:
    """Serves the listed feeds' messages, leaves every other stream silent, and drops the TCP connection
    ``after`` seconds into the session."""

    async def history(conn: RpcConnection, opts: dict[str, Any]) -> AsyncIterator[Any]:
        for value in served.get(opts["id"], []):
            yield value
        await asyncio.sleep(3600)

    async def on_connection(conn: RpcConnection) -> None:
        asyncio.get_running_loop().call_later(after, conn._writer.close)

    server = await serve(key, handlers={"createHistoryStream": Handler(CallType.SOURCE, history)},
                         on_connection=on_connection)
    try:
        yield MultiserverAddress("127.0.0.1", server.sockets[0].getsockname()[1], bytes(key.verify_key))
    finally:
        server.close()


def wants(*feeds: str) -> tuple[Want, ...]:
    return tuple(Want(feed, None, "test") for feed in feeds)


def run(store: Store, address_cm: Any, options: ReplicateOptions) -> tuple[ReplicationResult, float]:
    async def main() -> tuple[ReplicationResult, float]:
        async with address_cm as address:
            started = time.monotonic()
            result = await replicate(address, LiveStore(store), ME, options)
            return result, time.monotonic() - started

    return asyncio.run(asyncio.wait_for(main(), 60))


def test_a_closed_connection_ends_every_feed_at_once(tmp_path: Path) -> None:
    """41 feeds, 16 at a time: the remote sends 4 messages of one feed and hangs up. Every feed, streaming or
    still waiting its turn, ends at once with connection-closed (the stall timeout is 30 s); the 4 stored
    messages are counted in the total and in their feed's error."""
    store = Store(tmp_path / "s")
    peer = hanging_up_peer(PEER, {AUTHOR.id: [m.value for m in GOOD[:4]]}, after=0.5)
    result, seconds = run(store, peer, ReplicateOptions(mode="history", feeds=wants(AUTHOR.id, *OTHERS)))
    assert seconds < 5
    assert {e.code for e in result.errors} == {"connection-closed"} and len(result.errors) == 41
    assert all("connection closed" in str(e) for e in result.errors)
    stored = {e.feed: e.stored for e in result.errors if e.stored}
    assert stored == {AUTHOR.id: 4} and result.messages == 4 == store.count()
    assert sorted(result.unserved) == sorted([AUTHOR.id, *OTHERS])


def test_a_hostile_trickle_ends_at_the_deadline(tmp_path: Path) -> None:
    """One valid message every 0.2 s never trips the stall timeout; the run's deadline ends it, and what came
    before is stored and reported."""
    store = Store(tmp_path / "s")
    peer = malicious_peer(PEER, [m.value for m in GOOD], "stall", delay=0.2)
    options = ReplicateOptions(mode="history", feeds=wants(AUTHOR.id), limits=Limits(deadline=0.7), stall=5)
    result, seconds = run(store, peer, options)
    assert seconds < 2
    assert result.stopped == "deadline" and [e.code for e in result.errors] == ["deadline"]
    assert 1 <= result.messages == store.count() < len(GOOD)
    assert result.unserved == [AUTHOR.id]


def test_an_endless_stream_stops_at_max_messages_and_max_bytes(tmp_path: Path) -> None:
    for limits, reason in ((Limits(max_messages=50), "max-messages"), (Limits(max_bytes=20_000), "max-bytes")):
        store = Store(tmp_path / reason)
        peer = malicious_peer(PEER, lambda feed: endless(AUTHOR), "end")
        result, seconds = run(store, peer, ReplicateOptions(mode="history", feeds=wants(AUTHOR.id), limits=limits))
        assert result.stopped == reason and [e.code for e in result.errors] == [reason]
        assert result.messages == store.count() > 0 and seconds < 10
        if reason == "max-messages":
            assert store.count() == 50
        else:
            assert sum(len(m.encoded) for m in store.feed(AUTHOR.id)) <= 20_000


def test_cli_reports_messages_stored_before_a_feed_failed(tmp_path: Path) -> None:
    """``replicate --json`` counts the 4 messages stored before the bad fifth, in ``messages`` and in the
    feed's error (``stored``), and exits 1."""
    bad = dict(GOOD[4].value, content={"type": "post", "text": "not what was signed"})

    async def main() -> subprocess.CompletedProcess[bytes]:
        async with malicious_peer(PEER, [*(m.value for m in GOOD[:4]), bad]) as address:
            feeds = tmp_path / "feeds.txt"
            feeds.write_text(AUTHOR.id + "\n")
            command = [sys.executable, "-m", "ssblab", "replicate", "--store", str(tmp_path / "r"), "--remote",
                       str(address), "--feeds", str(feeds), "--json", "--mode", "history"]
            process = await asyncio.create_subprocess_exec(*command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = await process.communicate()
            return subprocess.CompletedProcess(command, process.returncode or 0, out, err)

    done = asyncio.run(asyncio.wait_for(main(), 60))
    assert done.returncode == 1, done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    assert report["messages"] == 4 and report["unserved"] == [AUTHOR.id]
    assert [(e["feed"], e["code"], e["stored"]) for e in report["errors"]] == [(AUTHOR.id, "signature", 4)]


def test_ebt_stops_at_max_messages_too(tmp_path: Path) -> None:
    """The EBT route asks the same budget: an ssblab server offering 400 messages, a limit of 100."""
    from .helpers import filled_store, network, served, signing_key

    net, _ = network()
    source, replica = filled_store(tmp_path / "a"), Store(tmp_path / "b")
    options = ReplicateOptions(mode="ebt", feeds=wants(*net.ids), limits=Limits(max_messages=100))
    result, seconds = run(replica, _address(served(source, signing_key(net.keypairs[0]))), options)
    assert result.stopped == "max-messages" and result.messages == replica.count() == 100
    assert result.unserved and seconds < 10


@asynccontextmanager
async def _address(served_cm: Any) -> AsyncIterator[MultiserverAddress]:
    async with served_cm as (address, _):
        yield address
