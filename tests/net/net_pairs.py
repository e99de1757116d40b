"""In-memory harnesses: two endpoints wired together, so what one sends is what the other parses.

``split`` picks how bytes travel: None = whole buffers, 1 = one byte at a time, n = chunks of n bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nacl.public import PrivateKey
from nacl.signing import SigningKey

from ssblab.net.muxrpc import CallType, MuxRpcConnection, MuxRpcEvent
from ssblab.net.shs import ClientHandshake, HandshakeComplete, ServerHandshake


def chunks(data: bytes, split: int | None) -> Iterator[bytes]:
    if split is None:
        yield data
        return
    for start in range(0, len(data), split):
        yield data[start:start + split]


def drain(machine: Any, data: bytes, split: int | None) -> list[Any]:
    """Feed ``data`` to anything with receive_data/next_event and collect every event."""
    events = []
    for piece in chunks(data, split):
        machine.receive_data(piece)
        while (event := machine.next_event()) is not None:
            events.append(event)
    return events


def keys(seed: int) -> SigningKey:
    return SigningKey(bytes([seed]) * 32)


def handshake_pair(network_key: bytes | None = None) -> tuple[ClientHandshake, ServerHandshake]:
    client_key, server_key = keys(1), keys(2)
    extra = {} if network_key is None else {"network_key": network_key}
    client = ClientHandshake(client_key, bytes(server_key.verify_key), PrivateKey(bytes([3]) * 32), **extra)
    server = ServerHandshake(server_key, PrivateKey(bytes([4]) * 32), **extra)
    return client, server


def run_handshake(split: int | None = None) -> tuple[HandshakeComplete, HandshakeComplete]:
    """Full handshake between a client and a server; returns (client_done, server_done)."""
    client, server = handshake_pair()
    assert drain(server, client.data_to_send(), split) == []
    assert drain(client, server.data_to_send(), split) == []
    (server_done,) = drain(server, client.data_to_send(), split)
    (client_done,) = drain(client, server.data_to_send(), split)
    return client_done, server_done


class ConnectionPair:
    """Two muxrpc endpoints, ``a`` and ``b``; :meth:`deliver` moves one side's output to the other."""

    def __init__(self, manifest_a: Mapping[str, CallType] | None = None,
                 manifest_b: Mapping[str, CallType] | None = None, split: int | None = None) -> None:
        self.a = MuxRpcConnection(manifest_a)
        self.b = MuxRpcConnection(manifest_b)
        self.split = split

    def deliver(self, source: MuxRpcConnection) -> list[MuxRpcEvent]:
        """Send what ``source`` queued to its peer; return the peer's events."""
        target = self.b if source is self.a else self.a
        return drain(target, source.data_to_send(), self.split)

    def is_quiet(self) -> bool:
        """True when neither side has bytes waiting, i.e. nobody is left waiting on an answer in flight."""
        return self.a.data_to_send() == b"" and self.b.data_to_send() == b""
