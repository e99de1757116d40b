"""The about directory (§3.1, Figure 3) and the subjective reader: two viewers, one identity, two names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ssblab.friends import FOLLOW
from ssblab.graph import about_directory, hops_frame, self_and_given, subjective_view
from ssblab.graph.frames import edges_frame
from ssblab.pipeline import schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ABOUTS = [
    # id, author, timestamp, about, name, image, description
    ("%1", "T", 1.0, "T", "tee", "&img", None),
    ("%2", "T", 5.0, "T", "tea", None, "hello"),  # renames itself; sets no image, so &img stays
    ("%3", "F", 2.0, "T", "troll", None, None),
    ("%4", "G", 3.0, "T", "gardener", None, None),
    ("%5", "A", 4.0, "G", "gee", None, None),
    ("%6", "G", 6.0, "G", "g", None, None),
]


def test_directory_and_two_viewers(spark: SparkSession) -> None:
    abouts = spark.createDataFrame(ABOUTS, schema.ddl("abouts"))
    directory = about_directory(abouts).cache()
    rows = {(r["about"], r["author"], r["attribute"]): (r["value"], r["is_self"]) for r in directory.collect()}
    assert rows[("T", "T", "name")] == ("tea", True)
    assert rows[("T", "T", "image")] == ("&img", True)
    assert rows[("T", "F", "name")] == ("troll", False)
    assert len(rows) == 7
    names = {r["about"]: (r["self_chosen"], r["given"]) for r in self_and_given(directory).collect()}
    assert names["T"] == ("tea", ["gardener", "troll"])
    # A follows F only, so never replicates T's own messages; B reaches T through G.
    edges = edges_frame(spark, {("A", "F"): FOLLOW, ("B", "G"): FOLLOW, ("G", "T"): FOLLOW})
    views = subjective_view(directory, hops_frame(edges, ["A", "B"], 2))
    seen = {(r["viewer"], r["about"]): (r["value"], r["rule"]) for r in views.collect()}
    assert seen == {("A", "T"): ("troll", "given"), ("A", "G"): ("gee", "own"),
                    ("B", "T"): ("tea", "self"), ("B", "G"): ("g", "self")}
