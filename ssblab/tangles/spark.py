"""Tangles and causal order on Spark, over the pipeline's tables (``tangle_edges``, ``links``, ``messages``).

Strategy: pure ``DataFrame -> DataFrame`` transforms for what parallelises (depths of every tangle by iterative
joins, dangling links, heads), and :func:`local_causal_index`, which streams the three tables to the driver
into a :class:`~ssblab.tangles.causal.CausalIndex` for interactive queries. Whole-dataset Lamport depths by
joins would need one round per message on the longest chain (a feed's length), so the whole-dataset
relation is served by the local index instead; at a million messages it fits in a few hundred MiB.

Invariants: a tangle's root has depth 0 and any other message 1 + the largest depth of the messages it
links to (its ``parent``s, or the root when it has none), computed over the messages that are present;
:func:`dangling_links` lists the links to absent ones, which make those depths lower bounds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ssblab.tangles.causal import CausalIndex, CausalMessage, build_index

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["dangling_links", "local_causal_index", "tangle_depths", "tangle_heads", "tangle_links"]

MAX_ROUNDS = 10_000


def tangle_links(edges: DataFrame) -> DataFrame:
    """``(tangle, root, id, parent)``: one row per link, the root standing in for a null ``parent``."""
    from pyspark.sql import functions as F

    return edges.select("tangle", "root", "id", F.coalesce("parent", "root").alias("parent")).distinct()


def tangle_depths(edges: DataFrame, *, max_rounds: int = MAX_ROUNDS) -> DataFrame:
    """``(tangle, root, id, depth)`` for every root and linked message, by longest-path rounds of joins.

    Each round lets depths flow one link further; it stops when a round raises no depth, so it runs
    (longest path + 1) rounds. Lineage is cut every round (local checkpoints) so plans stay small.
    """
    from pyspark.sql import functions as F

    links = tangle_links(edges).localCheckpoint()
    depths = links.select("tangle", "root", F.col("root").alias("id"), F.lit(0).alias("depth")).distinct()
    depths = depths.localCheckpoint()
    for _ in range(max_rounds):
        reached = (
            links.join(depths.withColumnRenamed("id", "parent"), ["tangle", "root", "parent"])
            .groupBy("tangle", "root", "id")
            .agg((F.max("depth") + 1).alias("depth"))
        )
        # The rows whose depth rises this round (new ones included); none left means every depth is final.
        rising = reached.join(depths.withColumnRenamed("depth", "was"), ["tangle", "root", "id"], "left").where(
            F.col("was").isNull() | (F.col("depth") > F.col("was"))
        ).drop("was").localCheckpoint()
        if rising.isEmpty():
            break
        depths = depths.join(rising.select("tangle", "root", "id"), ["tangle", "root", "id"], "left_anti")
        depths = depths.unionByName(rising).localCheckpoint()
    return depths


def tangle_heads(edges: DataFrame) -> DataFrame:
    """``(tangle, root, heads, concurrent)``: the members nobody links to (sorted), and whether there are two+."""
    from pyspark.sql import functions as F

    links = tangle_links(edges)
    members = links.select("tangle", "root", "id").unionByName(
        links.select("tangle", "root", F.col("root").alias("id"))
    ).distinct()
    linked = links.select("tangle", "root", F.col("parent").alias("id")).distinct()
    heads = members.join(linked, ["tangle", "root", "id"], "left_anti")
    return heads.groupBy("tangle", "root").agg(F.array_sort(F.collect_list("id")).alias("heads")).withColumn(
        "concurrent", F.size("heads") > 1
    )


def dangling_links(edges: DataFrame, messages: DataFrame) -> DataFrame:
    """``(tangle, root, id, parent)`` links whose target (a parent or the root) is not in ``messages``."""
    present = messages.select(messages["id"].alias("parent"))
    return tangle_links(edges).join(present, ["parent"], "left_anti").select("tangle", "root", "id", "parent")


def _references(messages: DataFrame, links: DataFrame, edges: DataFrame) -> DataFrame:
    """``(id, author, sequence, refs)``: each message with the message ids its content names."""
    from pyspark.sql import functions as F

    named = links.where(F.col("kind") == "message").select("id", F.col("target").alias("ref"))
    tangled = tangle_links(edges).select("id", F.col("parent").alias("ref"))
    refs = named.unionByName(tangled).groupBy("id").agg(F.array_sort(F.collect_set("ref")).alias("refs"))
    return messages.select("id", "author", "sequence", "timestamp").join(refs, ["id"], "left")


def local_causal_index(messages: DataFrame, links: DataFrame, edges: DataFrame, **options: int) -> CausalIndex:
    """A :class:`CausalIndex` of every message in ``messages``, streamed to the driver by claimed time.

    ``options`` go to :func:`~ssblab.tangles.causal.build_index` (``every``, ``window``).
    """
    # Claimed time is nearly a causal order: it keeps references close, which the builder's window relies on.
    refs = _references(messages, links, edges)
    rows = refs.orderBy("timestamp", "author", "sequence").toLocalIterator()

    def causal_messages() -> Iterator[CausalMessage]:
        for row in rows:
            yield CausalMessage(row["id"], row["author"], int(row["sequence"]), tuple(row["refs"] or ()))

    return build_index(causal_messages(), **options)
