"""Multiserver net~shs addresses: parse, format, and clear errors."""

from __future__ import annotations

import base64

import pytest

from ssblab.net.address import MultiserverAddress, parse_multiserver
from ssblab.net.errors import AddressError

KEY = bytes(range(32))
KEY_TEXT = base64.b64encode(KEY).decode()


@pytest.mark.parametrize(("text", "host"), [
    (f"net:127.0.0.1:8008~shs:{KEY_TEXT}", "127.0.0.1"),
    (f"net:example.org:8008~shs:{KEY_TEXT}", "example.org"),
    (f"net:::1:8008~shs:{KEY_TEXT}", "::1"),
    (f"net:[::1]:8008~shs:{KEY_TEXT}", "::1"),
])
def test_parse(text: str, host: str) -> None:
    address = MultiserverAddress.parse(text)
    assert (address.host, address.port, address.public_key) == (host, 8008, KEY)
    assert address.feed_id == f"@{KEY_TEXT}.ed25519"


def test_format_round_trips() -> None:
    text = f"net:10.0.0.2:1234~shs:{KEY_TEXT}"
    assert str(MultiserverAddress.parse(text)) == text


def test_first_usable_alternative_wins() -> None:
    text = f"ws://host:80~shs:{KEY_TEXT};net:1.2.3.4:8008~shs:{KEY_TEXT}"
    assert parse_multiserver(text).host == "1.2.3.4"


@pytest.mark.parametrize(("text", "message"), [
    ("net:1.2.3.4:8008", "no '~shs:KEY'"),
    (f"tcp:1.2.3.4:8008~shs:{KEY_TEXT}", "not 'net:HOST:PORT'"),
    (f"net:1.2.3.4~shs:{KEY_TEXT}", "decimal port"),
    (f"net:1.2.3.4:x~shs:{KEY_TEXT}", "decimal port"),
    (f"net:1.2.3.4:70000~shs:{KEY_TEXT}", "out of range"),
    ("net:1.2.3.4:8008~noise:abc", "not 'shs:KEY'"),
    ("net:1.2.3.4:8008~shs:***", "not base64"),
    ("net:1.2.3.4:8008~shs:AAAA", "32 bytes"),
])
def test_errors_name_the_part(text: str, message: str) -> None:
    with pytest.raises(AddressError, match=message):
        MultiserverAddress.parse(text)


def test_no_usable_alternative() -> None:
    with pytest.raises(AddressError, match="no usable"):
        parse_multiserver("ws://x:1~shs:abc;;")


def test_package_exports_match_what_the_modules_define() -> None:
    import ssblab.net as net
    from ssblab.net import address, aio, boxstream, errors, muxrpc, packetstream, shs

    for module in (address, aio, boxstream, errors, muxrpc, packetstream, shs):
        assert all(hasattr(module, name) for name in module.__all__), module.__name__
    assert all(hasattr(net, name) for name in net.__all__)
    assert len(set(net.__all__)) == len(net.__all__)
