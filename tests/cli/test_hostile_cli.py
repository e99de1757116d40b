"""Careless commands and hostile files on the command line (issue 19, items 6, 7, 11): exit 2 with a message that
names the problem, never a traceback (in process, `main` would raise it), never a secret in the text."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ssblab import Keypair
from ssblab.cli import main
from ssblab.store import Store
from tests.signed import signed_posts

ALICE, BOB = Keypair.generate(bytes([7]) * 32), Keypair.generate(bytes([8]) * 32)
BIG = "1" * 5000  # a JSON integer of 5,000 digits: JS parses Infinity, Python's int() refuses it


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _damaged_secrets(folder: Path) -> tuple[str, dict[str, Path]]:
    """A secret's private key and copies of its file with that key damaged in different ways."""
    folder.mkdir(exist_ok=True)
    good = folder / "secret"
    Keypair.generate(bytes([5]) * 32).write_secret_file(good)
    text = good.read_text()
    private = re.search(r'"private": "([^"]+)\.ed25519"', text).group(1)  # type: ignore[union-attr]
    variants = {
        "truncated": text.replace(private, private[:60]).encode(),
        "one character off": text.replace(private, private[:-3] + "A==").encode(),
        "lone surrogate": text.replace(private, private[:50] + "\\udc00").encode(),
        "control character": text.replace(private, private[:50] + "\x01" + private[50:]).encode(),
        "not UTF-8": text.replace(private, private[:40] + "\udcff", 1).encode("utf-8", "surrogateescape"),
    }
    paths = {}
    for name, body in variants.items():
        paths[name] = folder / name.replace(" ", "-")
        paths[name].write_bytes(body)
    return private, paths


def test_no_error_ever_shows_the_private_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    private, damaged = _damaged_secrets(tmp_path)
    pieces = {private[i:i + 8] for i in range(len(private) - 8)}  # any 8 characters of it
    for name, path in damaged.items():
        for argv in (("keys", "show", path), ("keys", "show", "--json", path)):
            code, out, err = cli(capsys, *argv)
            assert code == 2 and "[secret]" in err, (name, err)
            assert not any(piece in out + err for piece in pieces), (name, err)
    served = subprocess.run([sys.executable, "-m", "ssblab", "serve", "--store", tmp_path / "st", "--identity",
                             damaged["truncated"], "--listen", "127.0.0.1:0"], capture_output=True, text=True,
                            timeout=60)
    assert served.returncode == 2 and "Traceback" not in served.stderr and "not shown" in served.stderr
    assert not any(piece in served.stderr for piece in pieces)


def _lines(messages: list, at: int, line: bytes) -> bytes:
    rows = [orjson.dumps(m.value) for m in messages]
    return b"\n".join([*rows[:at], line, *rows[at:]]) + b"\n"


def test_a_number_too_long_to_hold_is_one_invalid_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One line with a 5,000-digit integer among 1,500 valid messages: that line is read as JS reads it (the number
    rounds to Infinity) and judged as JS judges it (a copy of an old sequence: out of order), naming its feed and
    sequence without printing the number; all else is stored."""
    alice, bob = signed_posts(ALICE, 1000), signed_posts(BOB, 500)
    mixed = [m for pair in zip(alice[:500], bob, strict=True) for m in pair] + alice[500:]
    forged = orjson.dumps({**alice[10].value, "timestamp": 0}).replace(b'"timestamp":0', b'"timestamp":' + BIG.encode())
    source = tmp_path / "in.jsonl"
    source.write_bytes(_lines(mixed, 700, forged))
    code, out, _ = cli(capsys, "import", source, "--store", tmp_path / "s", "--json")
    report = orjson.loads(out)
    assert code == 1 and (report["valid"], report["invalid"], report["stored"]) == (1500, 1, 1500)
    (error,) = report["errors"]
    assert (error["code"], error["author"], error["sequence"]) == ("sequence-order", ALICE.id, 11)
    assert len(error["message"]) < 300  # the number is cut, not printed whole
    code, out, _ = cli(capsys, "verify", source, "--json")
    assert code == 1 and orjson.loads(out)["invalid"] == 1
    with Store(tmp_path / "s", read_only=True) as store:
        assert store.count() == 1500


@pytest.mark.parametrize(("spec", "says"), [
    (b"{garbage", "not a JSON dataset spec"),
    (b"\xff\xfe\x00", "not a JSON dataset spec"),
    (b"[1, 2]", "a JSON object"),
    (b'{"authors": "many", "messages": 3, "seed": 1}', "authors must be a number"),
    (b'{"authors": 3, "messages": 3, "seed": 1, "options": {"colour": "red"}}', "'colour'"),
    (b'{"authors": 3, "messages": 3, "seed": 1, "options": []}', "'options' an object"),
    (b'{"authors": 3, "messages": true, "seed": 1}', "messages must be a number"),
])
def test_generate_refuses_a_garbage_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: bytes,
                                         says: str) -> None:
    (tmp_path / "spec.json").write_bytes(spec)
    code, _, err = cli(capsys, "generate", "--spec", tmp_path / "spec.json", "--out", tmp_path / "o.jsonl")
    assert code == 2 and "[generate-spec]" in err and says in err
    assert not (tmp_path / "o.jsonl").exists()


def test_generate_refuses_more_authors_than_it_can_hold_up_front(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "generate", "--authors", 100_000_000, "--out", tmp_path / "o.jsonl")
    assert code == 2 and "at most 100,000" in err and not (tmp_path / "o.jsonl").exists()
