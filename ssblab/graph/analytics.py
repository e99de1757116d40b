"""Follow-graph analytics: degrees, mutual follows, PageRank, components, triangles and motifs, follow paths.

Strategy: plain DataFrame transforms where a join says it (degrees, mutual follows, PageRank), GraphFrames where
it has the algorithm (components, strongly connected components, triangles, motif search, breadth-first search).
PageRank is our own loop because GraphFrames' (GraphX's) leaves the rank of dangling feeds (who follow nobody) on
the floor and scales to N; ours is NetworkX's definition, so the two can be compared number for number.

Invariants: edges are ``src, dst`` follows without duplicates or self-loops (`ssblab.graph.frames.follow_edges`);
vertices are ``id`` and include every edge's ends; PageRank values sum to 1 after every iteration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ssblab.graph.packed import PackedGraph

DAMPING = 0.85  # NetworkX's and the PageRank paper's alpha


def degrees(vertices: DataFrame, edges: DataFrame) -> DataFrame:
    """``id, in_degree, out_degree`` for every vertex (0 for feeds nobody follows or who follow nobody)."""
    from pyspark.sql import functions as F

    out_deg = edges.groupBy(F.col("src").alias("id")).agg(F.count("*").alias("out_degree"))
    in_deg = edges.groupBy(F.col("dst").alias("id")).agg(F.count("*").alias("in_degree"))
    joined = vertices.select("id").join(in_deg, "id", "left").join(out_deg, "id", "left")
    return joined.select("id", F.coalesce("in_degree", F.lit(0)).alias("in_degree"),
                         F.coalesce("out_degree", F.lit(0)).alias("out_degree"))


def mutual_follows(edges: DataFrame) -> DataFrame:
    """``a, b`` with ``a < b`` for each pair of feeds that follow each other."""
    from pyspark.sql import functions as F

    back = edges.select(F.col("dst").alias("a"), F.col("src").alias("b"))
    forth = edges.select(F.col("src").alias("a"), F.col("dst").alias("b"))
    return forth.join(back, ["a", "b"]).where(F.col("a") < F.col("b"))


def pagerank(vertices: DataFrame, edges: DataFrame, iterations: int = 10, damping: float = DAMPING) -> DataFrame:
    """``id, pagerank`` after ``iterations`` power iterations from the uniform vector (NetworkX's definition).

    Each feed passes ``damping`` of its rank to the feeds it follows, in equal shares; the rank of feeds who follow
    nobody is spread over all feeds. The graph is packed once (`ssblab.graph.packed`): each iteration is then a
    sparse product on the driver, or one Spark job without a shuffle for graphs too big for the driver.
    """
    from ssblab.graph.packed import pack_graph

    graph = pack_graph(edges.select("src", "dst"), vertices)
    try:
        return packed_pagerank_frame(vertices.sparkSession, graph, iterations, damping)
    finally:
        graph.unpersist()


def packed_pagerank_frame(spark: SparkSession, graph: PackedGraph, iterations: int = 10,
                          damping: float = DAMPING) -> DataFrame:
    """`pagerank` of an already packed graph (its follows; other kinds of edges are ignored)."""
    import pandas as pd

    from ssblab.graph.packed import packed_pagerank

    ranks = packed_pagerank(graph, iterations, damping)
    return spark.createDataFrame(pd.DataFrame({"id": list(graph.ids), "pagerank": ranks}), "id string, pagerank double")


def packed_components_frame(spark: SparkSession, graph: PackedGraph, *, strong: bool = False) -> DataFrame:
    """``id, component`` of a driver-packed graph's follows (`ssblab.graph.packed.packed_components`)."""
    import pandas as pd

    from ssblab.graph.packed import packed_components

    frame = pd.DataFrame({"id": list(graph.ids), "component": packed_components(graph, strong=strong).astype("int64")})
    return spark.createDataFrame(frame, "id string, component long")


def connected_components(graph: Any) -> DataFrame:
    """``id, component`` of the follow graph taken as undirected (GraphFrames, with the safe settings)."""
    from ssblab.pipeline.session import connected_components as safe_components

    return safe_components(graph, algorithm="graphx").select("id", "component")


def strongly_connected_components(graph: Any, max_iterations: int = 10) -> DataFrame:
    """``id, component``: feeds in one component reach each other along follows."""
    found: DataFrame = graph.stronglyConnectedComponents(maxIter=max_iterations)
    return found.select("id", "component")


def triangles(graph: Any) -> DataFrame:
    """``id, triangles``: how many triangles of the undirected follow graph each feed is in."""
    found: DataFrame = graph.triangleCount()
    return found.select("id", found["count"].alias("triangles"))


MOTIFS = {
    # name: (GraphFrames motif, how many matches one instance makes)
    "mutual_pairs": ("(a)-[]->(b); (b)-[]->(a)", 2),
    "follow_cycles": ("(a)-[]->(b); (b)-[]->(c); (c)-[]->(a)", 3),
    "feed_forward": ("(a)-[]->(b); (b)-[]->(c); (a)-[]->(c)", 1),
}


def motif_counts(graph: Any, names: tuple[str, ...] = tuple(MOTIFS)) -> dict[str, int]:
    """How often each named directed motif occurs (each instance once; self-loops are not edges here).

    ``mutual_pairs``: two feeds following each other; ``follow_cycles``: a -> b -> c -> a;
    ``feed_forward``: a follows b and c, b follows c (``a`` introduced to ``c`` twice).
    """
    from pyspark.sql import functions as F

    counts = {}
    for name in names:
        pattern, repeats = MOTIFS[name]
        found = graph.find(pattern)
        distinct = (F.col("a.id") != F.col("b.id"))
        if "(c)" in pattern:
            distinct = distinct & (F.col("b.id") != F.col("c.id")) & (F.col("a.id") != F.col("c.id"))
        counts[name] = found.where(distinct).count() // repeats
    return counts


def _quoted(feed: str) -> str:
    """A SQL string literal (feed ids hold no quotes, but a path query may name anything)."""
    return "'" + feed.replace("\\", "\\\\").replace("'", "\\'") + "'"


def follow_path(graph: Any, source: str, target: str, max_length: int = 6) -> list[str] | None:
    """A shortest chain of follows from ``source`` to ``target`` ("how is X connected to me"), or None.

    Returns:
        ``[source, ..., target]`` (``[source]`` when they are the same feed); None when no chain of at most
        ``max_length`` follows exists.
    """
    if source == target:
        return [source]
    found = graph.bfs(f"id = {_quoted(source)}", f"id = {_quoted(target)}", maxPathLength=max_length)
    rows = found.limit(1).collect()
    if not rows:
        return None
    row = rows[0]
    middle = sorted((name for name in row.asDict() if name.startswith("v")), key=lambda name: int(name[1:]))
    return [source, *(row[name]["id"] for name in middle), target]
