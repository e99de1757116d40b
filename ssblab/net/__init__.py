"""SSB networking: sans-IO protocol cores (shs1, box-stream, packet-stream, muxrpc, multiserver addresses) and
a thin asyncio shell (:mod:`ssblab.net.aio`). The cores take bytes in and give events and bytes out;
randomness (ephemeral keys) comes in as arguments. ``ssblab.net.aio`` is not imported here, so importing the
cores never touches asyncio.
"""

from ssblab.net.address import MultiserverAddress, parse_multiserver
from ssblab.net.boxstream import BoxStreamDecoder, BoxStreamEncoder, BoxStreamGoodbye
from ssblab.net.errors import (
    AddressError,
    BoxStreamError,
    HandshakeError,
    LocalProtocolError,
    MuxRpcError,
    NetProtocolError,
    PacketStreamError,
    RemoteCallError,
)
from ssblab.net.muxrpc import (
    CallFailed,
    CallRejected,
    CallResponse,
    CallType,
    ConnectionClosed,
    ErrorBody,
    IncomingCall,
    MuxRpcConnection,
    StreamData,
    StreamEnded,
)
from ssblab.net.packetstream import BodyType, Packet, PacketStreamDecoder, PacketStreamGoodbye, encode_packet
from ssblab.net.shs import (
    MAIN_NETWORK_KEY,
    BoxStreamKeys,
    ClientHandshake,
    HandshakeComplete,
    HandshakeResult,
    ServerHandshake,
)

__all__ = [
    "MAIN_NETWORK_KEY",
    "AddressError",
    "BodyType",
    "BoxStreamDecoder",
    "BoxStreamEncoder",
    "BoxStreamError",
    "BoxStreamGoodbye",
    "BoxStreamKeys",
    "CallFailed",
    "CallRejected",
    "CallResponse",
    "CallType",
    "ClientHandshake",
    "ConnectionClosed",
    "ErrorBody",
    "HandshakeComplete",
    "HandshakeError",
    "HandshakeResult",
    "IncomingCall",
    "LocalProtocolError",
    "MultiserverAddress",
    "MuxRpcConnection",
    "MuxRpcError",
    "NetProtocolError",
    "Packet",
    "PacketStreamDecoder",
    "PacketStreamError",
    "PacketStreamGoodbye",
    "RemoteCallError",
    "ServerHandshake",
    "StreamData",
    "StreamEnded",
    "encode_packet",
    "parse_multiserver",
]
