"""The Spark engine's pipeline: the steps of `ssblab.pipeline` as lazy ``DataFrame -> DataFrame`` transforms.

Strategy: the driver plans the splits (`sources.plan_splits`) and makes a DataFrame with one split per partition
(`splits_frame`); each task reads its own split in a Python worker and computes its facts (`facts.split_facts`)
through Arrow, so raw bytes never pass through the driver or the JVM. The facts are shuffled by feed and each
feed replayed in a worker (`verdicts.verdict_rows`); the tables are then the very queries of
`ssblab.pipeline.tables` (``spark.sql`` with DataFrames for their inputs) and the same extractors, run in workers.

Invariants: every transform is lazy and takes its inputs as arguments (the SparkSession is one of them where a
frame is made from nothing); the tables equal the local engine's row for row (tests/pipeline/test_local.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab.core.message import hmac_key_bytes
from ssblab.core.schema import MAX_MS, MIN_MS, TABLES
from ssblab.pipeline import tables as catalog
from ssblab.pipeline.facts import FACTS_DDL, split_facts
from ssblab.pipeline.sources import held_blobs, iter_split, plan_splits
from ssblab.pipeline.splits import RAW_DDL, SPLIT_BYTES, SPLIT_DDL, Split, arrow_batch, arrow_schema, splits_of
from ssblab.pipeline.verdicts import verdict_rows, verdicts_ddl

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "archive_messages",
    "blobs",
    "build_frames",
    "derived",
    "follows",
    "message_facts",
    "messages_table",
    "names",
    "raw_messages",
    "splits_frame",
    "verdicts",
    "verdicts_of",
    "with_timestamps",
    "write_table",
]


def splits_frame(spark: SparkSession, splits: list[Split]) -> DataFrame:
    """A DataFrame with one split per partition (so one task reads one split)."""
    rows = [tuple(asdict(s).values()) for s in splits]
    rdd = spark.sparkContext.parallelize(rows, max(1, len(rows)))
    return spark.createDataFrame(rdd, SPLIT_DDL)


def raw_messages(spark: SparkSession, path: str | Path, *, split_bytes: int = SPLIT_BYTES) -> DataFrame:
    """The records of a source as rows ``(pos, where, raw, received, torn)``, unparsed, in ``pos`` order.

    Examples:
        >>> raw_messages(spark, "feeds.jsonl").count()  # doctest: +SKIP
    """
    import pyarrow as pa

    schema = arrow_schema(RAW_DDL)
    fields = schema.names

    def read(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for split in splits_of(batch):
                records = [{name: getattr(r, name) for name in fields} for r in iter_split(split)]
                yield pa.RecordBatch.from_pylist(records, schema=schema)

    return splits_frame(spark, plan_splits(path, split_bytes=split_bytes)).mapInArrow(read, RAW_DDL)


def message_facts(splits: DataFrame, *, hmac_key: Any = None, with_content: bool = False,
                  rows_done: Any = None, feeds: frozenset[str] | None = None) -> DataFrame:
    """A facts row per record of the splits (`splits_frame`), computed in the Python workers.

    ``rows_done``: an accumulator the workers add their record counts to (see `progress.job_progress`).
    ``feeds``: only the records of these authors (others are parsed, to learn their author, but not checked).
    """
    key = hmac_key_bytes(hmac_key)
    schema = arrow_schema(FACTS_DDL)

    def check(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for rows in split_facts(splits_of(batch), key, with_content, feeds):
                if rows_done is not None:
                    rows_done.add(len(rows))
                yield arrow_batch(rows, schema)

    return splits.mapInArrow(check, FACTS_DDL)


def verdicts(facts: DataFrame, carry: tuple[str, ...] = ()) -> DataFrame:
    """A verdict row per facts row (`verdicts.verdicts_ddl`), with the facts columns in ``carry`` passed through.

    Each feed's rows are brought together by a hash shuffle and sorted by position inside the partition, then
    replayed in plain Python over Arrow batches (pandas groups cost more per message than the replay itself).
    """
    from pyspark.sql import functions as F

    ddl = verdicts_ddl(carry)
    schema = arrow_schema(ddl)

    def replay(batches: Iterator[Any]) -> Iterator[Any]:
        rows = (row for batch in batches for row in batch.to_pylist())
        chunk: list[tuple[Any, ...]] = []
        for row in verdict_rows(rows, carry):
            chunk.append(row)
            if len(chunk) == 8192:
                yield arrow_batch(chunk, schema)
                chunk = []
        if chunk:
            yield arrow_batch(chunk, schema)

    # A record outside any feed is a group of its own, keyed by its position (`verdicts.feed_key`).
    in_feed = F.col("author").isNotNull() & (F.col("author") != "")
    feed = F.when(in_feed, F.col("author")).otherwise(F.concat(F.lit("\0"), F.col("pos").cast("string")))
    keyed = facts.withColumn("feed", feed)
    return keyed.repartition("feed").sortWithinPartitions("feed", "pos").mapInArrow(replay, ddl)


def verdicts_of(spark: SparkSession, path: str | Path, *, hmac_key: Any = None, carry: tuple[str, ...] = (),
                split_bytes: int = SPLIT_BYTES, rows_done: Any = None) -> DataFrame:
    """The verdicts of every record at ``path`` (lazy), with the facts columns in ``carry`` passed through."""
    facts = message_facts(splits_frame(spark, plan_splits(path, split_bytes=split_bytes)), hmac_key=hmac_key,
                          with_content="content" in carry, rows_done=rows_done)
    return verdicts(facts, carry)


def with_timestamps(table: str, frame: DataFrame) -> DataFrame:
    """``frame`` (the table's `tables.base_columns`) with its ``*_at`` columns, in the schema's order: the same
    IEEE operations as `ssblab.core.schema.arrow_timestamps`."""
    from pyspark.sql import functions as F

    columns = []
    for column in TABLES[table]:
        if column.name in catalog.TIMESTAMPS:
            ms = F.col(catalog.TIMESTAMPS[column.name])
            micros = F.expr(f"timestamp_micros(CAST(floor(`{catalog.TIMESTAMPS[column.name]}` * 1000) AS BIGINT))")
            columns.append(F.when(ms.between(MIN_MS, MAX_MS), micros).alias(column.name))
        else:
            columns.append(F.col(column.name))
    return frame.select(*columns)


def messages_table(verdict_rows: DataFrame) -> DataFrame:
    """The ``messages`` table of verdict rows that carry `tables.CARRY`."""
    return with_timestamps("messages", verdict_rows.sparkSession.sql(catalog.messages_sql(), verdicts=verdict_rows))


def derived(messages: DataFrame, table: str) -> DataFrame:
    """A content table (`tables.DERIVED`) of the ``messages`` table, extracted in the Python workers."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    derivation = catalog.DERIVED[table]
    columns = catalog.base_columns(table)
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema(_ddl(table)) if f.name in columns])
    wanted = F.col("valid") & ~F.col("is_private")
    if derivation.types is not None:
        wanted = wanted & F.col("type").isin(*derivation.types)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            yield arrow_batch(list(catalog.derive(derivation, batch.to_pylist())), schema)

    inputs = messages.filter(wanted).select(*derivation.head, "valid", "is_private", "type", "content")
    return with_timestamps(table, inputs.mapInArrow(run, _ddl(table)))


def _ddl(table: str) -> str:
    """A table's `tables.base_columns` as the DDL that Spark's Python-worker operators accept."""
    columns = catalog.base_columns(table)
    return ", ".join(f"`{c.name}` {c.type}" for c in TABLES[table] if c.name in columns)


def blobs(link_rows: DataFrame, sizes: DataFrame | None = None) -> DataFrame:
    """Referenced blobs from the ``links`` table; ``sizes`` (``blob``, ``size``) adds the sizes of held blobs."""
    spark = link_rows.sparkSession
    if sizes is None:
        sizes = spark.createDataFrame([], "blob string, size long")
    found = spark.sql(catalog.blobs_sql(), links=link_rows, sizes=sizes).withColumnRenamed("refs", "references")
    return with_timestamps("blobs", found)


def follows(contacts: DataFrame) -> DataFrame:
    """Who follows or blocks whom now (the ``follows`` table) from the ``contacts`` table."""
    return with_timestamps("follows", contacts.sparkSession.sql(catalog.follows_sql(catalog.SPARK),
                                                               contacts=contacts))


def names(abouts: DataFrame) -> DataFrame:
    """Each feed's latest self-assigned name (the ``names`` table) from the ``abouts`` table."""
    return with_timestamps("names", abouts.sparkSession.sql(catalog.names_sql(), abouts=abouts))


def build_frames(spark: SparkSession, source: str | Path, *, hmac_key: Any = None) -> dict[str, DataFrame]:
    """Every table of a source, verified, as lazy DataFrames (``messages`` cached: the others derive from it)."""
    messages = messages_table(verdicts_of(spark, source, hmac_key=hmac_key, carry=catalog.CARRY)).cache()
    found = {"messages": messages, **{name: derived(messages, name) for name in catalog.DERIVED}}
    held = held_blobs(Path(source))
    found["blobs"] = blobs(found["links"], spark.createDataFrame(held, "blob string, size long") if held else None)
    found["follows"] = follows(found["contacts"])
    found["names"] = names(found["abouts"])
    return {name: found[name] for name in TABLES}


def write_table(df: DataFrame, table: str, folder: Path, files: int) -> None:
    """Write one table into ``folder/table`` with its `tables.LAYOUT` (zstd Parquet, microsecond timestamps)."""
    how, keys = catalog.LAYOUT[table]
    df = df.select(*[c.name for c in TABLES[table]])
    laid_out = (df.repartition(files, how.split(":", 1)[1]).sortWithinPartitions(*keys) if how.startswith("hash:")
                else df.orderBy(*keys))
    laid_out.write.option("compression", "zstd").parquet(str(folder / table))


def archive_messages(spark: SparkSession, path: str | Path, *, hmac_key: Any = None,
                     split_rows: int = 25_000) -> DataFrame:
    """The ``messages`` table of an archive, verified (``valid``, ``error``) like any other source.

    Args:
        spark: the session.
        path: an ``archive.json``, a folder written by ``ssblab archive build``, or a blob folder holding Bundles.
        hmac_key: a test network's HMAC key.
        split_rows: messages per task (whole blocks).

    Examples:
        >>> archive_messages(spark, "out/").filter("valid").count()  # doctest: +SKIP
    """
    splits = plan_splits(path, split_rows=split_rows)
    facts = message_facts(splits_frame(spark, splits), hmac_key=hmac_key, with_content=True)
    return messages_table(verdicts(facts, catalog.CARRY))
