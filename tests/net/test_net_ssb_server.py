"""Our whole stack (TCP, shs, box-stream, packet-stream, muxrpc) against a real JS ``ssb-server@16``.

The server runs on loopback with its own config (``--config`` is needed: ssb-server does not read
``DIR/config`` by itself). Its master key publishes a message; an anonymous client then replicates that feed
with createHistoryStream and checks the message's signature over the bytes as received.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nacl.signing import SigningKey, VerifyKey

from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import connect
from ssblab.net.errors import RemoteCallError

pytestmark = pytest.mark.interop
STARTUP_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"ssb-server exited early: {log.read_text()[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    pytest.fail(f"ssb-server did not listen on {port} within {STARTUP_TIMEOUT} s")


@pytest.fixture(scope="module")
def ssb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MultiserverAddress, SigningKey]]:
    """A loopback ssb-server; yields its address and its master key."""
    binary = Path(__file__).resolve().parents[2] / "interop" / "node_modules" / ".bin" / "ssb-server"
    if not binary.exists():
        pytest.skip("ssb-server is not installed (run `npm ci --ignore-scripts --prefix interop`)")
    data, port = tmp_path_factory.mktemp("ssb-server"), free_port()
    incoming = {"host": "127.0.0.1", "port": port, "scope": ["device", "local", "public"], "transform": "shs"}
    config = {"connections": {"incoming": {"net": [incoming]}, "outgoing": {"net": [{"transform": "shs"}]}},
              "local": False, "gossip": {"local": False, "pub": False, "autoconnect": False}}
    (data / "config").write_text(json.dumps(config))
    log = data / "server.log"
    with log.open("wb") as out:
        command = [str(binary), "start", "--path", str(data), "--config", str(data / "config")]
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, log)
        secret = json.loads("".join(line for line in (data / "secret").read_text().splitlines()
                                    if not line.startswith("#")))
        private = base64.b64decode(secret["private"].removesuffix(".ed25519"))
        master = SigningKey(private[:32])
        yield MultiserverAddress("127.0.0.1", port, bytes(master.verify_key)), master
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_whoami_publish_and_create_history_stream(ssb_server: tuple[MultiserverAddress, SigningKey]) -> None:
    address, master = ssb_server

    async def main() -> None:
        async with connect(address, master, timeout=10) as rpc:
            assert await rpc.call_async("whoami", timeout=10) == {"id": address.feed_id}
            post = {"type": "post", "text": "hello from ssblab"}
            published = await rpc.call_async("publish", post, timeout=10)
        async with connect(address, SigningKey(bytes([7]) * 32), timeout=10) as anon:
            with pytest.raises(RemoteCallError, match="not in list of allowed methods"):
                await anon.call_async("whoami", timeout=10)
            query = {"id": address.feed_id, "keys": False}
            history = [m async for m in anon.source("createHistoryStream", query)]
        assert history[0] == published["value"]
        value = dict(history[0])
        signature = base64.b64decode(value.pop("signature").removesuffix(".sig.ed25519"))
        VerifyKey(address.public_key).verify(json.dumps(value, indent=2).encode(), signature)

    asyncio.run(asyncio.wait_for(main(), 60))


def test_many_messages_stream_in_order(ssb_server: tuple[MultiserverAddress, SigningKey]) -> None:
    address, master = ssb_server

    async def main() -> list[int]:
        async with connect(address, master, timeout=10) as rpc:
            for n in range(30):
                await rpc.call_async("publish", {"type": "test", "n": n}, timeout=10)
            query = {"id": address.feed_id}
            return [m["value"]["sequence"] async for m in rpc.source("createHistoryStream", query)]

    sequences = asyncio.run(asyncio.wait_for(main(), 60))
    assert sequences == list(range(1, len(sequences) + 1)) and len(sequences) >= 30
