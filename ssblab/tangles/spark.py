"""The Spark engine's longest paths: tangle depths and causal depths as iterative ``DataFrame -> DataFrame`` joins.

Strategy: the inputs are what the shared queries of `ssblab.tangles.queries` give (a tangle's links, each
message's place in its feed, the references between present messages); each round passes depths one step along
every link at once, until a round raises none. Whole-dataset depths (:func:`causal_depths`) use that each feed
is totally ordered: a round passes depths along every reference and then along every run of a feed with one
running-max window, so the number of rounds is the number of cross-feed references on the longest chain (plus
one), not the chain's length (a feed's length). Lineage is cut every round (local checkpoints) so plans stay
small.

Invariants: the answers equal the local engine's (`ssblab.tangles.local`) row for row. Depths only rise, and on
acyclic links never past the number of messages involved; a depth that does is on a cycle (forged data), which
raises `CausalError` instead of running forever.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssblab.tangles.clocks import CausalError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["causal_depths", "tangle_depths"]

MAX_ROUNDS = 10_000


def tangle_depths(links: DataFrame, *, max_rounds: int = MAX_ROUNDS) -> DataFrame:
    """``(tangle, root, id, depth)`` for every root and every member reachable from it, by longest-path rounds
    of joins over ``links`` (``tangle, root, id, parent``: `ssblab.tangles.queries.links_sql`).

    Each round lets depths flow one link further; it stops when a round raises no depth, so it runs (longest
    path + 1) rounds.

    Raises:
        CausalError: a depth reached its tangle's number of members (a cycle below the root: forged data), or
            no fixpoint after ``max_rounds`` rounds.
    """
    from pyspark.sql import functions as F

    links = links.localCheckpoint()
    roots = links.select("tangle", "root", F.col("root").alias("id")).distinct()
    members = links.select("tangle", "root", "id").unionByName(roots).distinct()
    sizes = members.groupBy("tangle", "root").agg(F.count("*").alias("size")).localCheckpoint()
    depths = roots.withColumn("depth", F.lit(0)).localCheckpoint()
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
        count, cyclic = rising.join(sizes, ["tangle", "root"]).agg(
            F.count("*"), F.max((F.col("depth") >= F.col("size")).cast("int"))).collect()[0]  # one row
        if cyclic:
            raise CausalError("tangle depths: a cycle of links below a tangle's root (forged data)")
        if not count:
            return depths
        depths = depths.join(rising.select("tangle", "root", "id"), ["tangle", "root", "id"], "left_anti")
        depths = depths.unionByName(rising).localCheckpoint()
    raise CausalError(f"tangle depths: no fixpoint after {max_rounds} rounds")


def causal_depths(positions: DataFrame, references: DataFrame, *, max_rounds: int = MAX_ROUNDS) -> DataFrame:
    """``(id, author, sequence, depth, complete)``: the Lamport depth of every message of ``positions``.

    Args:
        positions: ``id, author, sequence, run, pos, lost`` of the present messages
            (`ssblab.tangles.queries.positions_sql`).
        references: ``id, ref`` between present messages (`ssblab.tangles.queries.present_references_sql`).

    ``depth`` is the length of the longest chain of references (``previous`` included) from the message back to
    one that references nothing present: 0 for a feed's first message without references. ``complete`` is
    False when the ancestry reaches a missing message (a dangling reference or a feed gap: ``lost``): the depth
    is then a lower bound over what is present.

    Strategy: within a run of consecutive sequences ``depth(m) = pos(m) + max(0, max over k <= m of cand(k) -
    pos(k))``, where ``cand(k)`` is 1 + the largest depth among ``k``'s references: one window per feed per
    round. Starting from ``depth = pos`` (a lower bound), each round passes depths along every reference at
    once.

    Raises:
        CausalError: a depth reached the number of messages (a reference cycle: forged data), or no fixpoint
            after ``max_rounds`` rounds.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    refs = references.localCheckpoint()
    state = (positions.select("id", "author", "sequence", "run", "pos", "lost", F.col("pos").alias("depth"),
                              F.col("lost").alias("incomplete"))
             .repartition("author").localCheckpoint())
    total = state.count()
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
        changed = (F.col("depth") != F.col("was")) | (F.col("incomplete") != F.col("was_incomplete"))
        moved, deepest = state.agg(F.max(changed.cast("int")), F.max("depth")).collect()[0]  # one row
        if deepest is not None and deepest >= total:
            raise CausalError("causal depths: a reference cycle (forged data): a depth reached the number of "
                              f"messages, {total}")
        if not moved:
            return state.select("id", "author", "sequence", "depth", (~F.col("incomplete")).alias("complete"))
        state = state.drop("was", "was_incomplete")
    raise CausalError(f"causal depths: no fixpoint after {max_rounds} rounds")
