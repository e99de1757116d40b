"""Fuzzing the decoders: any bytes either decode or raise an `ArchiveError`; never another exception or a hang.

Mutations of real blobs (truncation, bit flips, byte runs, splices) reach deep into the FlatBuffer and the
columns, which random bytes alone would not. The same invariant holds for dictionaries and Bundles.
"""

from __future__ import annotations

import contextlib
import hashlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.archive import block as blocks
from ssblab.archive import rebuild
from ssblab.archive.arrow import block_table
from ssblab.archive.bundle import Archive, build_archives
from ssblab.archive.dictionaries import Dictionaries
from ssblab.archive.errors import ArchiveError
from ssblab.archive.flat import read_bundle, read_dictionary
from ssblab.core.message import Message
from tests.archive.routes import COMPILED, pure_python


@pytest.fixture(scope="module")
def sample(feeds: list[list[Message]]) -> tuple[Archive, Dictionaries, dict[bytes, bytes]]:
    (archive,), dicts = build_archives([feeds[1][:120]], 60)
    store = {hashlib.sha256(b).digest(): b for b in archive.blobs()}
    return archive, dicts, store


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    action = rng.randrange(5)
    if action == 0:
        return bytes(out[: rng.randrange(len(out))])
    if action == 1:
        for _ in range(rng.randint(1, 4)):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    elif action == 2:
        at = rng.randrange(len(out))
        out[at : at + 4] = rng.randbytes(4)
    elif action == 3:
        at = rng.randrange(len(out))
        out[at:at] = rng.randbytes(rng.randint(1, 8))
    else:
        a, b = sorted(rng.randrange(len(out)) for _ in range(2))
        out[a:b] = out[a:b][::-1]
    return bytes(out)


def decode_all(data: bytes, dicts: Dictionaries) -> tuple[str, object]:
    """("decoded", everything decoded) or ("error", the error class): the same on both routes."""
    try:
        blk = blocks.decode_block(data, dicts)
        return "decoded", (rebuild.encodings(blk, dicts), block_table(blk, dicts))
    except ArchiveError as exc:
        return "error", type(exc).__name__


def test_mutated_blocks_decode_or_raise(sample: tuple[Archive, Dictionaries, dict]) -> None:
    """Both routes (when the extension is built) decode the same damaged blobs to the same rows, or both raise."""
    archive, dicts, _ = sample
    rng = random.Random(7)
    outcomes = {"error": 0, "decoded": 0}
    for _ in range(400):
        data = mutate(archive.blocks[rng.randrange(2)], rng)
        outcome = decode_all(data, dicts)
        if COMPILED:
            with pure_python():
                assert decode_all(data, dicts) == outcome
        outcomes[outcome[0]] += 1
    assert outcomes["error"] > 100  # most damage is noticed by the decoder itself; the blob id catches the rest


def test_mutated_dictionaries_and_bundles_raise_archive_errors(sample: tuple[Archive, Dictionaries, dict]) -> None:
    archive, _, _ = sample
    rng = random.Random(8)
    for _ in range(300):
        blob = rng.choice([*archive.dictionaries, archive.bundle_blob])
        try:
            data = mutate(blob, rng)
            read_dictionary(data, "fuzz") if blob is not archive.bundle_blob else read_bundle(data)
        except ArchiveError:
            pass


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_raise_archive_errors(data: bytes) -> None:
    for reader in (lambda d: blocks.decode_block(d, Dictionaries()), read_bundle, lambda d: read_dictionary(d, "x")):
        for candidate in (data, b"\x0c\x00\x00\x00BIP2" + data):
            with contextlib.suppress(ArchiveError):
                reader(candidate)
            with pure_python(), contextlib.suppress(ArchiveError):
                reader(candidate)


def test_a_flexbuffer_with_a_bad_width_is_malformed() -> None:
    with pytest.raises(ArchiveError, match="content column"):  # the flexbuffers reader raised KeyError here
        blocks._read_flex(b"\x00\x00\x00$\x00", "block")


def test_wrong_dictionaries_are_named(sample: tuple[Archive, Dictionaries, dict]) -> None:
    archive, _, _ = sample
    with pytest.raises(ArchiveError, match="other dictionaries"):
        blocks.decode_block(archive.blocks[0], Dictionaries())
