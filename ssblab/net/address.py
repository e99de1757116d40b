"""Multiserver addresses for TCP + secret handshake: ``net:HOST:PORT~shs:KEY``.

Strategy (JS multiserver, net and shs plugins): an address is a list of alternatives separated by ``;``;
each is a transport and a transform joined by ``~``. Only ``net`` + ``shs`` is understood here;
:func:`parse_multiserver` returns the first alternative it understands. KEY is canonical base64 of the
32-byte ed25519 public key. The host is split from the port at the last colon, so bare IPv6
(``net:::1:8008``) works as in JS, and bracketed IPv6 is accepted too.

Invariant: anything that is not a well-formed net/shs address raises :class:`AddressError` naming the part.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from ssblab.core.errors import InvalidRef
from ssblab.core.refs import decode_canonical_b64
from ssblab.net.errors import AddressError

__all__ = ["MultiserverAddress", "parse_multiserver"]


@dataclass(frozen=True)
class MultiserverAddress:
    """A TCP endpoint and the long-term public key the handshake must find there.

    Examples:
        >>> address = MultiserverAddress.parse("net:127.0.0.1:8008~shs:" + "A" * 43 + "=")
        >>> address.host, address.port, address.public_key == bytes(32)
        ('127.0.0.1', 8008, True)
        >>> str(address) == "net:127.0.0.1:8008~shs:" + "A" * 43 + "="
        True
    """

    host: str
    port: int
    public_key: bytes

    def __post_init__(self) -> None:
        if len(self.public_key) != 32:
            raise AddressError(f"multiserver shs: public key must be 32 bytes, got {len(self.public_key)}")
        if not 0 < self.port < 2**16:
            raise AddressError(f"multiserver net: port {self.port} out of range 1..65535")

    @classmethod
    def parse(cls, text: str) -> MultiserverAddress:
        """Parse exactly one ``net:HOST:PORT~shs:KEY`` alternative."""
        transport, sep, transform = text.strip().partition("~")
        if not sep:
            raise AddressError(f"multiserver: {text!r} has no '~shs:KEY' transform")
        host, port = _parse_net(transport)
        return cls(host, port, _parse_shs(transform))

    @property
    def feed_id(self) -> str:
        """The SSB identity the address names (``@KEY.ed25519``)."""
        return f"@{base64.b64encode(self.public_key).decode()}.ed25519"

    def __str__(self) -> str:
        return f"net:{self.host}:{self.port}~shs:{base64.b64encode(self.public_key).decode()}"


def parse_multiserver(text: str) -> MultiserverAddress:
    """The first ``net``/``shs`` alternative of a ``;``-separated multiserver address."""
    alternatives = [part for part in text.split(";") if part.strip()]
    errors = []
    for alternative in alternatives:
        try:
            return MultiserverAddress.parse(alternative)
        except AddressError as exc:
            errors.append(str(exc))
    raise AddressError(f"multiserver: no usable net~shs alternative in {text!r} ({'; '.join(errors)})")


def _parse_net(transport: str) -> tuple[str, int]:
    scheme, sep, rest = transport.partition(":")
    if scheme != "net" or not sep:
        raise AddressError(f"multiserver: transport {transport!r} is not 'net:HOST:PORT'")
    host, sep, port_text = rest.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise AddressError(f"multiserver net: {transport!r} needs HOST:PORT with a decimal port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port_text)


def _parse_shs(transform: str) -> bytes:
    scheme, sep, key_text = transform.partition(":")
    if scheme != "shs" or not sep:
        raise AddressError(f"multiserver: transform {transform!r} is not 'shs:KEY'")
    try:
        return decode_canonical_b64(key_text)
    except InvalidRef as exc:
        raise AddressError(f"multiserver shs: key {key_text!r}: {exc}") from exc
