"""Contact state and the follow graph as Spark DataFrames, from the Parquet ``contacts`` table or from messages.

Strategy: ssb-friends 4.4 keeps, per (author, contact) pair, the state set by the pair's latest contact message in
log order (`ssblab.friends.contacts`). Within one author's feed the log order is the sequence order, so the latest
message of a pair is the one with the largest ``sequence``: `contact_state` needs no global log order.

Invariants:
- ``weight`` follows ssb-friends: ``-1`` when blocking, else ``1`` when following, else ``-2`` (an unfollow, an
  unblock, or a message that sets neither): the same numbers as `ssblab.friends.ContactState.weight`;
- only pairs whose two ends pass ssb-ref's ``isFeed`` count (the JS regex, with its unescaped ``.``);
- self-contacts are dropped from `weighted_edges`: they never change a hop value (see `ssblab.friends.hops`);
- pyspark is imported inside functions only.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab.core.errors import SsbError
from ssblab.friends.contacts import BLOCK, FOLLOW, UNFOLLOW, MessageLike, contact_of
from ssblab.pipeline import schema

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

# ssb-ref 2.16 feedIdRegex as a Java regex; "." is spelt out as JavaScript's (any but its line terminators).
FEED_REGEX = r"^@[a-zA-Z0-9/+]{42}[AEIMQUYcgkosw048]=[^\n\r\u2028\u2029](?:sha256|ed25519)$"


class DatasetError(SsbError, ValueError):
    """``--data`` names nothing ssblab can read contacts from (no Parquet table, no store, no log)."""

    code = "graph-data"


def contacts_from_messages(spark: SparkSession, messages: Iterable[MessageLike]) -> DataFrame:
    """The ``contacts`` table of ``messages`` (as ssb-friends reads them), for sources without a Parquet export.

    ``sequence`` is each message's sequence when known, else its position in ``messages`` (log order either way).
    """
    import pandas as pd

    rows = []
    for position, message in enumerate(messages, start=1):
        contact = contact_of(message)
        if contact is None:
            continue
        value: Any = getattr(message, "value", message)
        key = getattr(message, "id", None) or value.get("key") or f"#{position}"
        source, dest, state = contact
        rows.append((str(key), source, int(value.get("sequence", position)), float(value.get("timestamp", 0.0)),
                     dest, state.following, state.blocking))
    names = [column.name for column in schema.TABLES["contacts"]]
    # Through Arrow: a list of rows would be pickled row by row through a Python worker.
    frame = pd.DataFrame(rows, columns=names).astype({"sequence": "int64", "timestamp": "float64",
                                                      "following": bool, "blocking": bool})
    return spark.createDataFrame(frame, schema.ddl("contacts"))


def _table_path(data: Path, table: str) -> Path | None:
    for candidate in (data / table, data / f"{table}.parquet"):
        if candidate.exists():
            return candidate
    return None


def read_table(spark: SparkSession, data: str | Path, table: str) -> DataFrame | None:
    """A table of a Parquet dataset (``DATA/TABLE/`` or ``DATA/TABLE.parquet``), or None when absent."""
    path = _table_path(Path(data), table)
    return None if path is None else spark.read.schema(schema.ddl(table)).parquet(str(path))


def load_contacts(spark: SparkSession, data: str | Path) -> DataFrame:
    """The ``contacts`` table of a Parquet dataset, a store, a log.offset or a JSONL file.

    Raises:
        DatasetError: ``data`` holds none of them.
    """
    found = read_table(spark, data, "contacts")
    if found is not None:
        return found
    import orjson

    from ssblab.store import Store, read_source
    from ssblab.store.verify import is_store

    path = Path(data)
    if is_store(path):
        with Store(path) as store:
            return contacts_from_messages(spark, [orjson.loads(value) for _, value, _ in store.log()])
    if path.is_file() or (path / "flume" / "log.offset").exists():
        return contacts_from_messages(spark, (r.message for r in read_source(path) if r.message is not None))
    raise DatasetError(f"graph data: {path} has no contacts table (contacts/ or contacts.parquet), "
                       "no ssblab store and no log.offset or JSONL file")


def weight_of(following: Column, blocking: Column) -> Column:
    """ssb-friends' edge weight as a Column (nulls count as false, as missing fields do in JS)."""
    from pyspark.sql import functions as F

    return (F.when(F.coalesce(blocking, F.lit(False)), F.lit(BLOCK))
            .when(F.coalesce(following, F.lit(False)), F.lit(FOLLOW))
            .otherwise(F.lit(UNFOLLOW)))


def contact_state(contacts: DataFrame) -> DataFrame:
    """Per (author, contact): the state of the latest contact message (``src, dst, state, weight, sequence``).

    ``state`` is ``following``, ``blocking`` or ``cleared``; ``sequence`` and ``timestamp`` are those of the message
    that set it.
    """
    from pyspark.sql import functions as F

    feeds = contacts.where(F.col("author").rlike(FEED_REGEX) & F.col("contact").rlike(FEED_REGEX))
    latest = (feeds.groupBy(F.col("author").alias("src"), F.col("contact").alias("dst"))
              .agg(F.max_by(F.struct("following", "blocking", "sequence", "timestamp"), "sequence").alias("m")))
    weight = weight_of(F.col("m.following"), F.col("m.blocking"))
    state = (F.when(weight == BLOCK, "blocking").when(weight == FOLLOW, "following").otherwise("cleared"))
    return latest.select("src", "dst", state.alias("state"), weight.alias("weight"),
                         F.col("m.sequence").alias("sequence"), F.col("m.timestamp").alias("timestamp"))


def weighted_edges(state: DataFrame) -> DataFrame:
    """The edges hops traverses: ``src, dst, weight`` without self-contacts."""
    from pyspark.sql import functions as F

    return state.where(F.col("src") != F.col("dst")).select("src", "dst", "weight")


def follow_edges(state: DataFrame) -> DataFrame:
    """The follow graph's edges (``src, dst``): pairs whose latest contact message follows."""
    from pyspark.sql import functions as F

    return state.where((F.col("weight") == FOLLOW) & (F.col("src") != F.col("dst"))).select("src", "dst")


def feeds(state: DataFrame) -> DataFrame:
    """Every feed named by a contact (``id``), as an author or as a contact."""
    return state.select(state["src"].alias("id")).union(state.select(state["dst"].alias("id"))).distinct()


def follow_graph(state: DataFrame) -> Any:
    """The follow graph as a GraphFrame: all feeds in ``state`` as vertices, the follows as edges."""
    from ssblab.pipeline.session import graphframe

    return graphframe(feeds(state), follow_edges(state))


def edges_frame(spark: SparkSession, edges: dict[tuple[str, str], int]) -> DataFrame:
    """A ``src, dst, weight`` frame from ``{(source, dest): weight}`` (hand-made graphs, benchmarks, what-ifs)."""
    import pandas as pd

    # Through Arrow: a million edges as a Python list would be pickled row by row through a Python worker.
    frame = pd.DataFrame({"src": [s for s, _ in edges], "dst": [d for _, d in edges],
                          "weight": pd.array(list(edges.values()), dtype="int32")})
    return spark.createDataFrame(frame, "src string, dst string, weight int")
