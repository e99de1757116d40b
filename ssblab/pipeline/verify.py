"""Distributed verification: the same `ValidationReport` as `ssblab.store.verify.verify_path`, computed by Spark.

Strategy: `load.plan_splits` cuts the source on the driver. `verify_spark` makes one pass: each task parses,
checks and replays its own split with the core's `FeedValidator` (`chain.replay_split`), presuming each feed's
state at the split's start, and the driver stitches the feeds across splits (`chain.stitch`); only the small
per-split runs come back. Feeds whose presumed state was wrong (faults across a split boundary) are decided again
by the shuffle route that also gives every record's verdict row (`verdicts_of`: per-message facts in the workers,
`checks.message_facts`, then each feed replayed after a shuffle, `chain.verdicts`; the export uses it), whose rows
are summarised by a few small jobs. Everything before `verify_spark` is a lazy ``DataFrame -> DataFrame`` transform.

Invariant: ``verify_spark(spark, path).to_json() == verify_path(path).to_json()`` for any input
(tests/pipeline/test_verify.py); for a store, the fork evidence it holds is reported too, as `verify_path` does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab.core.message import hmac_key_bytes
from ssblab.core.validate import FeedState, FeedValidator, Fork, ValidationReport
from ssblab.pipeline.chain import (
    DUPLICATE,
    INVALID,
    VALID,
    ForkRow,
    SplitRun,
    received_message,
    replay_split,
    stitch,
    verdicts,
)
from ssblab.pipeline.checks import fact_error, message_facts
from ssblab.pipeline.load import SPLIT_BYTES, Split, iter_split, plan_splits, resolve_source, splits_frame
from ssblab.pipeline.progress import job_progress
from ssblab.store.sources import parse_record
from ssblab.store.store import Store

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def verdicts_of(spark: SparkSession, path: str | Path, *, hmac_key: Any = None, carry: tuple[str, ...] = (),
                split_bytes: int = SPLIT_BYTES, rows_done: Any = None) -> DataFrame:
    """The verdicts of every record at ``path`` (lazy), with the facts columns in ``carry`` passed through."""
    facts = message_facts(splits_frame(spark, plan_splits(path, split_bytes=split_bytes)), hmac_key=hmac_key,
                          with_content="content" in carry, rows_done=rows_done)
    return verdicts(facts, carry)


def summarize(verdict_rows: DataFrame) -> ValidationReport:
    """The report of a verdicts DataFrame (runs a few jobs; cache the input first)."""
    return summarize_rows(verdict_rows)[0]


def summarize_rows(verdict_rows: DataFrame) -> tuple[ValidationReport, list[int]]:
    """`summarize`, with the log position of each error."""
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
    return report, [row.pos for row in errors]


def fork_evidence(path: str | Path, forks: list[Any]) -> list[Fork]:
    """`Fork`s for the fork verdicts (rare): their messages are read again from the source, by position."""
    if not forks:
        return []
    wanted = {row.pos: row for row in forks}
    found: list[Fork] = []
    for split in plan_splits(path):
        for record in iter_split(split):
            row = wanted.get(record.pos)
            if row is not None and record.raw is not None:
                msg = parse_record(record.raw, record.where).message
                assert msg is not None
                found.append(Fork(row.author, int(row.sequence), row.known, msg))
    return found  # in log order: splits and records are


def verify_records(path: str | Path, *, hmac_key: Any = None,
                   on_message: Callable[[], None] | None = None) -> ValidationReport:
    """`verify_spark`'s report in this process, without Spark: the pipeline's readers, one validator.

    For the sources only the pipeline reads (archives: their blocks decoded and rebuilt here, as a Spark task
    would); the records go through `verify_path`'s step, in log order, so no feed is presumed or stitched.
    """
    validator = FeedValidator(hmac_key)
    for split in plan_splits(path):
        for record in iter_split(split):
            msg = received_message(validator, record)
            if msg is not None:
                validator.push(msg)
            if on_message:
                on_message()
    return validator.report


def split_runs(spark: SparkSession, splits: list[Split], *, hmac_key: Any = None,
               rows_done: Any = None) -> list[SplitRun]:
    """Each split replayed by one task (`chain.replay_split`); only the small runs come back, in split order.

    A plain RDD of splits: the records never enter the JVM, and no Arrow or DataFrame conversion is paid.
    """
    key = hmac_key_bytes(hmac_key)

    def replay(split: Split) -> SplitRun:
        run = replay_split(iter_split(split), key)
        if rows_done is not None:
            rows_done.add(run.loose[0] + sum(r.counts[0] for r in run.runs))
        return run

    return spark.sparkContext.parallelize(splits, max(1, len(splits))).map(replay).collect()


def verify_spark(spark: SparkSession, path: str | Path, *, hmac_key: Any = None, split_bytes: int = SPLIT_BYTES,
                 progress: bool | None = None) -> ValidationReport:
    """Validate every message at ``path`` with Spark; the report equals `verify_path`'s.

    One pass over the data: every task replays its split (`split_runs`) and the driver stitches the feeds across
    splits (`chain.stitch`). Only feeds whose state at a split boundary was not the one presumed (forks, gaps
    or stops that straddle splits: faulty data) are decided again, by the shuffle route (`verdicts_of`).

    Args:
        spark: the session (see `ssblab.pipeline.spark_session`); local or a cluster whose workers see ``path``.
        path: a JSONL file, a log.offset (or an ssb-fixtures folder), or a store folder.
        hmac_key: a test network's HMAC key.
        split_bytes: bytes of source per task.
        progress: show a progress bar (None: when stderr is a terminal, or in a notebook).

    Returns:
        The `ValidationReport`; its ``to_json()`` is the ``ssblab verify --json`` contract.
    """
    splits = plan_splits(path, split_bytes=split_bytes)
    with job_progress(spark, "verifying", enabled=progress) as rows_done:
        report, positions, forks, broken = stitch(split_runs(spark, splits, hmac_key=hmac_key,
                                                             rows_done=rows_done))
        if broken:
            _add_exact(spark, splits, frozenset(broken), hmac_key, report, positions, forks)
    report.forks.extend(fork_evidence(path, forks))
    kind, where = resolve_source(path)
    if kind == "store":
        with Store(where, hmac_key=hmac_key, read_only=True) as store:
            report.forks.extend(store.forks())
    return report


def _add_exact(spark: SparkSession, splits: list[Split], feeds: frozenset[str], hmac_key: Any,
               report: ValidationReport, positions: list[int], forks: list[Any]) -> None:
    """Decide ``feeds`` by the shuffle route and merge them into ``report`` (errors and forks in log order)."""
    from pyspark.sql import functions as F

    facts = message_facts(splits_frame(spark, splits), hmac_key=hmac_key, feeds=feeds)
    rows = verdicts(facts).persist()
    try:
        exact, exact_positions = summarize_rows(rows)
        fork_rows = rows.filter(F.col("code") == "fork").collect()
    finally:
        rows.unpersist()
    report.checked += exact.checked
    report.valid += exact.valid
    report.duplicates += exact.duplicates
    report.heads.update(exact.heads)
    merged = sorted(zip(positions + exact_positions, report.errors + exact.errors, strict=True),
                    key=lambda pair: pair[0])
    report.errors[:] = [error for _, error in merged]
    forks.extend(ForkRow(r.pos, r.author, int(r.sequence), r.known) for r in fork_rows)
    forks.sort()
