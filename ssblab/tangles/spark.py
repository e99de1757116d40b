"""Tangles and causal order on Spark, over the pipeline's tables (``tangle_edges``, ``links``, ``messages``).

Strategy: pure ``DataFrame -> DataFrame`` transforms for what parallelises (depths of every tangle and Lamport
depths of the whole dataset by iterative joins, dangling links and references, heads), and
:func:`local_causal_index`, which streams the three tables to the driver into a
:class:`~ssblab.tangles.causal.CausalIndex` for interactive happened-before queries.

Whole-dataset depths (:func:`causal_depths`) use that each feed is totally ordered: a round passes depths along
every reference at once and then along every feed with one running-max window, so the number of rounds is the
number of cross-feed references on the longest chain (plus one), not the chain's length (a feed's length).

Invariants: a tangle's root has depth 0 and any other message 1 + the largest depth of the messages it
links to (its ``parent``s, or the root when it has none), computed over the messages that are present;
:func:`dangling_links` and :func:`dangling_references` list the links to absent ones, which make those depths
lower bounds (``causal_depths`` says which in its ``complete`` column).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ssblab.tangles.causal import CausalError, CausalIndex, CausalMessage, build_index

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "causal_depths",
    "dangling_links",
    "dangling_references",
    "local_causal_index",
    "tangle_depths",
    "tangle_heads",
    "tangle_links",
]

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


def _positions(messages: DataFrame) -> DataFrame:
    """``(id, author, sequence, run, pos, gap)``: each message's place in its run of consecutive sequences.

    A run restarts after a sequence gap; ``gap`` marks a run's first message whose predecessor in its feed is
    absent (sequence above 1), whose ancestry is then incomplete.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_feed = Window.partitionBy("author").orderBy("sequence")
    starts = messages.select("id", "author", "sequence").withColumn(
        "start", F.coalesce(F.col("sequence") != F.lag("sequence").over(by_feed) + 1, F.lit(True))
    )
    runs = starts.withColumn("run", F.sum(F.col("start").cast("int")).over(by_feed))
    in_run = Window.partitionBy("author", "run").orderBy("sequence")
    return runs.select("id", "author", "sequence", "run", (F.row_number().over(in_run) - 1).alias("pos"),
                       (F.col("start") & (F.col("sequence") > 1)).alias("gap"))


def _reference_pairs(messages: DataFrame, links: DataFrame, edges: DataFrame) -> DataFrame:
    """``(id, ref)``: every message id each message names (content links and tangle edges), once."""
    from pyspark.sql import functions as F

    named = links.where(F.col("kind") == "message").select("id", F.col("target").alias("ref"))
    tangled = tangle_links(edges).select("id", F.col("parent").alias("ref"))
    pairs = named.unionByName(tangled).where(F.col("id") != F.col("ref")).distinct()
    return pairs.join(messages.select("id"), ["id"])


def dangling_references(messages: DataFrame, links: DataFrame, edges: DataFrame) -> DataFrame:
    """``(id, ref)``: references of present messages to ids that are not in ``messages`` (reported, not guessed).

    A feed's missing predecessors are not listed here: :func:`causal_depths` marks the messages after such a
    gap (and everything that depends on them) as not ``complete``.
    """
    present = messages.select(messages["id"].alias("ref"))
    return _reference_pairs(messages, links, edges).join(present, ["ref"], "left_anti").select("id", "ref")


def causal_depths(
    messages: DataFrame, links: DataFrame, edges: DataFrame, *, max_rounds: int = MAX_ROUNDS
) -> DataFrame:
    """``(id, author, sequence, depth, complete)``: the Lamport depth of every message of the dataset.

    ``depth`` is the length of the longest chain of references (``previous`` included) from the message back to
    one that references nothing present: 0 for a feed's first message without references. ``complete`` is
    False when the ancestry reaches a missing message (a dangling reference or a feed gap): the depth is then
    a lower bound over what is present.

    Strategy: a feed is totally ordered, so within a run of consecutive sequences ``depth(m) = pos(m) +
    max(0, max over k <= m of cand(k) - pos(k))``, where ``cand(k)`` is 1 + the largest depth among ``k``'s
    references: one window per feed per round. Starting from ``depth = pos`` (a lower bound), each round
    passes depths along every reference at once, so the rounds are bounded by the cross-feed references on the
    longest chain, not by its length. Lineage is cut every round (local checkpoints).

    Raises:
        CausalError: no fixpoint after ``max_rounds`` rounds (a reference cycle: forged data).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    dangling = dangling_references(messages, links, edges).select("id").distinct().withColumn("lost", F.lit(True))
    present = messages.select(messages["id"].alias("ref"))
    refs = _reference_pairs(messages, links, edges).join(present, ["ref"]).localCheckpoint()
    state = (_positions(messages).join(dangling, ["id"], "left")
             .withColumn("lost", F.col("gap") | F.coalesce("lost", F.lit(False)))
             .select("id", "author", "sequence", "run", "pos", "lost", F.col("pos").alias("depth"),
                     F.col("lost").alias("incomplete"))
             .repartition("author").localCheckpoint())
    in_run = Window.partitionBy("author", "run").orderBy("pos").rowsBetween(Window.unboundedPreceding, 0)
    for _ in range(max_rounds):
        got = refs.join(state.select(F.col("id").alias("ref"), "depth", "incomplete"), ["ref"]).groupBy("id").agg(
            (F.max("depth") + 1).alias("cand"), F.max(F.col("incomplete").cast("int")).alias("inherit"))
        step = state.join(got, ["id"], "left").select(
            "id", "author", "sequence", "run", "pos", "lost", F.col("depth").alias("was"),
            F.col("incomplete").alias("was_incomplete"),
            (F.col("pos") + F.greatest(F.lit(0), F.max(F.col("cand") - F.col("pos")).over(in_run))).alias("depth"),
            (F.max((F.col("lost") | (F.coalesce("inherit", F.lit(0)) > 0)).cast("int")).over(in_run) > 0)
            .alias("incomplete"))
        state = step.localCheckpoint()
        if state.where((F.col("depth") != F.col("was")) | (F.col("incomplete") != F.col("was_incomplete"))).isEmpty():
            return state.select("id", "author", "sequence", "depth", (~F.col("incomplete")).alias("complete"))
        state = state.drop("was", "was_incomplete")
    raise CausalError(f"causal depths: no fixpoint after {max_rounds} rounds (a reference cycle: forged data)")


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
