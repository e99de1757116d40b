"""Distributed verification: the same `ValidationReport` as `ssblab.store.verify.verify_path`, computed by Spark.

Strategy: `load.plan_splits` cuts the source on the driver; the workers parse and check every message
(`checks.message_facts`), then replay each feed through the core's reducer (`chain.verdicts`). The verdicts are
cached once and summarised by a few small jobs (counts, errors in log order, heads, fork evidence), so only the
report, never the messages, comes back to the driver. This module is the execution boundary: everything before
`verify_spark` is a lazy ``DataFrame -> DataFrame`` transform.

Invariant: ``verify_spark(spark, path).to_json() == verify_path(path).to_json()`` for any input
(tests/pipeline/test_verify.py); for a store, the fork evidence it holds is reported too, as `verify_path` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab.core.validate import FeedState, Fork, ValidationReport
from ssblab.pipeline.chain import DUPLICATE, INVALID, VALID, verdicts
from ssblab.pipeline.checks import fact_error, message_facts
from ssblab.pipeline.load import SPLIT_BYTES, iter_split, plan_splits, resolve_source, splits_frame
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
    return report


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


def verify_spark(spark: SparkSession, path: str | Path, *, hmac_key: Any = None, split_bytes: int = SPLIT_BYTES,
                 progress: bool | None = None) -> ValidationReport:
    """Validate every message at ``path`` with Spark; the report equals `verify_path`'s.

    Args:
        spark: the session (see `ssblab.pipeline.spark_session`); local or a cluster whose workers see ``path``.
        path: a JSONL file, a log.offset (or an ssb-fixtures folder), or a store folder.
        hmac_key: a test network's HMAC key.
        split_bytes: bytes of source per task.
        progress: show a progress bar (None: when stderr is a terminal, or in a notebook).

    Returns:
        The `ValidationReport`; its ``to_json()`` is the ``ssblab verify --json`` contract.
    """
    from pyspark.sql import functions as F

    with job_progress(spark, "verifying", enabled=progress) as rows_done:
        rows = verdicts_of(spark, path, hmac_key=hmac_key, split_bytes=split_bytes, rows_done=rows_done).persist()
        try:
            report = summarize(rows)
            forks = rows.filter(F.col("code") == "fork").orderBy("pos").collect()
        finally:
            rows.unpersist()
    report.forks.extend(fork_evidence(path, forks))
    kind, where = resolve_source(path)
    if kind == "store":
        with Store(where, hmac_key=hmac_key) as store:
            report.forks.extend(store.forks())
    return report

