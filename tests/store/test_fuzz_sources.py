"""The readers of files from outside (issue 19): any bytes of a ``log.offset`` or a JSONL file become messages or
invalid records naming their place, never an exception, and a store fed with them keeps exactly the valid ones."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssblab import Keypair
from ssblab.pipeline.sources import read_source
from ssblab.store import Store, write_log_offset
from ssblab.store.sources import parse_record
from tests.signed import signed_posts

POSTS = signed_posts(Keypair.generate(bytes([7]) * 32), 6)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _log(path: Path) -> bytes:
    write_log_offset(iter(m.to_kvt(1.0) for m in POSTS), path)
    return path.read_bytes()


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
    for item in items:
        assert (item.message is None) != (item.error is None)
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
