"""`ReplicaServer` against hostile peers (issue 19, items 2, 3, 13): silent peers filling the seats, idle peers,
half-sent 16 MiB packets, floods of calls to methods it does not serve, out-of-range arguments. Each attack
runs against a real server on loopback, and a legitimate replicate completes during it and after it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import pytest
from nacl.signing import SigningKey

from ssblab.net.aio import Handler, RpcConnection, connect
from ssblab.net.errors import RemoteCallError
from ssblab.net.muxrpc import CallType
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.peer import ReplicaServer
from ssblab.replicate.policy import Policy
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store
from tests.replicate.helpers import filled_store, ids_by_feed, network, served, signing_key
from tests.replicate.hostile import big_packet, junk_calls, run_for, shake_hands, silent

SERVER_KEY = signing_key(network()[0].keypairs[0])


def run(coro: Awaitable[Any], seconds: float = 120) -> Any:
    return asyncio.run(asyncio.wait_for(coro, seconds))  # type: ignore[arg-type]


async def honest_replicate(address: Any, store: Store) -> None:
    """Pull every feed into ``store`` and check it is complete."""
    wants = tuple(Want(kp.id, None, "listed") for kp in network()[0].keypairs)
    result = await replicate(address, LiveStore(store), SigningKey.generate(), ReplicateOptions(feeds=wants))
    assert result.errors == []


async def until(condition: Any, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return filled_store(tmp_path_factory.mktemp("source") / "s")


def test_a_replicate_completes_while_64_silent_peers_hold_every_seat(source: Store, tmp_path: Path) -> None:
    async def main() -> None:
        async with served(source, SERVER_KEY) as (address, server):
            wires = [await shake_hands(address) for _ in range(64)]
            strangers = Policy().max_connections - Policy().reserved  # 60: the last 4 seats are reserved
            await until(lambda: len(server.sessions) == strangers)  # the 61st to 64th took idle peers' seats
            await honest_replicate(address, Store(tmp_path / "during"))  # one more silent peer gives up its seat
            await until(lambda: sum(w.reader.at_eof() for w in wires) == 64 - strangers + 1)
            await honest_replicate(address, Store(tmp_path / "after"))
            for wire in wires:
                wire.writer.close()
    run(main())
    assert ids_by_feed(Store(tmp_path / "during")) == ids_by_feed(source) == ids_by_feed(Store(tmp_path / "after"))


def test_idle_peers_are_closed_and_busy_ones_are_not(source: Store) -> None:
    author = network()[0].keypairs[1].id

    async def main() -> None:
        async with served(source, SERVER_KEY, Policy(idle_timeout=0.5)) as (address, _), \
                connect(address, SigningKey.generate()) as busy:
            live = busy.source("createHistoryStream", {"id": author, "live": True, "old": False})
            waiting = asyncio.ensure_future(live.__anext__())  # a live stream with nothing new: a call open
            ended = await run_for(address, silent, 10)
            assert ended == "dropped"  # by the server, after 0.5 s of nothing
            await asyncio.sleep(1.0)
            assert not waiting.done() and await busy.call_async("whoami", timeout=5)
            waiting.cancel()
    run(main())


def test_the_last_seats_are_kept_for_trusted_peers(source: Store) -> None:
    author = network()[0].keypairs[1].id

    async def main() -> None:
        async with served(source, SERVER_KEY, Policy(max_connections=3, reserved=1)) as (address, server), \
                connect(address, SigningKey.generate()) as first, connect(address, SigningKey.generate()) as second:
            streams = [conn.source("createHistoryStream", {"id": author, "live": True, "old": False})
                       for conn in (first, second)]
            pending = [asyncio.ensure_future(s.__anext__()) for s in streams]  # both strangers busy
            await until(lambda: sum(s.calls for s in server.sessions.values()) == 2)
            assert await run_for(address, silent, 5) == "dropped"  # a third stranger: no seat
            async with connect(address, SERVER_KEY) as master:  # the server's own key: the reserved seat
                assert (await master.call_async("whoami", timeout=5))["id"] == server.id
            for waiting in pending:
                waiting.cancel()
    run(main())


def test_half_sent_huge_packets_stay_within_the_memory_budget(source: Store, tmp_path: Path) -> None:
    limit = 16 * 2**20
    peak = 0

    async def main() -> None:
        nonlocal peak
        async with served(source, SERVER_KEY, Policy(max_buffered=limit, idle_timeout=2.0)) as (address, server):
            attack = [asyncio.ensure_future(run_for(address, big_packet(8 * 2**20), 60)) for _ in range(6)]

            async def watch() -> None:
                nonlocal peak
                while True:
                    peak = max(peak, server.budget.total)
                    await asyncio.sleep(0.005)
            watcher = asyncio.ensure_future(watch())
            await until(lambda: server.budget.total > limit // 2, 30)
            await honest_replicate(address, Store(tmp_path / "during"))
            endings = await asyncio.gather(*attack)
            watcher.cancel()
            assert endings == ["dropped"] * 6  # the biggest holders over the budget, the rest once idle
            await until(lambda: server.budget.total == 0 and not server.sessions)  # released as they left
            await honest_replicate(address, Store(tmp_path / "after"))
    run(main())
    assert limit // 2 < peak <= limit + 6 * 65536  # at most one read per connection beyond the limit
    assert ids_by_feed(Store(tmp_path / "during")) == ids_by_feed(source)


@pytest.mark.parametrize("stream", [True, False])
def test_a_flood_of_calls_to_unknown_methods_is_rate_limited(source: Store, stream: bool) -> None:
    async def main() -> None:
        async with served(source, SERVER_KEY) as (address, server):
            assert await run_for(address, junk_calls(50_000, stream), 60) == "dropped"
            await until(lambda: not server.sessions)
            async with connect(address, SigningKey.generate()) as honest:
                for n in range(20):  # a client probing methods the server lacks is answered, and stays
                    with pytest.raises(RemoteCallError, match="not in list of allowed methods"):
                        await honest.call_async(f"probe.m{n}", timeout=5)
                assert (await honest.call_async("whoami", timeout=5))["id"] == server.id
    run(main())


def test_out_of_range_history_arguments_get_a_protocol_error(source: Store) -> None:
    author = network()[0].keypairs[1].id

    async def main() -> None:
        async with served(source, SERVER_KEY) as (address, _), connect(address, SigningKey.generate()) as rpc:
            for query in ({"seq": 2**70}, {"seq": -(2**70)}, {"limit": 2**70}, {"seq": 1.5}, {"seq": True}):
                with pytest.raises(RemoteCallError) as caught:
                    [m async for m in rpc.source("createHistoryStream", {"id": author, **query})]
                text = str(caught.value)
                assert "integers below 2**53" in text and "SQLite" not in text, text
            first = [m async for m in rpc.source("createHistoryStream", {"id": author, "limit": 1})]
            assert first[0]["value"]["sequence"] == 1  # the connection still serves
    run(main())


def test_an_unexpected_handler_failure_does_not_leak_its_text(source: Store) -> None:
    async def broken(conn: RpcConnection, *args: Any) -> AsyncIterator[int]:
        yield 1
        raise ValueError("Python int too large to convert to SQLite INTEGER")

    async def main() -> None:
        server = ReplicaServer(LiveStore(source), SERVER_KEY, extra={"broken": Handler(CallType.SOURCE, broken)})
        listener = await server.start()
        try:
            async with connect(_address(listener), SERVER_KEY) as rpc:
                with pytest.raises(RemoteCallError) as caught:
                    [m async for m in rpc.source("broken")]
                assert "internal error (ValueError)" in str(caught.value) and "SQLite" not in str(caught.value)
        finally:
            listener.close()
    run(main())


def _address(listener: asyncio.Server) -> Any:
    from ssblab.net.address import MultiserverAddress

    return MultiserverAddress("127.0.0.1", listener.sockets[0].getsockname()[1], bytes(SERVER_KEY.verify_key))
