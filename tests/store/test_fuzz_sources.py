"""The readers of files from outside (issue 19): any bytes of a ``log.offset``, an ssb-db2 ``log.bipf`` or a JSONL
file become messages or invalid records naming their place, never an exception, and a store fed with them keeps
exactly the valid ones."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssblab import Keypair
from ssblab.core import bipf
from ssblab.pipeline.sources import read_source
from ssblab.store import Store, write_log_offset
from ssblab.store.db2 import BLOCK_SIZE, read_db2
from ssblab.store.sources import parse_record
from tests.signed import signed_posts

POSTS = signed_posts(Keypair.generate(bytes([7]) * 32), 6)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _log(path: Path) -> bytes:
    write_log_offset(iter(m.to_kvt(1.0) for m in POSTS), path)
    return path.read_bytes()


def _log_bipf() -> bytes:
    """The records of `POSTS` as ssb-db2 lays them out: one block of ``length:u16le | BIPF`` records."""
    records = [bipf.encode(m.to_kvt(1.0)) for m in POSTS]
    return b"".join(struct.pack("<H", len(r)) + r for r in records)


def _mutate(data: bytes, seed: int) -> bytes:
    rng = random.Random(seed)
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        action, at = rng.randrange(4), rng.randrange(len(out))
        if action == 0:
            del out[at:]
        elif action == 1:
            out[at] ^= 1 << rng.randrange(8)
        elif action == 2:
            out[at:at] = rng.randbytes(rng.randint(1, 9))
        else:
            out[at:at + 4] = (rng.choice([0, 2**31, 2**32 - 1, len(out)])).to_bytes(4, "big")
        if not out:
            out = bytearray(b"\x00")
    return bytes(out)


def _check_items(items: list, source: Path) -> None:
    for item in items:  # a message, an error, or a record skipped on purpose (a deleted one in log.bipf)
        assert [item.message, item.error, item.skipped, item.native].count(None) == 3
        assert item.error is None or (str(source) in item.where and item.error.code)


@settings(SETTINGS, max_examples=60)  # each example opens a store (a file, fsync'd)
@given(st.integers(0, 2**32))
def test_fuzz_log_offset_mutations(tmp_path_factory: pytest.TempPathFactory, seed: int) -> None:
    folder = tmp_path_factory.mktemp("log")
    source = folder / "log.offset"
    source.write_bytes(_mutate(_log(folder / "clean"), seed))
    items = list(read_source(source, kind="log.offset"))
    _check_items(items, source)
    with Store(folder / "s") as store:
        report = store.append(items)
        assert store.count() == report.valid <= len(POSTS)


@SETTINGS
@given(st.binary(max_size=400))
def test_fuzz_log_offset_random_bytes(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    source = tmp_path_factory.mktemp("log") / "log.offset"
    source.write_bytes(data)
    _check_items(list(read_source(source, kind="log.offset")), source)


@settings(SETTINGS, max_examples=60)
@given(st.integers(0, 2**32), st.booleans())
def test_fuzz_log_bipf_mutations(tmp_path_factory: pytest.TempPathFactory, seed: int, whole_block: bool) -> None:
    folder = tmp_path_factory.mktemp("db2")
    source = folder / "log.bipf"
    data = _mutate(_log_bipf(), seed)[:BLOCK_SIZE]
    source.write_bytes(data.ljust(BLOCK_SIZE, b"\x00") if whole_block else data)  # a full block, or a torn one
    items = list(read_source(source, kind="ssb-db2"))
    _check_items(items, source)
    _check_items(list(read_db2(source)), source)  # the import's route: values parsed from BIPF, not from JSON
    with Store(folder / "s") as store:
        report = store.append(items)
        assert store.count() == report.valid <= len(POSTS)


@SETTINGS
@given(st.binary(max_size=400), st.booleans())
def test_fuzz_log_bipf_random_bytes(tmp_path_factory: pytest.TempPathFactory, data: bytes, whole_block: bool) -> None:
    source = tmp_path_factory.mktemp("db2") / "log.bipf"
    source.write_bytes(data.ljust(BLOCK_SIZE, b"\x00") if whole_block else data)
    _check_items(list(read_source(source, kind="ssb-db2")), source)


def test_the_clean_log_bipf_reads_whole(tmp_path: Path) -> None:
    source = tmp_path / "log.bipf"
    source.write_bytes(_log_bipf().ljust(BLOCK_SIZE, b"\x00"))
    assert [item.message.id for item in read_source(source, kind="ssb-db2")] == [m.id for m in POSTS]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | st.sampled_from([orjson.dumps(POSTS[0].value)]).map(lambda b: _mutate(b, len(b))))
def test_fuzz_jsonl_records(line: bytes) -> None:
    item = parse_record(line, "f.jsonl:1")
    assert (item.message is None) != (item.error is None)
    assert item.error is None or "f.jsonl:1" in str(item.error)


def test_a_jsonl_file_of_every_mutation_imports_without_raising(tmp_path: Path) -> None:
    clean = [orjson.dumps(m.value) for m in POSTS]
    lines = [_mutate(line, seed) for seed, line in enumerate(clean * 20)]
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
    items = list(read_source(source, kind="jsonl"))
    _check_items(items, source)
    with Store(tmp_path / "s") as store:
        report = store.append(items)
        assert store.count() == report.valid and report.checked == len(items)
