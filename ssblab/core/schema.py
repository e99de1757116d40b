"""The tabular view of messages: the columns of ssblab's Parquet datasets, declared once, importing nothing heavy.

Every table is a list of `Column`s whose ``type`` is a Spark SQL type string; `spark_schema` and `arrow_schema`
turn a table into the engine's own schema when it is needed. Readers in other engines (pandas, DuckDB, Polars)
see the same columns because the Parquet files carry them. docs/datasets.md documents the meaning of each column;
a test checks that page against these declarations.

Conventions: ids are SSB sigil strings (``@…``, ``%…``, ``&…``); times are milliseconds since the epoch as
doubles (SSB timestamps are JavaScript numbers); every derived table carries its message's ``id`` and ``author``,
so it joins back to ``messages``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TABLES", "Column", "arrow_schema", "ddl", "spark_schema"]


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # a Spark SQL type: string, bigint, double, boolean, array<string>
    nullable: bool
    doc: str


def _c(name: str, type_: str, doc: str, nullable: bool = True) -> Column:
    return Column(name, type_, nullable, doc)


_MESSAGE_KEY = [
    _c("id", "string", "the message id, %….sha256", nullable=False),
    _c("author", "string", "the feed id of the author, @….ed25519", nullable=False),
]

TABLES: dict[str, list[Column]] = {
    "messages": [
        *_MESSAGE_KEY,
        _c("sequence", "bigint", "position in the author's feed, from 1", nullable=False),
        _c("previous", "string", "id of the feed's previous message; null for sequence 1"),
        _c("timestamp", "double", "the time the author claims (ms)", nullable=False),
        _c("received", "double", "when this replica received it (ms); null when the source does not say"),
        _c("type", "string", "content type; null for private (boxed) messages"),
        _c("content", "string", "the content as JSON text (a JSON string for boxed content); compact from JSON "
           "sources, indented as signed from archives: parse it, do not compare it as text", nullable=False),
        _c("is_private", "boolean", "content is a private-box string", nullable=False),
        _c("valid", "boolean", "the message passed validation", nullable=False),
        _c("error", "string", "the rule code it broke (ssblab.Rule) when not valid"),
    ],
    "posts": [
        *_MESSAGE_KEY,
        _c("timestamp", "double", "claimed time (ms)", nullable=False),
        _c("text", "string", "the post's text"),
        _c("root", "string", "the thread's root message, for replies"),
        _c("branch", "array<string>", "the message(s) this reply answers (a string or a list in content)"),
        _c("channel", "string", "the channel name, without #"),
        _c("mentions", "array<string>", "refs of the mentions' links"),
    ],
    "votes": [
        *_MESSAGE_KEY,
        _c("timestamp", "double", "claimed time (ms)", nullable=False),
        _c("link", "string", "the voted message (or other ref)"),
        _c("value", "bigint", "1 like, 0 unlike, -1 dislike"),
        _c("expression", "string", "the vote's expression, e.g. Like"),
    ],
    "contacts": [
        *_MESSAGE_KEY,
        _c("sequence", "bigint", "the contact message's sequence (log order within the author's feed)",
           nullable=False),
        _c("timestamp", "double", "claimed time (ms)", nullable=False),
        _c("contact", "string", "the feed the state change is about", nullable=False),
        _c("following", "boolean", "the follow state set by this message; null when not set"),
        _c("blocking", "boolean", "the block state set by this message; null when not set"),
    ],
    "abouts": [
        *_MESSAGE_KEY,
        _c("timestamp", "double", "claimed time (ms)", nullable=False),
        _c("about", "string", "whom the about describes (a feed, or a message such as a gathering)",
           nullable=False),
        _c("name", "string", "the name given"),
        _c("image", "string", "the image blob id (from a string or a {link} object)"),
        _c("description", "string", "the description given"),
    ],
    "links": [
        *_MESSAGE_KEY,
        _c("timestamp", "double", "claimed time (ms)", nullable=False),
        _c("target", "string", "the ref found in the content", nullable=False),
        _c("kind", "string", "feed, message or blob", nullable=False),
        _c("path", "string", "where in the content, as a JSON path such as $.mentions[0].link", nullable=False),
    ],
    "tangle_edges": [
        *_MESSAGE_KEY,
        _c("timestamp", "double", "claimed time (ms)", nullable=False),
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
    ],
}


def ddl(table: str) -> str:
    """The table as a Spark DDL string (``id string NOT NULL, …``)."""
    return ", ".join(f"`{c.name}` {c.type}{'' if c.nullable else ' NOT NULL'}" for c in TABLES[table])


def spark_schema(table: str) -> Any:
    """The table as a pyspark ``StructType`` (built here: PySpark 3.5 parses DDL only with a running JVM)."""
    from pyspark.sql import types as T

    scalars = {"string": T.StringType(), "bigint": T.LongType(), "double": T.DoubleType(),
               "boolean": T.BooleanType()}

    def spark_type(name: str) -> Any:
        if name.startswith("array<"):
            return T.ArrayType(spark_type(name[len("array<") : -1]))
        return scalars[name]

    return T.StructType([T.StructField(c.name, spark_type(c.type), c.nullable) for c in TABLES[table]])


_ARROW_TYPES = {"string": "string", "bigint": "int64", "double": "float64", "boolean": "bool"}


def arrow_schema(table: str) -> Any:
    """The table as a ``pyarrow.Schema`` (for the archive decoder and other Arrow writers)."""
    import pyarrow as pa

    def arrow_type(spark_type: str) -> Any:
        if spark_type.startswith("array<"):
            return pa.list_(arrow_type(spark_type[len("array<") : -1]))
        return pa.type_for_alias(_ARROW_TYPES[spark_type])

    return pa.schema([pa.field(c.name, arrow_type(c.type), nullable=c.nullable) for c in TABLES[table]])
