"""One error tree: what the pure packages raise on purpose is an `SsbError` with a stable code."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from nacl.public import PrivateKey
from nacl.signing import SigningKey

from ssblab.archive import ArchiveOverflow, dense, svb
from ssblab.archive.pieces import Pieces, gather
from ssblab.core import InvalidJson, InvalidMessage, Keypair, SsbError, UsageError, create_message
from ssblab.core.encoding import encode
from ssblab.core.varint import encode_uvarint
from ssblab.net import LocalProtocolError
from ssblab.net.boxstream import BoxStreamEncoder
from ssblab.net.shs import ServerHandshake

BUILTINS = {"ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError", "OverflowError", "Exception"}
ROOT = Path(__file__).resolve().parents[1] / "ssblab"
PACKAGES = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())  # every layer


def _plain_raises(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name) and target.id in BUILTINS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} raises {target.id}")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_plain_builtin_raise(package: str) -> None:
    files = [p for p in (ROOT / package).rglob("*.py") if "fb" not in p.relative_to(ROOT).parts]
    assert [hit for path in files for hit in _plain_raises(path)] == []


def test_a_value_json_cannot_hold_is_invalid_json() -> None:
    with pytest.raises(InvalidJson, match="not a JSON value: set") as info:
        encode({"a": {1, 2}})
    assert info.value.code == "json-value"
    keypair = Keypair.generate(bytes(32))
    with pytest.raises(InvalidMessage, match="not a JSON value") as message:
        create_message(keypair, {"type": "post", "tags": {"x"}}, timestamp=1)
    assert message.value.code == "json"


def test_misuse_is_a_usage_error_and_still_a_value_error() -> None:
    with pytest.raises(UsageError, match="not negative") as info:
        encode_uvarint(-1)
    assert isinstance(info.value, ValueError) and info.value.code == "usage"
    with pytest.raises(LocalProtocolError, match="32 bytes") as net:
        ServerHandshake(SigningKey(bytes(32)), PrivateKey(bytes([4]) * 32), b"short")
    assert isinstance(net.value, UsageError) and net.value.code == "net-local"
    with pytest.raises(LocalProtocolError, match="24-byte nonce"):
        BoxStreamEncoder(bytes(32), bytes(23))


def test_a_value_past_a_column_is_an_archive_overflow() -> None:
    for call in (lambda: svb.encode([2**32], "1234"), lambda: dense.encode(np.array([2**40], np.int64), 1)):
        with pytest.raises(ArchiveOverflow, match="does not fit") as info:
            call()
        assert isinstance(info.value, SsbError) and isinstance(info.value, ValueError)
        assert info.value.code == "archive-overflow"
    big = Pieces(bytes(2**20), np.array([0, 2**20], np.int64))  # 2**11 gathers of it pass 32-bit offsets
    with pytest.raises(ArchiveOverflow, match="a gather of"):
        gather(big, np.zeros(2**11, np.int64))
