"""Hostile clients of an SSB server, built from ssblab's public protocol cores (shs1, box-stream, packet-stream):
they shake hands properly, then misbehave on the wire in ways a real client library would not let them.

Each behaviour is one coroutine that runs until it is cancelled or the server drops it, and returns how it
ended (``"dropped"`` when the server closed the connection, ``"cancelled"`` otherwise), so a test can tell that
the server, not the attacker, ended it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from nacl.public import PrivateKey
from nacl.signing import SigningKey

from ssblab.net.address import MultiserverAddress
from ssblab.net.boxstream import BoxStreamEncoder
from ssblab.net.packetstream import HEADER_LENGTH, BodyType, Packet, encode_packet
from ssblab.net.shs import ClientHandshake, HandshakeComplete

CHUNK = 4096 * 16


@dataclass
class Wire:
    """A handshaken connection: raw box-stream writes, and a reader kept drained (so our writes never block on
    the server's answers)."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    box: BoxStreamEncoder

    async def send(self, plain: bytes) -> None:
        self.writer.write(self.box.encode(plain))
        await self.writer.drain()

    async def until_dropped(self) -> str:
        """Read (and discard) until the server closes the connection."""
        with contextlib.suppress(ConnectionError):
            while await self.reader.read(65536):
                pass
        return "dropped"


async def shake_hands(address: MultiserverAddress, key: SigningKey | None = None) -> Wire:
    reader, writer = await asyncio.open_connection(address.host, address.port)
    machine = ClientHandshake(key or SigningKey.generate(), address.public_key, PrivateKey.generate())
    while True:
        done = machine.next_event()
        if outgoing := machine.data_to_send():
            writer.write(outgoing)
            await writer.drain()
        if isinstance(done, HandshakeComplete):
            keys = done.result.keys
            return Wire(reader, writer, BoxStreamEncoder(keys.encrypt_key, keys.encrypt_nonce))
        data = await reader.read(65536)
        if not data:
            raise ConnectionError("the server closed the connection during the handshake")
        machine.receive_data(data)


def request(number: int, name: list[str], args: list[object], kind: str | None = None) -> bytes:
    """One muxrpc call packet: async when ``kind`` is None, else a stream of that kind."""
    body = {"name": name, "args": args, **({"type": kind} if kind else {})}
    return encode_packet(Packet(number, json.dumps(body).encode(), BodyType.JSON, stream=kind is not None))


Behaviour = Callable[[Wire], Awaitable[str]]


async def silent(wire: Wire) -> str:
    """Shake hands, then say nothing."""
    return await wire.until_dropped()


def big_packet(size: int = 2**24 - 1, send: float = 0.95, rate: float | None = None) -> Behaviour:
    """Announce a ``size``-byte packet and send ``send`` of it (at ``rate`` bytes a second, or as fast as the
    socket takes it), then stall: the server must hold the part."""
    async def behave(wire: Wire) -> str:
        reading = asyncio.ensure_future(wire.until_dropped())
        header = bytes([0b1010]) + size.to_bytes(4, "big") + (1).to_bytes(4, "big", signed=True)
        assert len(header) == HEADER_LENGTH
        try:
            await wire.send(header)
            left = int(size * send)
            while left > 0 and not reading.done():
                await wire.send(bytes(min(CHUNK, left)))
                left -= CHUNK
                if rate:
                    await asyncio.sleep(CHUNK / rate)
        except ConnectionError:
            pass
        return await reading
    return behave


def junk_calls(count: int = 100_000, stream: bool = True) -> Behaviour:
    """Call methods the server does not have, as fast as the socket takes them."""
    async def behave(wire: Wire) -> str:
        reading = asyncio.ensure_future(wire.until_dropped())
        try:
            for start in range(1, count + 1, 500):
                batch = b"".join(request(n, ["no", f"such{n}"], [n], "duplex" if stream else None)
                                 for n in range(start, min(start + 500, count + 1)))
                await wire.send(batch)
                if reading.done():
                    break
        except ConnectionError:
            pass
        return await reading
    return behave


async def run_for(address: MultiserverAddress, behaviour: Behaviour, seconds: float) -> str:
    """Shake hands and behave for at most ``seconds``; how it ended."""
    try:
        wire = await shake_hands(address)
    except ConnectionError:
        return "refused"
    try:
        return await asyncio.wait_for(behaviour(wire), seconds)
    except TimeoutError:
        return "cancelled"
    finally:
        wire.writer.close()
