"""Our whole stack (TCP, shs, box-stream, packet-stream, muxrpc) against a real JS ``ssb-server@16``.

The server runs on loopback (`tests.ssbserver`). Its master key publishes a message; an anonymous client then
replicates that feed with createHistoryStream and checks the message's signature over the bytes as received.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator

import pytest
from nacl.signing import SigningKey, VerifyKey

from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import connect
from ssblab.net.errors import RemoteCallError
from tests.ssbserver import require_js
from tests.ssbserver import ssb_server as running_ssb_server

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def ssb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MultiserverAddress, SigningKey]]:
    """A loopback ssb-server over an empty log; yields its address and its master key."""
    require_js()
    with running_ssb_server(tmp_path_factory.mktemp("ssb-server")) as server:
        yield server


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
