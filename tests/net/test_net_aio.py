"""The asyncio shell over real loopback TCP: our client against our server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import Handler, RpcConnection, connect, default_handlers, serve
from ssblab.net.errors import HandshakeError, RemoteCallError
from ssblab.net.muxrpc import CallType
from ssblab.net.shs import MAIN_NETWORK_KEY
from tests.net.net_pairs import keys

SERVER, CLIENT = keys(2), keys(1)


async def numbers(conn: RpcConnection, count: int) -> AsyncIterator[int]:
    for n in range(count):
        yield n


async def ticks(conn: RpcConnection) -> AsyncIterator[int]:
    """A live source that never ends by itself."""
    n = 0
    while True:
        yield n
        n += 1
        await asyncio.sleep(0.001)


async def fail(conn: RpcConnection) -> None:
    raise ValueError("handler broke")


async def hang(conn: RpcConnection) -> None:
    await asyncio.Event().wait()


def handlers() -> dict[str, Handler]:
    return {**default_handlers(SERVER), "numbers": Handler(CallType.SOURCE, numbers),
            "ticks": Handler(CallType.SOURCE, ticks),
            "fail": Handler(CallType.ASYNC, fail), "hang": Handler(CallType.ASYNC, hang)}


async def with_server(body: Any, network_key: bytes = MAIN_NETWORK_KEY, **serve_args: Any) -> Any:
    server = await serve(SERVER, network_key=network_key, handlers=handlers(), **serve_args)
    port = server.sockets[0].getsockname()[1]
    try:
        address = MultiserverAddress("127.0.0.1", port, bytes(SERVER.verify_key))
        return await asyncio.wait_for(body(address), 20)
    finally:
        server.close()
        await server.wait_closed()


def test_whoami_and_a_source_over_tcp() -> None:
    async def body(address: MultiserverAddress) -> None:
        async with connect(address, CLIENT) as rpc:
            assert rpc.remote_id == address.feed_id
            assert await rpc.call_async("whoami") == {"id": address.feed_id}
            assert [n async for n in rpc.source("numbers", 5000)] == list(range(5000))
            with pytest.raises(RemoteCallError, match="method:nope is not in list of allowed methods"):
                await rpc.call_async("nope")
            with pytest.raises(RemoteCallError, match="handler broke"):
                await rpc.call_async("fail")
    asyncio.run(with_server(body))


def test_leaving_a_source_early_aborts_it() -> None:
    async def body(address: MultiserverAddress) -> None:
        async with connect(address, CLIENT) as rpc:
            seen = []
            async for n in rpc.source("ticks"):
                seen.append(n)
                if n == 3:
                    break
            assert seen == [0, 1, 2, 3]
            assert await rpc.call_async("whoami", timeout=5)  # the connection still works
    asyncio.run(with_server(body))


def test_unknown_stream_method_ends_with_error() -> None:
    async def body(address: MultiserverAddress) -> None:
        async with connect(address, CLIENT) as rpc:
            with pytest.raises(RemoteCallError, match="not in list of allowed methods"):
                [item async for item in rpc.source("createLogStream")]
    asyncio.run(with_server(body))


def test_wrong_network_key_fails_the_handshake() -> None:
    async def body(address: MultiserverAddress) -> None:
        with pytest.raises(HandshakeError) as info:
            async with connect(address, CLIENT, bytes(32), timeout=2):
                pass
        assert info.value.step == "msg2"
    asyncio.run(with_server(body))


def test_a_silent_peer_times_out_cleanly() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # never answers
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            with pytest.raises(HandshakeError, match=r"no answer within 0\.3 s") as info:
                async with connect(MultiserverAddress("127.0.0.1", port, bytes(SERVER.verify_key)), CLIENT,
                                   timeout=0.3):
                    pass
            assert info.value.step == "msg2"
        finally:
            server.close()
    asyncio.run(main())


def test_server_sees_the_client_and_pending_calls_fail_on_disconnect() -> None:
    seen: list[str] = []

    async def on_connection(conn: RpcConnection) -> None:
        seen.append(conn.remote_id)
        await conn.close()

    async def body(address: MultiserverAddress) -> None:
        async with connect(address, CLIENT, timeout=2) as rpc:
            with pytest.raises(ConnectionError):
                await rpc.call_async("whoami", timeout=5)
    asyncio.run(with_server(body, on_connection=on_connection))
    assert seen == [MultiserverAddress("h", 1, bytes(CLIENT.verify_key)).feed_id]


def test_a_call_the_peer_never_answers_times_out() -> None:
    async def body(address: MultiserverAddress) -> None:
        async with connect(address, bytes([1]) * 32) as rpc:  # a bare seed works as the key
            with pytest.raises(TimeoutError):
                await rpc.call_async("hang", timeout=0.2)
            assert await rpc.call_async("whoami", timeout=5) == {"id": address.feed_id}
    asyncio.run(with_server(body))


def test_gossip_ping_answers_each_timestamp() -> None:
    async def body(address: MultiserverAddress) -> None:
        async with connect(address, CLIENT) as rpc:
            ping = await rpc.duplex("gossip.ping", {"timeout": 1000})
            await ping.send(1)
            pongs = aiter(ping)
            first = await asyncio.wait_for(anext(pongs), 5)
            assert isinstance(first, int) and first > 1
            await ping.send(2)
            assert await asyncio.wait_for(anext(pongs), 5) >= first
            await ping.end()
            assert [rest async for rest in pongs] == []  # the server's end arrives; no hang
    asyncio.run(with_server(body))
