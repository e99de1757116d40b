"""The dataset's tables as pure ``DataFrame -> DataFrame`` transforms (declared in `ssblab.pipeline.schema`).

Strategy: `messages_table` turns verdict rows (which carry the facts' content columns, see `chain.verdicts`)
into the ``messages`` table; every other table is one function of the ``messages`` table, so an export writes
``messages`` once and derives the rest from what it wrote. Content is decoded in the Python workers by the pure
helpers of `ssblab.pipeline.extract`, batched through Arrow.

Invariants: derived tables hold only valid messages (a forged or out-of-feed message says nothing about the
network); every row carries its message's ``id`` and ``author``; output columns are exactly the schema's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from ssblab.pipeline import extract
from ssblab.pipeline.chain import DUPLICATE, VALID
from ssblab.pipeline.schema import TABLES, arrow_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

CARRY = ("previous", "received", "type", "content", "is_private")  # facts columns the messages table needs
Extract = Callable[[dict[str, Any]], Iterable[tuple[Any, ...]]]


def table_ddl(table: str) -> str:
    """A table's columns as the DDL that Spark's Python-worker operators accept."""
    return ", ".join(f"`{c.name}` {c.type}" for c in TABLES[table])


def messages_table(verdict_rows: DataFrame) -> DataFrame:
    """One row per parsed record with a well-typed author, sequence and timestamp, except copies of a feed's
    head (duplicates); ``valid`` and ``error`` are the verifier's verdict."""
    from pyspark.sql import functions as F

    kept = verdict_rows.filter(
        F.col("id").isNotNull() & F.col("author").isNotNull() & F.col("sequence").isNotNull()
        & F.col("timestamp").isNotNull() & F.col("content").isNotNull() & (F.col("verdict") != DUPLICATE))
    return kept.select(
        *[c.name for c in TABLES["messages"][:9]],
        (F.col("verdict") == VALID).alias("valid"), F.col("code").alias("error"))


def _derive(messages: DataFrame, table: str, types: tuple[str, ...] | None, rows: Extract) -> DataFrame:
    """Apply ``rows`` to the parsed content of each valid public message (of the given types)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    schema = arrow_schema(table)
    head = ["id", "author", "timestamp"] if table != "contacts" else ["id", "author", "sequence", "timestamp"]
    wanted = F.col("valid") & ~F.col("is_private")
    if types is not None:
        wanted = wanted & F.col("type").isin(*types)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            out = []
            for row in batch.to_pylist():
                content = orjson.loads(row["content"])
                key = tuple(row[name] for name in head)
                out.extend(key + tail for tail in rows(content))
            columns = list(zip(*out, strict=True)) if out else [[] for _ in schema]
            yield pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema,
                                                                                         strict=True)],
                                             schema=pa.schema([f.with_nullable(True) for f in schema]))

    return messages.filter(wanted).select(*head, "content").mapInArrow(run, table_ddl(table))


def _one(extractor: Callable[[dict[str, Any]], tuple[Any, ...] | None]) -> Extract:
    def rows(content: dict[str, Any]) -> Iterable[tuple[Any, ...]]:
        row = extractor(content)
        return () if row is None else (row,)

    return rows


def posts(messages: DataFrame) -> DataFrame:
    return _derive(messages, "posts", ("post",), _one(extract.post_row))


def votes(messages: DataFrame) -> DataFrame:
    return _derive(messages, "votes", ("vote",), _one(extract.vote_row))


def contacts(messages: DataFrame) -> DataFrame:
    return _derive(messages, "contacts", ("contact",), _one(extract.contact_row))


def abouts(messages: DataFrame) -> DataFrame:
    return _derive(messages, "abouts", ("about",), _one(extract.about_row))


def links(messages: DataFrame) -> DataFrame:
    return _derive(messages, "links", None, lambda content: extract.links(content))


def tangle_edges(messages: DataFrame) -> DataFrame:
    return _derive(messages, "tangle_edges", None, lambda content: extract.tangle_edges(content))


def blobs(link_rows: DataFrame, sizes: DataFrame | None = None) -> DataFrame:
    """Referenced blobs from the ``links`` table; ``sizes`` (``blob``, ``size``) adds the sizes of held blobs."""
    from pyspark.sql import functions as F

    referenced = link_rows.filter(F.col("kind") == "blob").groupBy(F.col("target").alias("blob")).agg(
        F.countDistinct("id").alias("references"), F.min("timestamp").alias("first_referenced"))
    if sizes is None:
        with_size = referenced.withColumn("size", F.lit(None).cast("long"))
    else:
        with_size = referenced.join(sizes, "blob", "left")
    return with_size.select(*[c.name for c in TABLES["blobs"]])


DERIVED: dict[str, Callable[[DataFrame], DataFrame]] = {
    "posts": posts,
    "votes": votes,
    "contacts": contacts,
    "abouts": abouts,
    "links": links,
    "tangle_edges": tangle_edges,
}
