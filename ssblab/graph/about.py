"""The about directory (paper §3.1, Figure 3) and the subjective reader: who is called what, by whom, for whom.

Strategy: the directory keeps, per target, per author, per attribute, the latest value (Figure 3's rows
``target_id, author_id, key, val``). A viewer sees only what the feeds it replicates wrote (its hops in
``0..max``), and picks among them: the name the viewer itself gave, else the target's self-chosen one, else the one
given by the closest feed (latest first on a tie). So two roots can see the same identity under different names.

Invariants: "latest" is the largest claimed ``timestamp`` of the author's about messages for that target and
attribute (the ``abouts`` table has no sequence; within a feed timestamps follow the log order in practice), ties
broken by message id so the answer is deterministic; null values never replace a value (an about message sets
only the attributes it names).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ATTRIBUTES = ("name", "image", "description")
SHORT_ID = 6  # characters of the key shown next to a name: enough to tell namesakes apart on screen


def short_id(feed: str) -> str:
    """``@AbCdE…`` for display."""
    return feed[: SHORT_ID + 1] + "…"


def feed_label(feed: str, names: Mapping[str, str]) -> str:
    """A feed's name and the start of its key (names are self-chosen, so not unique); the key alone unnamed."""
    name = names.get(feed)
    return f"{name} ({short_id(feed)})" if name else short_id(feed)


def self_chosen_names(abouts: DataFrame) -> dict[str, str]:
    """``{feed: the name it gave itself last}``, collected to the driver (one Spark job)."""
    chosen = self_and_given(about_directory(abouts)).where("self_chosen is not null").collect()
    return {row["about"]: row["self_chosen"] for row in chosen}


def about_directory(abouts: DataFrame) -> DataFrame:
    """``about, author, attribute, value, timestamp, is_self``: the latest value per target, author, attribute."""
    from pyspark.sql import functions as F

    pairs = F.array(*(F.struct(F.lit(a).alias("attribute"), F.col(a).alias("value")) for a in ATTRIBUTES))
    long = (abouts.select("id", "author", "about", "timestamp", F.explode(pairs).alias("kv"))
            .where(F.col("kv.value").isNotNull()))
    latest = long.groupBy("about", "author", F.col("kv.attribute").alias("attribute")).agg(
        F.max_by(F.struct(F.col("kv.value").alias("value"), F.col("timestamp")),
                 F.struct("timestamp", "id")).alias("m"))
    return latest.select("about", "author", "attribute", F.col("m.value").alias("value"),
                         F.col("m.timestamp").alias("timestamp"), (F.col("about") == F.col("author")).alias("is_self"))


def self_and_given(directory: DataFrame, attribute: str = "name") -> DataFrame:
    """``about, self_chosen, given``: the target's own latest value and the distinct values others gave it."""
    from pyspark.sql import functions as F

    rows = directory.where(F.col("attribute") == attribute)
    return rows.groupBy("about").agg(
        F.max(F.when(F.col("is_self"), F.col("value"))).alias("self_chosen"),
        F.array_sort(F.collect_set(F.when(~F.col("is_self"), F.col("value")))).alias("given"))


def subjective_view(directory: DataFrame, hops: DataFrame, *, max_hops: int = 2,
                    attribute: str = "name") -> DataFrame:
    """``viewer, about, value, author, rule``: what each viewer (a ``root`` of ``hops``) shows for each target.

    ``rule`` says why: ``own`` (the viewer named it), ``self`` (self-chosen), ``given`` (by the closest feed).

    Args:
        directory: `about_directory` rows.
        hops: ``root, feed, hops`` of the viewers (`ssblab.graph.traversal.hops_frame`).
        max_hops: the viewers' ``friends.hops``: only feeds at ``0..max_hops`` are replicated, so read.
        attribute: which attribute to resolve.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    seen = hops.where((F.col("hops") >= 0) & (F.col("hops") <= max_hops))
    rows = directory.where(F.col("attribute") == attribute).join(seen, directory["author"] == seen["feed"])
    rule = F.when(F.col("author") == F.col("root"), "own").when(F.col("is_self"), "self").otherwise("given")
    rank = F.when(rule == "own", 0).when(rule == "self", 1).otherwise(2)
    order = Window.partitionBy("root", "about").orderBy(rank, "hops", F.desc("timestamp"), "author")
    best = rows.withColumn("rule", rule).withColumn("n", F.row_number().over(order)).where(F.col("n") == 1)
    return best.select(F.col("root").alias("viewer"), "about", "value", "author", "rule")
