"""Verification of any source on either engine: one `ValidationReport`, the same for both.

Strategy: the source is cut into splits, and each split is replayed on its own by the core's `FeedValidator`
(`verdicts.replay_split`), presuming each feed's state at the split's start; the splits' runs are then stitched
in log order (`verdicts.stitch`). Only feeds whose presumed state was wrong (forks, gaps or stops that straddle
splits: faulty data) are decided again whole: locally by `verdicts.decide_feeds`, on Spark by the shuffle route
(per-message facts, then each feed replayed after a shuffle). The local engine replays the splits in a pool of
processes, or in this process when the source is small; Spark in its Python workers, sending back only the small
per-split runs.

Invariant: the report equals the single-process `FeedValidator`'s over the same records, on both engines and for
any input (tests/pipeline/test_verify.py); for a store, the fork evidence it holds is reported too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ssblab.core.message import hmac_key_bytes
from ssblab.core.validate import FeedState, FeedValidator, Finding, Fork, ValidationReport
from ssblab.pipeline import pool
from ssblab.pipeline.engines import Engine, SparkEngine, resolve_engine
from ssblab.pipeline.facts import CLASSIC, fact_error
from ssblab.pipeline.sources import iter_split, plan_splits, received_of, resolve_source
from ssblab.pipeline.splits import SPLIT_BYTES, Split
from ssblab.pipeline.verdicts import (
    DUPLICATE,
    INVALID,
    VALID,
    Decided,
    ForkRow,
    SplitRun,
    decide_feeds,
    merge_exact,
    push_record,
    replay_split,
    stitch,
)

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from pyspark.sql import DataFrame, SparkSession

__all__ = ["fork_evidence", "verify", "verify_local", "verify_path", "verify_spark"]

Progress = Callable[[int], None]


def verify(path: str | Path, *, engine: str | Engine | None = None, spark: SparkSession | None = None,
           master: str | None = None, hmac_key: Any = None, strict: bool = False,
           on_records: Progress | None = None) -> ValidationReport:
    """Validate every message at ``path`` on the local engine (the default) or on Spark.

    Args:
        path: a JSONL file, a log.offset (or an ssb-fixtures folder), a store folder, or an archive.
        engine: ``"local"`` or ``"spark"`` (default: Spark when ``spark`` or ``master`` is given).
        spark: a SparkSession to run on.
        master: a Spark master URL to start a session on.
        hmac_key: a test network's HMAC key.
        strict: a message that breaks a strict JSON rule JS accepts (a finding) is invalid.
        on_records: called with how many records were checked, as they are.

    Returns:
        The `ValidationReport`; its ``to_json()`` is the ``ssblab verify --json`` contract.

    Examples:
        >>> verify("feeds.jsonl").ok  # doctest: +SKIP
        True
    """
    chosen = resolve_engine(engine, spark=spark, master=master)
    if isinstance(chosen, SparkEngine):
        return verify_spark(chosen.spark, path, hmac_key=hmac_key, strict=strict,
                            progress=False if on_records else None)
    return verify_local(path, hmac_key=hmac_key, strict=strict, workers=chosen.workers, on_records=on_records)


def verify_local(path: str | Path, *, hmac_key: Any = None, strict: bool = False, workers: int | None = None,
                 split_bytes: int | None = None, on_records: Progress | None = None) -> ValidationReport:
    """`verify` on the local engine: a pool of processes for a large source, this process for a small one.

    ``split_bytes`` cuts the source into splits of that size and replays them in the pool whatever its size.
    """
    key = hmac_key_bytes(hmac_key)
    workers = workers or pool.cores()
    if split_bytes is None and not pool.is_parallel(path, workers):
        return _with_forks(path, _verify_inline(plan_splits(path), key, strict, on_records))
    splits = pool.local_splits(path, workers) if split_bytes is None else plan_splits(path, split_bytes=split_bytes)
    with pool.worker_pool(workers) as workers_pool:
        runs = list(_replayed(workers_pool, splits, key, strict, on_records))
    stitched, broken = stitch(runs)
    if broken:
        records = (record for split in splits for record in iter_split(split))
        merge_exact(stitched, decide_feeds(records, frozenset(broken), key, strict))
    stitched.report.forks.extend(fork_evidence(path, stitched.forks))
    return _with_forks(path, stitched.report)


def _verify_inline(splits: Sequence[Split], key: bytes | None, strict: bool,
                   on_records: Progress | None) -> ValidationReport:
    validator = FeedValidator(key, strict=strict)
    for split in splits:
        for record in iter_split(split):
            push_record(validator, record)
            if on_records:
                on_records(1)
    return validator.report


class _Replay:
    """`replay_split` of a split with its options bound (picklable for the pool)."""

    def __init__(self, key: bytes | None, strict: bool) -> None:
        self.key, self.strict = key, strict

    def __call__(self, split: Split) -> SplitRun:
        return replay_split(iter_split(split), self.key, self.strict)


def _replayed(workers: Executor | None, splits: Sequence[Split], key: bytes | None, strict: bool,
              on_records: Progress | None) -> list[SplitRun]:
    runs = []
    for run in pool.pool_map(workers, _Replay(key, strict), splits):
        if on_records:
            on_records(run.loose[0] + sum(r.counts[0] for r in run.runs))
        runs.append(run)
    return runs


def _with_forks(path: str | Path, report: ValidationReport) -> ValidationReport:
    """Add the fork evidence a store holds (its own, from earlier imports and replications)."""
    kind, where = resolve_source(path)
    if kind == "store":
        from ssblab.store.store import Store

        with Store(where, read_only=True) as store:
            report.forks.extend(store.forks())
    return report


def fork_evidence(path: str | Path, forks: list[ForkRow]) -> list[Fork]:
    """`Fork`s for the fork verdicts (rare): their messages are read again from the source, by position."""
    if not forks:
        return []
    wanted = {row.pos: row for row in forks}
    found: list[Fork] = []
    for split in plan_splits(path):
        for record in iter_split(split):
            row = wanted.get(record.pos)
            if row is not None and record.raw is not None:
                msg = received_of(record).message
                assert msg is not None  # a fork verdict is a classic message's
                found.append(Fork(row.author, int(row.sequence), row.known, msg))
    return found  # in log order: splits and records are


def verify_path(path: str | Path, *, hmac_key: Any = None, strict: bool = False,
                on_message: Callable[[], None] | None = None) -> ValidationReport:
    """`verify_local` in this process only, calling ``on_message`` once per record (progress bars)."""
    report = _verify_inline(plan_splits(path), hmac_key_bytes(hmac_key), strict,
                            None if on_message is None else lambda _: on_message())
    return _with_forks(path, report)


def summarize_rows(verdict_rows: DataFrame) -> Decided:
    """The report of a verdicts DataFrame, with the log positions of its errors and findings (runs a few jobs)."""
    from pyspark.sql import functions as F

    counts = verdict_rows.agg(
        F.count("*").alias("checked"),
        F.sum((F.col("verdict") == VALID).cast("long")).alias("valid"),
        F.sum((F.col("verdict") == DUPLICATE).cast("long")).alias("duplicates"),
    ).first()
    errors = verdict_rows.filter(F.col("verdict") == INVALID).orderBy("pos").collect()
    last = F.max_by(F.struct("sequence", "id", "timestamp"), "pos")
    heads = verdict_rows.filter(F.col("verdict") == VALID).groupBy("author").agg(last.alias("head")).collect()
    report = ValidationReport(
        checked=int(counts["checked"]),
        valid=int(counts["valid"] or 0),
        duplicates=int(counts["duplicates"] or 0),
        heads={r.author: FeedState(r.author, r.head.sequence, r.head.id, r.head.timestamp) for r in heads},
    )
    for row in errors:
        error = fact_error(INVALID, row.code, row.detail, row.fatal, row.author, row.sequence_json)
        assert error is not None
        report.errors.append(error)
    valid = verdict_rows.filter(F.col("verdict") == VALID)
    report.formats = {r.format: r["count"] for r in valid.where(F.col("format") != CLASSIC).groupBy("format")
                      .count().collect()}
    findings = valid.where(F.col("finding").isNotNull()).orderBy("pos").collect()
    report.findings = [Finding(r.finding, r.author, orjson.loads(r.sequence_json), r.id) for r in findings]
    return Decided(report, [row.pos for row in errors], [row.pos for row in findings], [])


def split_runs(spark: SparkSession, splits: list[Split], *, hmac_key: Any = None, strict: bool = False,
               rows_done: Any = None) -> list[SplitRun]:
    """Each split replayed by one Spark task; only the small runs come back, in split order.

    A plain RDD of splits: the records never enter the JVM, and no Arrow or DataFrame conversion is paid.
    """
    replay = _Replay(hmac_key_bytes(hmac_key), strict)

    def run(split: Split) -> SplitRun:
        found = replay(split)
        if rows_done is not None:
            rows_done.add(found.loose[0] + sum(r.counts[0] for r in found.runs))
        return found

    return spark.sparkContext.parallelize(splits, max(1, len(splits))).map(run).collect()


def verify_spark(spark: SparkSession, path: str | Path, *, hmac_key: Any = None, strict: bool = False,
                 split_bytes: int = SPLIT_BYTES, progress: bool | None = None) -> ValidationReport:
    """`verify` on Spark: the report equals `verify_local`'s.

    Args:
        spark: the session (see `ssblab.pipeline.spark_session`); local or a cluster whose workers see ``path``.
        path: a JSONL file, a log.offset (or an ssb-fixtures folder), a store folder or an archive.
        hmac_key: a test network's HMAC key.
        strict: a message that breaks a strict JSON rule JS accepts (a finding) is invalid.
        split_bytes: bytes of source per task.
        progress: show a progress bar (None: when stderr is a terminal, or in a notebook).
    """
    from ssblab.pipeline.progress import job_progress

    splits = plan_splits(path, split_bytes=split_bytes)
    with job_progress(spark, "verifying", enabled=progress) as rows_done:
        stitched, broken = stitch(split_runs(spark, splits, hmac_key=hmac_key, strict=strict, rows_done=rows_done))
        if broken:
            merge_exact(stitched, _decided_on_spark(spark, splits, frozenset(broken), hmac_key, strict))
    stitched.report.forks.extend(fork_evidence(path, stitched.forks))
    return _with_forks(path, stitched.report)


def _decided_on_spark(spark: SparkSession, splits: list[Split], feeds: frozenset[str], hmac_key: Any,
                      strict: bool) -> Decided:
    """``feeds`` decided whole by the shuffle route."""
    from pyspark.sql import functions as F

    from ssblab.pipeline import spark as frames

    facts = frames.message_facts(frames.splits_frame(spark, splits), hmac_key=hmac_key, feeds=feeds)
    rows = frames.verdicts(facts, strict=strict).persist()
    try:
        found = summarize_rows(rows)
        found.forks = [ForkRow(r.pos, r.author, int(r.sequence), r.known)
                       for r in rows.filter(F.col("code") == "fork").collect()]
    finally:
        rows.unpersist()
    return found
