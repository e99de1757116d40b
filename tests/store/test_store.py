"""The store: only valid messages enter, duplicates and forks are recognised, bad input loses nothing."""

from __future__ import annotations

import orjson
import pytest

from ssblab import Keypair, create_message
from ssblab.pipeline.sources import read_source
from ssblab.pipeline.verify import verify_path
from ssblab.store import Store, export_jsonl, write_log_offset
from tests.signed import signed_posts


def _jsonl(path, messages, extra_lines=()):
    lines = [orjson.dumps(m.value) for m in messages] + list(extra_lines)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_append_validates_and_reopens(tmp_path, alice: Keypair, bob: Keypair) -> None:
    a, b = signed_posts(alice, 5), signed_posts(bob, 3)
    with Store(tmp_path / "s") as store:
        report = store.append([a[0], b[0], a[1], b[1], b[2], a[2]])
        assert (report.valid, report.invalid) == (6, 0)
    with Store(tmp_path / "s") as store:
        assert store.head(alice.id).sequence == 3 and store.head(bob.id).id == b[2].id
        report = store.append(a)  # three already stored, two new
        assert (report.valid, report.duplicates) == (2, 3)
        assert [m.id for m in store.feed(alice.id, since=3)] == [a[3].id, a[4].id]
        assert store.get(a[4].id).value == a[4].value


def test_bad_message_in_the_middle_keeps_every_valid_message(tmp_path, alice: Keypair, bob: Keypair) -> None:
    a, b = signed_posts(alice, 6), signed_posts(bob, 4)
    tampered = {**a[3].value, "timestamp": 0}
    source = _jsonl(tmp_path / "in.jsonl", [a[0], a[1], b[0], a[2], b[1]],
                    [orjson.dumps(tampered), b"{not json", orjson.dumps(a[4].value), orjson.dumps(b[2].value),
                     orjson.dumps(b[3].value)])
    with Store(tmp_path / "s") as store:
        report = store.append(read_source(source))
        assert store.head(alice.id).sequence == 3  # alice stops at her first invalid message
        assert store.head(bob.id).sequence == 4  # bob goes on
        codes = [(e.code, e.sequence) for e in report.errors]
        assert codes == [("signature", 4), ("json", None), ("feed-stopped", 5)]
        assert f"{source}:7" in str(report.errors[1])  # the place of an unparseable line
        assert store.count() == 7


def test_fork_is_recorded_and_stops_the_feed(tmp_path, alice: Keypair) -> None:
    a = signed_posts(alice, 4)
    other = create_message(alice, {"type": "post", "text": "another third"}, previous=a[1], timestamp=9)
    with Store(tmp_path / "s") as store:
        store.append(a)
        report = store.append([other, create_message(alice, {"type": "x12"}, previous=a[3], timestamp=10)])
        assert [e.code for e in report.errors] == ["fork", "feed-stopped"]
        (fork,) = store.forks()
        assert (fork.sequence, fork.known_id, fork.conflicting.id) == (3, a[2].id, other.id)
    with Store(tmp_path / "s") as store:  # the stop survives a reopen
        late = create_message(alice, {"type": "post"}, previous=a[3], timestamp=11)
        assert store.append([late]).errors[0].code == "feed-stopped"
    report = verify_path(tmp_path / "s")
    assert report.ok and len(report.forks) == 1 and report.valid == 4


def test_unsigned_fork_claim_is_just_invalid(tmp_path, alice: Keypair) -> None:
    a = signed_posts(alice, 3)
    forged = {**a[2].value, "previous": a[0].id}
    with Store(tmp_path / "s") as store:
        store.append(a[:2])
        report = store.append(read_source(_jsonl(tmp_path / "f.jsonl", [], [orjson.dumps(forged)])))
        assert [e.code for e in report.errors] == ["signature"] and not store.forks()


def test_log_offset_roundtrip_and_torn_tail(tmp_path, alice: Keypair) -> None:
    a = signed_posts(alice, 4)
    log = tmp_path / "log.offset"
    write_log_offset(iter(m.to_kvt(5.0) for m in a), log)
    assert [r.message.id for r in read_source(log)] == [m.id for m in a]
    log.write_bytes(log.read_bytes()[:-7])  # a writer killed mid-append
    items = list(read_source(log))
    assert [r.message.id for r in items[:3]] == [m.id for m in a[:3]]
    assert items[3].error.code == "json" and "ends without" in str(items[3].error)


def test_export_then_import_is_identical(tmp_path, alice: Keypair, bob: Keypair) -> None:
    with Store(tmp_path / "a") as store:
        store.append(signed_posts(alice, 3) + signed_posts(bob, 2))
        export_jsonl(store, tmp_path / "out.jsonl")
        export_jsonl(store, tmp_path / "records.jsonl", records=True)
    for name in ("out.jsonl", "records.jsonl"):
        with Store(tmp_path / name.replace(".", "-")) as copy:
            assert copy.append(read_source(tmp_path / name)).valid == 5
    assert verify_path(tmp_path / "records.jsonl").valid == 5


def test_blobs_are_content_addressed(tmp_path) -> None:
    with Store(tmp_path / "s") as store:
        ref = store.blobs.add(b"hello")
        assert store.blobs.get(ref) == b"hello" and store.blobs.size(ref) == 5 and list(store.blobs) == [ref]
        with pytest.raises(Exception, match="not the requested"):
            store.blobs.add(b"other", expected=ref)
        store.blobs.path(ref).write_bytes(b"HELLO")
        with pytest.raises(Exception, match="damaged"):
            store.blobs.get(ref)
