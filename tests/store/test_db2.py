"""ssb-db2 data written by the real JS ssb-db2@8 (interop/js/db2.js): classic feeds with unicode and private
boxes, a bendy-butt meta feed, a buttwoo feed and a deleted record. Import and verify read it whole, every
message validated, every format counted; a damaged log.bipf gets an error naming the offset and keeps the rest."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ssblab.pipeline.verify import verify_path
from ssblab.store import Store
from ssblab.store.db2 import BLOCK_SIZE, is_db2, locate, plan, read_db2, records
from tests.jsref import requires_node, run_js

pytestmark = [requires_node, pytest.mark.interop]
MESSAGES = 150


@pytest.fixture(scope="module")
def db2(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("db2")
    written = json.loads(run_js("db2.js", [str(folder), str(MESSAGES)], timeout=120))
    return folder, written


def js_ids(written: dict[str, Any], fmt: str = "classic") -> dict[str, list[str]]:
    feeds: dict[str, list[tuple[int, str]]] = {}
    for m in written["messages"]:
        if m["format"] == fmt:
            feeds.setdefault(m["author"], []).append((m["sequence"], m["key"]))
    return {feed: [key for _, key in sorted(items)] for feed, items in feeds.items()}


def store_ids(store: Store) -> dict[str, list[str]]:
    feeds: dict[str, list[str]] = {}
    for author, msg_id in store.db.execute("SELECT author, id FROM messages ORDER BY author, sequence"):
        feeds.setdefault(author, []).append(msg_id)
    return feeds


def ssblab(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ssblab", *args], capture_output=True, timeout=120, check=False)


def test_import_reads_every_message_of_every_format(db2: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    folder, written = db2
    assert locate(folder).stat().st_size > BLOCK_SIZE  # several blocks
    done = ssblab("import", str(folder), "--store", str(tmp_path / "s"), "--json")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    formats = Counter(m["format"] for m in written["messages"])
    assert report["valid"] == formats["classic"] == MESSAGES - 1 and report["errors"] == []
    assert report["formats"] == {"bendybutt-v1": formats["bendybutt-v1"], "buttwoo-v1": formats["buttwoo-v1"]}
    assert report["skipped"] == {"deleted": 1}
    with Store(tmp_path / "s") as store:
        assert store_ids(store) == js_ids(written)  # unicode, numbers and private boxes: the same ids as JS
        assert store.stats().private == sum(1 for i in range(MESSAGES - 1) if i % 7 == 3)
        assert store.get(written["deleted"][0]) is None
    again = json.loads(ssblab("import", str(folder), "--store", str(tmp_path / "s"), "--json").stdout)
    assert again["valid"] == 0 and again["duplicates"] == MESSAGES - 1  # resumable: nothing twice


@pytest.mark.parametrize("where", ["folder", "db2", "log.bipf"])
def test_verify_takes_each_way_of_naming_the_log(db2: tuple[Path, dict[str, Any]], where: str) -> None:
    folder, written = db2
    path = {"folder": folder, "db2": folder / "db2", "log.bipf": folder / "db2" / "log.bipf"}[where]
    assert is_db2(path)
    report = verify_path(path)
    assert report.ok and report.valid == len(written["messages"]) and report.skipped == {"deleted": 1}


def test_splits_cover_the_log_once(db2: tuple[Path, dict[str, Any]]) -> None:
    folder, _ = db2
    whole = list(records(folder, json=True))
    parts = [r for start, end in plan(folder, BLOCK_SIZE) for r in records(folder, start, end, json=True)]
    assert parts == whole and len(plan(folder, BLOCK_SIZE)) >= 2
    classic = [r for r in whole if r.format == "classic" and r.raw is not None]
    assert all(json.loads(r.raw) == json.loads(json.dumps(r.value)) for r in classic)  # type: ignore[arg-type]
    assert all(r.received for r in whole if not r.deleted)


def damaged(folder: Path, tmp_path: Path, change: Any) -> Path:
    copy = tmp_path / "damaged"
    shutil.copytree(folder / "db2", copy / "db2", ignore=shutil.ignore_patterns("indexes", "jit"))
    log = copy / "db2" / "log.bipf"
    data = bytearray(log.read_bytes())
    log.write_bytes(change(data))
    return copy


def offsets(folder: Path) -> list[int]:
    return [r.offset for r in records(folder) if not r.deleted]


def test_garbage_bipf_is_named_and_the_rest_is_read(db2: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    folder, _ = db2
    bad = offsets(folder)[10]
    broken = next(r.value for r in records(folder) if r.offset == bad)

    def garble(data: bytearray) -> bytes:
        data[bad + 2:bad + 6] = b"\xff\xff\xff\xff"  # a tag that claims far more than the record holds
        return bytes(data)

    copy = damaged(folder, tmp_path, garble)
    report = verify_path(copy)
    [error] = [e for e in report.errors if f"offset {bad}" in str(e)]
    assert f"offset {bad} is not BIPF" in str(error)
    lost = [r for r in records(folder) if r.value and r.value["author"] == broken["author"]
            and r.value["sequence"] >= broken["sequence"]]  # its feed has a gap there: JS stops it too
    assert report.valid == len(offsets(folder)) - len(lost)


def test_a_record_longer_than_its_block_ends_that_block(db2: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    folder, _ = db2
    first = offsets(folder)[0]

    def stretch(data: bytearray) -> bytes:
        struct.pack_into("<H", data, first, BLOCK_SIZE - 1)
        return bytes(data)

    copy = damaged(folder, tmp_path, stretch)
    got = list(records(copy))
    assert "past" not in (got[0].error or "") and f"offset {first} has {BLOCK_SIZE - 1} bytes" in (got[0].error or "")
    assert [r.offset for r in got[1:] if not r.deleted] == [o for o in offsets(folder) if o >= BLOCK_SIZE]


def test_a_torn_last_block_keeps_everything_before(db2: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    folder, written = db2
    last = offsets(folder)[-1]
    copy = damaged(folder, tmp_path, lambda data: bytes(data[:last + 5]))
    done = ssblab("import", str(copy), "--store", str(tmp_path / "s"), "--json")
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert [e["code"] for e in report["errors"]] == ["json"]
    assert f"offset {last}" in report["errors"][0]["message"] and "torn" in report["errors"][0]["message"]
    kept = [r for r in read_db2(copy) if r.message is not None or r.native is not None]
    assert len(kept) == len(written["messages"]) - 1


def test_unknown_formats_are_counted_not_dropped(db2: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    folder, _ = db2
    target = next(r for r in records(folder) if r.format == "buttwoo-v1")

    def rename(data: bytearray) -> bytes:
        at = data.index(b"ssb:feed/buttwoo-v1/", target.offset)
        data[at:at + 20] = b"ssb:feed/buttwoo-v9/"
        return bytes(data)

    report = verify_path(damaged(folder, tmp_path, rename))
    assert [(e.code, e.fatal) for e in report.errors if e.code == "format"] == [("format", False)]
    assert "buttwoo-v9" in str(report.errors[0])
