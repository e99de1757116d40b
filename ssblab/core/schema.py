"""The tabular view of messages: the columns of ssblab's Parquet datasets, declared once, importing nothing heavy.

Every table is a list of `Column`s whose ``type`` is a Spark SQL type string; `spark_schema` and `arrow_schema`
turn a table into the engine's own schema when it is needed, through one type table (`ARROW_TYPES`), which also
maps the pipeline's own DDL strings (`ssblab.pipeline.splits.arrow_schema`). Readers in other engines (pandas,
DuckDB, Polars) see the same columns because the Parquet files carry them. docs/datasets.md documents the meaning
of each column; a test checks that page against these declarations.

Conventions: ids are SSB sigil strings (``@…``, ``%…``, ``&…``); times are milliseconds since the epoch as
doubles (SSB timestamps are JavaScript numbers), each beside a real UTC timestamp column (``*_at``) for queries by
date, null where the claimed time falls outside the years 1 to 9999 that every engine can hold; every derived
table carries its message's ``id`` and ``author``, so it joins back to ``messages``.

`DATASET_VERSION` is the layout's version: readers refuse a dataset written by a newer one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "ARROW_TYPES",
    "DATASET_VERSION",
    "MAX_MS",
    "MIN_MS",
    "TABLES",
    "Column",
    "arrow_schema",
    "arrow_timestamps",
    "arrow_type",
    "ddl",
    "spark_schema",
]

DATASET_VERSION = 2  # 2: *_at timestamp columns, messages.format, abouts.sequence, the follows and names tables
# The years 1 to 9999 in ms since the epoch: the range Spark's, DuckDB's and pandas' timestamps all hold.
MIN_MS, MAX_MS = -62_135_596_800_000.0, 253_402_300_799_999.0


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # a Spark SQL type: string, bigint, double, boolean, timestamp, array<string>
    nullable: bool
    doc: str


def _c(name: str, type_: str, doc: str, nullable: bool = True) -> Column:
    return Column(name, type_, nullable, doc)


_MESSAGE_KEY = [
    _c("id", "string", "the message id, %….sha256", nullable=False),
    _c("author", "string", "the feed id of the author, @….ed25519", nullable=False),
]
_CLAIMED = [
    _c("timestamp", "double", "claimed time (ms)", nullable=False),
    _c("claimed_at", "timestamp", "the claimed time as a UTC timestamp (null outside the years 1-9999)"),
]

TABLES: dict[str, list[Column]] = {
    "messages": [
        *_MESSAGE_KEY,
        _c("sequence", "bigint", "position in the author's feed, from 1", nullable=False),
        _c("previous", "string", "id of the feed's previous message; null for sequence 1"),
        _c("timestamp", "double", "the time the author claims (ms)", nullable=False),
        _CLAIMED[1],
        _c("received", "double", "when this replica received it (ms); null when the source does not say"),
        _c("received_at", "timestamp", "the receive time as a UTC timestamp"),
        _c("format", "string", "the feed format: classic (the JSON feeds of ssb-validate)", nullable=False),
        _c("type", "string", "content type; null for private (boxed) messages"),
        _c("content", "string", "the content as JSON text (a JSON string for boxed content); compact from JSON "
           "sources, indented as signed from archives: parse it, do not compare it as text", nullable=False),
        _c("is_private", "boolean", "content is a private-box string", nullable=False),
        _c("valid", "boolean", "the message passed validation", nullable=False),
        _c("error", "string", "the rule code it broke (ssblab.Rule) when not valid"),
    ],
    "posts": [
        *_MESSAGE_KEY,
        *_CLAIMED,
        _c("text", "string", "the post's text"),
        _c("root", "string", "the thread's root message, for replies"),
        _c("branch", "array<string>", "the message(s) this reply answers (a string or a list in content)"),
        _c("channel", "string", "the channel name, without #"),
        _c("mentions", "array<string>", "refs of the mentions' links"),
    ],
    "votes": [
        *_MESSAGE_KEY,
        *_CLAIMED,
        _c("link", "string", "the voted message (or other ref)"),
        _c("value", "bigint", "1 like, 0 unlike, -1 dislike"),
        _c("expression", "string", "the vote's expression, e.g. Like"),
    ],
    "contacts": [
        *_MESSAGE_KEY,
        _c("sequence", "bigint", "the contact message's sequence (log order within the author's feed)",
           nullable=False),
        *_CLAIMED,
        _c("contact", "string", "the feed the state change is about", nullable=False),
        _c("following", "boolean", "the follow state set by this message; null when not set"),
        _c("blocking", "boolean", "the block state set by this message; null when not set"),
    ],
    "abouts": [
        *_MESSAGE_KEY,
        _c("sequence", "bigint", "the about message's sequence (log order within the author's feed)",
           nullable=False),
        *_CLAIMED,
        _c("about", "string", "whom the about describes (a feed, or a message such as a gathering)",
           nullable=False),
        _c("name", "string", "the name given"),
        _c("image", "string", "the image blob id (from a string or a {link} object)"),
        _c("description", "string", "the description given"),
    ],
    "links": [
        *_MESSAGE_KEY,
        *_CLAIMED,
        _c("target", "string", "the ref found in the content", nullable=False),
        _c("kind", "string", "feed, message or blob", nullable=False),
        _c("path", "string", "where in the content, as a JSON path such as $.mentions[0].link", nullable=False),
    ],
    "tangle_edges": [
        *_MESSAGE_KEY,
        *_CLAIMED,
        _c("tangle", "string", "the tangle's name: thread for root/branch, else the key under content.tangles",
           nullable=False),
        _c("root", "string", "the tangle's root message", nullable=False),
        _c("parent", "string", "a message this one links back to (a branch or a tangle previous); null for the "
           "link to the root alone"),
    ],
    "blobs": [
        _c("blob", "string", "the blob id, &….sha256", nullable=False),
        _c("size", "bigint", "size in bytes when this replica holds the blob"),
        _c("references", "bigint", "how many messages reference it", nullable=False),
        _c("first_referenced", "double", "claimed time of the first referencing message (ms)"),
        _c("first_referenced_at", "timestamp", "the same as a UTC timestamp"),
    ],
    "follows": [
        _c("author", "string", "the feed whose decision this is", nullable=False),
        _c("contact", "string", "the feed it is about", nullable=False),
        _c("state", "string", "following, blocking, or cleared (unfollowed, unblocked, or neither set)",
           nullable=False),
        _c("id", "string", "the contact message that set the state (the author's latest about this contact)",
           nullable=False),
        _c("sequence", "bigint", "that message's sequence", nullable=False),
        *_CLAIMED,
    ],
    "names": [
        _c("author", "string", "the feed that named itself", nullable=False),
        _c("name", "string", "its latest self-assigned name", nullable=False),
        _c("id", "string", "the about message that set it", nullable=False),
        _c("sequence", "bigint", "that message's sequence", nullable=False),
        *_CLAIMED,
    ],
}

# Spark SQL type names (those of `TABLES` and the pipeline's DDL strings) to pyarrow type aliases.
ARROW_TYPES = {"string": "string", "bigint": "int64", "long": "int64", "int": "int32", "double": "float64",
               "boolean": "bool", "binary": "binary"}


def ddl(table: str) -> str:
    """The table as a Spark DDL string (``id string NOT NULL, …``)."""
    return ", ".join(f"`{c.name}` {c.type}{'' if c.nullable else ' NOT NULL'}" for c in TABLES[table])


def spark_schema(table: str) -> Any:
    """The table as a pyspark ``StructType`` (built here: PySpark 3.5 parses DDL only with a running JVM)."""
    from pyspark.sql import types as T

    scalars = {"string": T.StringType(), "bigint": T.LongType(), "double": T.DoubleType(),
               "boolean": T.BooleanType(), "timestamp": T.TimestampType()}

    def spark_type(name: str) -> Any:
        if name.startswith("array<"):
            return T.ArrayType(spark_type(name[len("array<") : -1]))
        return scalars[name]

    return T.StructType([T.StructField(c.name, spark_type(c.type), c.nullable) for c in TABLES[table]])


def arrow_type(spark_type: str) -> Any:
    """The pyarrow type of a Spark SQL type name (timestamps are microseconds in UTC, as Spark writes them)."""
    import pyarrow as pa

    if spark_type.startswith("array<"):
        return pa.list_(arrow_type(spark_type[len("array<") : -1]))
    if spark_type == "timestamp":
        return pa.timestamp("us", tz="UTC")
    return pa.type_for_alias(ARROW_TYPES[spark_type])


def arrow_schema(table: str) -> Any:
    """The table as a ``pyarrow.Schema`` (for the local engine, the archive decoder and other Arrow writers)."""
    import pyarrow as pa

    return pa.schema([pa.field(c.name, arrow_type(c.type), nullable=c.nullable) for c in TABLES[table]])


def arrow_timestamps(ms: Any) -> Any:
    """Millisecond doubles as UTC timestamps: ``floor(ms * 1000)`` microseconds, null outside `MIN_MS`..`MAX_MS`.

    The Spark engine computes the same with ``timestamp_micros(floor(ms * 1000))`` (the same IEEE operations).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    ms = pc.cast(ms, pa.float64())
    inside = pc.and_(pc.greater_equal(ms, MIN_MS), pc.less_equal(ms, MAX_MS))
    micros = pc.cast(pc.floor(pc.multiply(pc.if_else(inside, ms, 0.0), 1000.0)), pa.int64())
    return pc.if_else(inside, micros, pa.scalar(None, pa.int64())).cast(pa.timestamp("us", tz="UTC"))
