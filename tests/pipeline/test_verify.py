"""Verification on both engines decides every message exactly as the single-process `FeedValidator` does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from ssblab.core.validate import FeedValidator
from ssblab.pipeline.facts import FACT_FIELDS, split_facts
from ssblab.pipeline.sources import iter_split, plan_splits, read_source
from ssblab.pipeline.spark import raw_messages, verdicts_of
from ssblab.pipeline.verdicts import Fact, replay_feed
from ssblab.pipeline.verify import verify_local, verify_path, verify_spark
from ssblab.store import Store, write_log_offset
from tests.pipeline.faults import write_fault_log

SMALL_SPLITS = 30_000  # bytes: many splits, so feeds and faults straddle task boundaries


def single_process_verdicts(path: Path) -> list[tuple[str, str, str | None, str | None]]:
    """(where, verdict, code, message) per record, from `FeedValidator` in log order."""
    validator = FeedValidator()
    out = []
    for item in read_source(path):
        before = (validator.report.valid, validator.report.duplicates, len(validator.report.errors))
        if item.error is not None:
            validator.reject(item.error)
        else:
            validator.push(item.message)  # type: ignore[arg-type]
        report = validator.report
        if report.valid > before[0]:
            out.append((item.where, "valid", None, None))
        elif report.duplicates > before[1]:
            out.append((item.where, "duplicate", None, None))
        else:
            error = report.errors[before[2]]
            out.append((item.where, "invalid", error.code, str(error)))
    return out


def spark_verdicts(spark: Any, path: Path, where: str) -> list[tuple[str, str, str | None, str | None]]:
    from ssblab.pipeline.facts import fact_error

    rows = verdicts_of(spark, path, split_bytes=SMALL_SPLITS)
    out = []
    for r in rows.orderBy("pos").collect():
        error = fact_error(r.code and r.verdict, r.code, r.detail, r.fatal, r.author, r.sequence_json)
        out.append((f"{where}{r.pos}", r.verdict, r.code, None if error is None else str(error)))
    return out


@pytest.fixture(scope="module")
def fault_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fault_log(tmp_path_factory.mktemp("faults") / "faults.jsonl")


def test_fault_log_has_every_kind_of_fault(fault_log: Path) -> None:
    codes = {e.code for e in verify_path(fault_log).errors}
    assert codes == {"json", "not-object", "order", "previous", "author", "sequence", "timestamp", "hash",
                     "content", "content-type", "box", "signature-format", "size", "signature", "first-message",
                     "sequence-order", "fork", "feed-stopped"}


def test_splits_cover_the_source_once(fault_log: Path) -> None:
    splits = plan_splits(fault_log, split_bytes=SMALL_SPLITS)
    assert len(splits) > 10
    records = [r for s in splits for r in iter_split(s)]
    expected = list(read_source(fault_log))
    assert [r.where for r in records] == [e.where for e in expected]
    assert sum(len(rows) for rows in split_facts(splits, None, False)) == len(expected)


def test_pure_replay_equals_feed_validator(fault_log: Path) -> None:
    """The same two stages without Spark: per-record facts, then each feed replayed in log order."""
    feeds: dict[str, list[Fact]] = {}
    for chunk in split_facts(plan_splits(fault_log, split_bytes=SMALL_SPLITS), None, False):
        for row in chunk:
            r = dict(zip(FACT_FIELDS, row, strict=True))
            fact = Fact(*(r[name] for name in Fact.__slots__))
            feeds.setdefault(r["author"] or f"\0{r['pos']}", []).append(fact)
    verdicts = sorted((f.pos, v, e) for facts in feeds.values() for f, v, e in replay_feed(facts))
    got = [(f"{fault_log}:{pos}", v, e and e.code, e and str(e)) for pos, v, e in verdicts]
    assert got == single_process_verdicts(fault_log)


@pytest.mark.slow  # about a minute on a loaded 2-core machine
def test_every_verdict_equals_the_single_process_one(spark: Any, fault_log: Path) -> None:
    expected = single_process_verdicts(fault_log)
    assert spark_verdicts(spark, fault_log, f"{fault_log}:") == expected
    assert {v for _, v, _, _ in expected} == {"valid", "duplicate", "invalid"}


def test_report_equals_verify_path_for_jsonl(spark: Any, fault_log: Path) -> None:
    single = verify_path(fault_log)
    report = verify_spark(spark, fault_log, split_bytes=SMALL_SPLITS)
    assert report.to_json() == single.to_json()
    assert report.duplicates == single.duplicates and report.heads == single.heads
    assert [(f.author, f.sequence, f.known_id, f.conflicting.id) for f in report.forks] == \
        [(f.author, f.sequence, f.known_id, f.conflicting.id) for f in single.forks]


@pytest.mark.slow  # about a minute on a loaded 2-core machine
def test_log_offset_with_a_torn_tail(spark: Any, fault_log: Path, tmp_path: Path) -> None:
    log = tmp_path / "flume" / "log.offset"
    log.parent.mkdir()
    records = (orjson.loads(line) for line in fault_log.read_bytes().splitlines() if _is_object(line))
    write_log_offset(iter({"key": "k", "value": r, "timestamp": 1.0} if "key" not in r else r for r in records),
                     log)
    log.write_bytes(log.read_bytes()[:-5])
    expected = single_process_verdicts(tmp_path)
    assert expected[-1][2] == "json" and "log.offset ends without" in (expected[-1][3] or "")
    assert spark_verdicts(spark, tmp_path, f"{log}@") == expected
    assert verify_spark(spark, tmp_path, split_bytes=SMALL_SPLITS).to_json() == verify_path(tmp_path).to_json()


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


def test_store_with_fork_evidence(spark: Any, fault_log: Path, tmp_path: Path) -> None:
    with Store(tmp_path / "store") as store:
        store.append(read_source(fault_log))
    single = verify_path(tmp_path / "store")
    report = verify_spark(spark, tmp_path / "store")
    assert single.forks and report.to_json() == single.to_json()
    assert [f.conflicting.id for f in report.forks] == [f.conflicting.id for f in single.forks]


def test_raw_messages_reader(spark: Any, fault_log: Path) -> None:
    rows = raw_messages(spark, fault_log, split_bytes=SMALL_SPLITS).orderBy("pos").collect()
    expected = list(read_source(fault_log))
    assert [r.where for r in rows] == [e.where for e in expected]
    assert all(r.raw for r in rows)


@pytest.mark.parametrize("workers", [1, 2])
def test_local_engine_report_equals_verify_path(fault_log: Path, tmp_path: Path, workers: int) -> None:
    """The local engine's pool: splits replayed in worker processes and stitched, faults across splits included."""
    single = verify_path(fault_log)
    report = verify_local(fault_log, workers=workers, split_bytes=SMALL_SPLITS)
    assert report.to_json() == single.to_json()
    assert report.duplicates == single.duplicates and report.heads == single.heads
    assert [(f.author, f.sequence, f.known_id, f.conflicting.id) for f in report.forks] == \
        [(f.author, f.sequence, f.known_id, f.conflicting.id) for f in single.forks]
    with Store(tmp_path / "store") as store:
        store.append(read_source(fault_log))
    stored = verify_local(tmp_path / "store", workers=workers, split_bytes=SMALL_SPLITS)
    assert stored.forks and stored.to_json() == verify_path(tmp_path / "store").to_json()


@pytest.mark.parametrize("strict", [False, True])
def test_local_clean_chains_decide_as_the_replay(fault_log: Path, tmp_path: Path, strict: bool) -> None:
    """The local engine decides clean chains in one query and replays the rest: every verdict equals the replay
    of every feed (`verdict_rows`), with and without ``strict``, on the faults plus a feed whose first post
    holds a lone surrogate (a finding: valid unless strict, and then the feed stops)."""
    import json

    from ssblab.core import Keypair, create_message
    from ssblab.pipeline import local
    from ssblab.pipeline.verdicts import feed_key, verdict_rows

    odd = Keypair.generate(b"\x07" * 32)
    first = create_message(odd, {"type": "post", "text": "\ud800"}, timestamp=1)
    second = create_message(odd, {"type": "post", "text": "after"}, previous=first, timestamp=2)
    log = tmp_path / "log.jsonl"
    log.write_bytes(fault_log.read_bytes() + b"".join(json.dumps(m.value).encode() + b"\n" for m in (first, second)))
    facts = local.split_tables(plan_splits(log), hmac_key=None, with_content=False, pool=None)[local.FACTS]
    decided = sorted((tuple(row.values()) for row in local.verdicts_table(facts, strict=strict).to_pylist()),
                     key=lambda row: row[0])
    every = sorted(facts.to_pylist(), key=lambda r: (feed_key(r["author"], r["pos"]), r["pos"]))
    assert decided == sorted(verdict_rows(every, strict=strict), key=lambda row: row[0])
    verdicts = {row[2]: row[8] for row in decided}
    assert (verdicts[first.id], verdicts[second.id]) == (("invalid", "invalid") if strict else ("valid", "valid"))
    assert sum(v == "valid" for v in verdicts.values()) > len(decided) // 2  # most feeds took the clean route
