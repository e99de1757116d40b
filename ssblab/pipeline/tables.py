"""Tables: what each table of a dataset holds, declared once for both engines (docs/datasets.md).

Strategy: a table is either derived message by message (`DERIVED`: the pure extractors of
`ssblab.pipeline.extract` applied to each valid public message's content) or computed by one SQL query over other
tables (`messages_sql`, `blobs_sql`, `follows_sql`, `names_sql`). The queries are written in the SQL that Spark
and DuckDB share, with the few differences (regular expressions) behind a `Dialect`; each engine runs the very same
text, so the two cannot drift apart. Queries name their inputs as ``{placeholders}``: Spark fills them with
DataFrames (``spark.sql(query, name=frame)``), the local engine with the names of the Arrow tables it registered.
The ``*_at`` timestamp columns are computed last from their millisecond doubles (`TIMESTAMPS`).

Invariants: derived tables hold only valid messages (a forged or out-of-feed message says nothing about the
network); every derived row carries its message's ``id`` and ``author``; output columns are exactly the schema's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson

from ssblab.core.encoding import well_formed
from ssblab.core.schema import TABLES
from ssblab.pipeline import extract
from ssblab.pipeline.verdicts import DUPLICATE, VALID

__all__ = [
    "CARRY",
    "DERIVED",
    "DUCKDB",
    "LAYOUT",
    "SPARK",
    "TIMESTAMPS",
    "Derivation",
    "Dialect",
    "base_columns",
    "blobs_sql",
    "derivable",
    "derive",
    "derive_message",
    "follows_sql",
    "messages_sql",
    "names_sql",
    "parse_content",
]

CARRY = ("previous", "received", "type", "content", "is_private")  # facts columns the messages table needs
# Each timestamp column and the millisecond double it shows (`ssblab.core.schema.arrow_timestamps`).
TIMESTAMPS = {"claimed_at": "timestamp", "received_at": "received", "first_referenced_at": "first_referenced"}
# How each table is laid out: hash-partitioned by a key into files and sorted within them, or globally sorted
# (range-partitioned, so Parquet row-group statistics prune range and key lookups). The local engine writes one
# file per table, sorted by the same keys.
LAYOUT: dict[str, tuple[str, tuple[str, ...]]] = {
    "messages": ("hash:author", ("author", "sequence")),  # feed scans and per-author joins
    "posts": ("sort", ("timestamp", "id")),  # activity over time
    "votes": ("sort", ("link", "timestamp", "id")),  # votes of a message
    "contacts": ("sort", ("author", "sequence", "contact")),  # follow graph replay, in feed order
    "abouts": ("sort", ("about", "timestamp", "id")),  # the latest name of a feed
    "links": ("sort", ("target", "id", "path")),  # backlinks of a ref
    "tangle_edges": ("sort", ("root", "timestamp", "id", "parent")),  # a thread's edges
    "blobs": ("sort", ("blob",)),
    "follows": ("sort", ("author", "contact")),  # who follows whom now
    "names": ("sort", ("author",)),
}
# ssb-ref 2.16's feedIdRegex; its unescaped "." is spelt out as JavaScript's (anything but a line terminator).
# U+2028 and U+2029 stand in the text itself: Java's and RE2's escapes for them differ.
_FEED_PATTERN = "^@[a-zA-Z0-9/+]{{42}}[AEIMQUYcgkosw048]=[^\\n\\r\u2028\u2029](sha256|ed25519)$"


def base_columns(table: str) -> list[str]:
    """The table's columns without the ``*_at`` timestamps (what the steps before the last one produce)."""
    return [c.name for c in TABLES[table] if c.type != "timestamp"]


@dataclass(frozen=True)
class Dialect:
    """The differences between Spark SQL and DuckDB that the queries need."""

    name: str
    regex_function: str  # a function (text, pattern) -> true when the pattern is found in the text
    sorted_set: str  # an aggregate: the sorted distinct non-null values of {}

    def matches(self, column: str, pattern: str) -> str:
        return f"{self.regex_function}({column}, '{pattern}')"

    def sorted_distinct(self, expression: str) -> str:
        return self.sorted_set.format(expression)


SPARK = Dialect("spark", "regexp_like", "array_sort(collect_set({}))")
DUCKDB = Dialect("duckdb", "regexp_matches", "list_sort(list_distinct(list({})))")


def messages_sql() -> str:
    """The ``messages`` table of verdict rows that carry `CARRY`: one row per parsed record with a well-typed
    author, sequence and timestamp, except copies of a feed's head (duplicates)."""
    columns = ", ".join(c for c in base_columns("messages") if c not in ("valid", "error"))
    return (f"SELECT {columns}, verdict = '{VALID}' AS valid, code AS error FROM {{verdicts}} "
            "WHERE id IS NOT NULL AND author IS NOT NULL AND sequence IS NOT NULL AND timestamp IS NOT NULL "
            f"AND content IS NOT NULL AND verdict <> '{DUPLICATE}'")


def blobs_sql() -> str:
    """Referenced blobs from ``links``, with the sizes of those ``sizes`` (``blob, size``) holds. The count is
    named ``refs`` here (``references`` is reserved in DuckDB); the engines rename it."""
    return ("SELECT r.target AS blob, s.size AS size, r.refs AS refs, r.first_referenced AS first_referenced "
            "FROM (SELECT target, count(DISTINCT id) AS refs, min(timestamp) AS first_referenced FROM {links} "
            "WHERE kind = 'blob' GROUP BY target) r LEFT JOIN {sizes} s ON r.target = s.blob")


def follows_sql(dialect: Dialect) -> str:
    """Per (author, contact) between two feed ids: the state that author's latest contact message about that
    contact set, as ssb-friends 4.4 keeps it (blocking beats following; neither set, or both unset: cleared).
    Within a feed the log order is the sequence order, so the latest message is the one with the largest."""
    latest = ("SELECT *, row_number() OVER (PARTITION BY author, contact ORDER BY sequence DESC) AS n FROM "
              f"{{contacts}} WHERE {dialect.matches('author', _FEED_PATTERN)} "
              f"AND {dialect.matches('contact', _FEED_PATTERN)}")
    state = ("CASE WHEN coalesce(blocking, false) THEN 'blocking' WHEN coalesce(following, false) THEN 'following' "
             "ELSE 'cleared' END")
    return f"SELECT author, contact, {state} AS state, id, sequence, timestamp FROM ({latest}) t WHERE n = 1"


def names_sql() -> str:
    """Each feed's latest self-assigned name: its latest about message about itself that sets a name."""
    latest = ("SELECT *, row_number() OVER (PARTITION BY author ORDER BY sequence DESC) AS n FROM {abouts} "
              "WHERE about = author AND name IS NOT NULL")
    return f"SELECT author, name, id, sequence, timestamp FROM ({latest}) t WHERE n = 1"


@dataclass(frozen=True)
class Derivation:
    """A table derived message by message: ``rows`` of a valid public message's parsed content (after the
    ``head`` columns taken from ``messages``), for messages of the given ``types`` (None: all)."""

    table: str
    types: tuple[str, ...] | None
    rows: Callable[[dict[str, Any]], Iterable[tuple[Any, ...]]]

    @cached_property
    def head(self) -> tuple[str, ...]:
        """The columns taken from the message, in the table's order."""
        return tuple(c for c in base_columns(self.table) if c in ("id", "author", "sequence", "timestamp"))

    def reads(self, kind: str | None) -> bool:
        """Whether messages of this ``type`` give rows."""
        return self.types is None or kind in self.types


def _one(extractor: Callable[[dict[str, Any]], tuple[Any, ...] | None]) -> Callable[[dict[str, Any]],
                                                                                  Iterable[tuple[Any, ...]]]:
    def rows(content: dict[str, Any]) -> Iterable[tuple[Any, ...]]:
        row = extractor(content)
        return () if row is None else (row,)

    return rows


DERIVED: dict[str, Derivation] = {d.table: d for d in (
    Derivation("posts", ("post",), _one(extract.post_row)),
    Derivation("votes", ("vote",), _one(extract.vote_row)),
    Derivation("contacts", ("contact",), _one(extract.contact_row)),
    Derivation("abouts", ("about",), _one(extract.about_row)),
    Derivation("links", None, extract.links),
    Derivation("tangle_edges", None, extract.tangle_edges),
)}


def derive(derivation: Derivation, messages: Iterable[Mapping[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """The rows (`base_columns` order) of ``messages`` rows (with ``valid``, ``is_private``, ``type``,
    ``content`` and the head columns) that the derivation reads."""
    for row in messages:
        if row["valid"] and not row["is_private"] and derivation.reads(row["type"]):
            yield from _rows(derivation, row, parse_content(row["content"]))


def derive_message(message: Mapping[str, Any]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """``(table, row)`` for every content-table row of one valid public message (its ``type``, ``content`` and
    head columns), its content parsed once for all the tables."""
    content = parse_content(message["content"])
    for derivation in DERIVED.values():
        if derivation.reads(message["type"]):
            for row in _rows(derivation, message, content):
                yield derivation.table, row


def _rows(derivation: Derivation, message: Mapping[str, Any], content: Any) -> Iterator[tuple[Any, ...]]:
    key = tuple(message[name] for name in derivation.head)
    for tail in derivation.rows(content):
        yield key + tail


def derivable(facts: Mapping[str, Any]) -> bool:
    """Whether a record's facts (`ssblab.pipeline.facts.FACT_FIELDS`) can give content-table rows: it passed its
    own checks, is public and has every column `messages_sql` requires. Its verdict decides the rest."""
    return (facts["stage"] is None and not facts["is_private"] and facts["content"] is not None
            and None not in (facts["id"], facts["author"], facts["sequence"], facts["timestamp"]))


def parse_content(text: str) -> Any:
    """A message's content JSON text as Python values, with every lone surrogate (which JS allows in a string,
    and Arrow's UTF-8 columns cannot hold) replaced by U+FFFD, as Node does when it writes the string as UTF-8."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # orjson refuses lone surrogates, which JSON.parse accepts
        return _well_formed(json.loads(text))


def _well_formed(value: Any) -> Any:
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        return {well_formed(k): _well_formed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_well_formed(v) for v in value]
    return value

