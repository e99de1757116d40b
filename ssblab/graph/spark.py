"""The Spark engine of the graph analyses: DataFrames, the shared queries in Spark SQL, GraphFrames at scale.

Relations are DataFrames; a query is ``spark.sql`` over them (lazy), collected to Arrow where an answer is due.
The follow graph is packed once: collected here when it has at most ``local_limit`` edges (then every iterative
algorithm is the local one, milliseconds a question), else kept in Spark as numpy blocks, one per core
(`SparkBlocks`: a hops level or a PageRank iteration is one shuffle-free job), with GraphFrames for components,
paths, triangles and motifs. Both ways give the answers of the local engine (tests/graph run every analysis on
both and force the blocks with ``local_limit=0``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ssblab.core.schema import arrow_type
from ssblab.friends.contacts import BLOCK, FOLLOW, UNFOLLOW
from ssblab.graph.errors import GraphError
from ssblab.graph.packed import PackedGraph, pack_arrays
from ssblab.graph.queries import sql_literal
from ssblab.pipeline.tables import SPARK, Dialect

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["LOCAL_EDGES", "MOTIFS", "SparkBlocks", "SparkGraphEngine"]

LOCAL_EDGES = 5_000_000  # graphs up to this many edges are collected and iterated here (24 bytes an edge)
BLOCK_SCHEMA = "src binary, dst binary, weight binary"
SCC_ITERATIONS = 100  # GraphX's strongly connected components stop here even if labels still move
MOTIFS = {
    # name: (GraphFrames motif, how many matches one instance makes)
    "mutual_pairs": ("(a)-[]->(b); (b)-[]->(a)", 2),
    "follow_cycles": ("(a)-[]->(b); (b)-[]->(c); (c)-[]->(a)", 3),
    "feed_forward": ("(a)-[]->(b); (b)-[]->(c); (a)-[]->(c)", 1),
}


class SparkGraphEngine:
    """Spark SQL over DataFrames; GraphFrames for graphs kept in Spark."""

    name = "spark"
    dialect: Dialect = SPARK

    def __init__(self, spark: SparkSession, *, local_limit: int = LOCAL_EDGES) -> None:
        self.spark = spark
        self.local_limit = local_limit

    def query(self, sql: str, **inputs: Any) -> DataFrame:
        return self.spark.sql(sql, **inputs)

    def collect(self, relation: DataFrame) -> Any:
        """A DataFrame's rows as an Arrow table of its own types (through pandas, which Spark fills from Arrow;
        the schema keeps nullable integers integers)."""
        import pyarrow as pa

        schema = pa.schema([(f.name, arrow_type(f.dataType.simpleString())) for f in relation.schema.fields])
        return pa.Table.from_pandas(relation.toPandas(), schema=schema, preserve_index=False)

    def from_arrow(self, table: Any) -> DataFrame:
        ddl = ", ".join(f"`{f.name}` {_spark_type(f.type)}" for f in table.schema)
        return self.spark.createDataFrame(table.to_pandas(), ddl)

    def cache(self, relation: DataFrame) -> DataFrame:
        return relation.cache()

    def pack(self, edges: DataFrame, feeds: DataFrame) -> PackedGraph:
        """The edges collected and packed here when they fit ``local_limit``, else kept as `SparkBlocks`."""
        if edges.count() <= self.local_limit:
            found = edges.toPandas()
            return pack_arrays(found["src"], found["dst"], found["weight"], feeds.toPandas()["id"])
        return pack_blocks(edges, feeds)

    def graphframe(self, edges: DataFrame, feeds: DataFrame) -> Any:
        """The follow graph as a GraphFrame: every feed a vertex, the follows its edges."""
        from pyspark.sql import functions as F

        from ssblab.pipeline.session import graphframe

        return graphframe(feeds, edges.where(F.col("weight") == FOLLOW).select("src", "dst"))

    def components(self, edges: DataFrame, feeds: DataFrame, *, strong: bool) -> Any:
        """``id, component`` (GraphFrames' labels), weakly or strongly connected, as an Arrow table."""
        from ssblab.pipeline.session import connected_components

        graph = self.graphframe(edges, feeds)
        found = graph.stronglyConnectedComponents(maxIter=SCC_ITERATIONS) if strong else connected_components(
            graph, algorithm="graphx")
        return self.collect(found.select("id", "component"))

    def triangles(self, edges: DataFrame, feeds: DataFrame) -> Any:
        """``id, triangles`` of the undirected follow graph, as an Arrow table."""
        found = self.graphframe(edges, feeds).triangleCount()
        return self.collect(found.select("id", found["count"].alias("triangles")))

    def motif_counts(self, edges: DataFrame, feeds: DataFrame) -> dict[str, int]:
        """How often each of `MOTIFS` occurs (each instance once; self-follows are not edges here)."""
        from pyspark.sql import functions as F

        graph = self.graphframe(edges.where(F.col("src") != F.col("dst")), feeds)
        counts = {}
        for name, (pattern, repeats) in MOTIFS.items():
            distinct = F.col("a.id") != F.col("b.id")
            if "(c)" in pattern:
                distinct = distinct & (F.col("b.id") != F.col("c.id")) & (F.col("a.id") != F.col("c.id"))
            counts[name] = graph.find(pattern).where(distinct).count() // repeats
        return counts

    def path(self, edges: DataFrame, feeds: DataFrame, source: str, target: str, max_length: int) -> list[str] | None:
        """The lexicographically smallest shortest chain of follows, by GraphFrames' breadth-first search."""
        found = self.graphframe(edges, feeds).bfs(f"id = {sql_literal(source)}", f"id = {sql_literal(target)}",
                                                  maxPathLength=max_length)
        middle = sorted((c for c in found.columns if c.startswith("v")), key=lambda c: int(c[1:]))
        chains = [[source, *(row[c]["id"] for c in middle), target] for row in found.collect()]
        return min(chains) if chains else None


def _spark_type(arrow: Any) -> str:
    """The Spark SQL type name of an Arrow type (those of the dataset's tables)."""
    import pyarrow as pa

    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "string"
    if pa.types.is_int32(arrow):
        return "int"
    if pa.types.is_integer(arrow):
        return "bigint"
    if pa.types.is_floating(arrow):
        return "double"
    if pa.types.is_boolean(arrow):
        return "boolean"
    if pa.types.is_timestamp(arrow):
        return "timestamp"
    if pa.types.is_list(arrow):
        return f"array<{_spark_type(arrow.value_type)}>"
    raise GraphError(f"no Spark type for the Arrow type {arrow}")


def pack_blocks(edges: DataFrame, feeds: DataFrame) -> PackedGraph:
    """The edges as numpy blocks cached in Spark, one per core, for graphs too big to collect."""
    import numpy as np
    import pandas as pd
    from pyspark.sql import functions as F

    spark = edges.sparkSession
    named = edges.select(F.col("src").alias("id")).union(edges.select(F.col("dst").alias("id"))).union(feeds)
    ids = tuple(sorted(row["id"] for row in named.distinct().collect()))
    lookup = spark.sparkContext.broadcast(pd.Index(ids))

    def pack(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        parts = [(lookup.value.get_indexer(b["src"]), lookup.value.get_indexer(b["dst"]), b["weight"].to_numpy())
                 for b in batches]
        if parts:
            src, dst, weight = (np.concatenate([p[i] for p in parts]).astype(np.int32) for i in range(3))
            yield pd.DataFrame({"src": [src.tobytes()], "dst": [dst.tobytes()], "weight": [weight.tobytes()]})

    # One block per core: every round is then one task per core (a frame made from pandas can have a hundred
    # small partitions, and each task costs a Python worker round trip).
    spread = edges.select("src", "dst", F.col("weight").cast("int")).coalesce(spark.sparkContext.defaultParallelism)
    blocks = spread.mapInPandas(pack, BLOCK_SCHEMA).cache()
    count = int(blocks.select(F.sum(F.length("src"))).first()[0] or 0) // 4  # materialises the cache
    lookup.unpersist()
    return PackedGraph(ids, count, remote=SparkBlocks(blocks, len(ids)))


def _arrays(row: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    return tuple(np.frombuffer(row[c], dtype=np.int32) for c in ("src", "dst", "weight"))  # type: ignore[return-value]


class SparkBlocks:
    """`ssblab.graph.packed.Remote` over cached numpy blocks: each operation one shuffle-free job with its vector
    broadcast (a barrier stage adding the partial vectors with ``allGather`` took longer: its synchronisation
    costs more than a job here)."""

    def __init__(self, blocks: DataFrame, feeds: int) -> None:
        self.blocks, self.feeds = blocks, feeds

    def out_degrees(self) -> np.ndarray:
        import numpy as np

        n = self.feeds

        def degree(src: np.ndarray, _dst: np.ndarray, weight: np.ndarray, _: np.ndarray) -> np.ndarray:
            return np.bincount(src[weight == FOLLOW], minlength=n).astype(np.float64)

        return self._summed(degree, np.zeros(0))

    def flow(self, share: np.ndarray) -> np.ndarray:
        import numpy as np

        n = self.feeds

        def passed(src: np.ndarray, dst: np.ndarray, weight: np.ndarray, share: np.ndarray) -> np.ndarray:
            follow = weight == FOLLOW
            return np.bincount(dst[follow], weights=share[src[follow]], minlength=n)

        return self._summed(passed, share)

    def _summed(self, per_block: Any, vector: np.ndarray) -> np.ndarray:
        """Run ``per_block(src, dst, weight, vector) -> float64 array`` on every block; the sum of the results."""
        import numpy as np
        import pandas as pd

        shared = self.blocks.sparkSession.sparkContext.broadcast(vector)

        def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            for batch in batches:
                for row in batch.itertuples(index=False):
                    yield pd.DataFrame({"part": [per_block(*_arrays(row._asdict()), shared.value).tobytes()]})

        parts = self.blocks.mapInPandas(run, "part binary").collect()
        shared.destroy()
        total = np.zeros(self.feeds)
        for part in parts:
            total += np.frombuffer(part["part"])
        return total

    def offers(self, front: np.ndarray, level: int) -> dict[int, int]:
        """Each block keeps its edges from frontier feeds, values them by ssb-friends' rules and returns the best
        value per (root, feed)."""
        width = self.feeds
        shared = self.blocks.sparkSession.sparkContext.broadcast(front)

        def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            for batch in batches:
                for row in batch.itertuples(index=False):
                    yield _block_offers(_arrays(row._asdict()), shared.value.reshape(-1, 3), level, width)

        rows: Any = self.blocks.mapInPandas(run, "key long, value long").toPandas()
        shared.destroy()
        best = rows.groupby("key")["value"].max()
        return dict(zip(best.index.tolist(), best.tolist(), strict=True))

    def release(self) -> None:
        self.blocks.unpersist()


def _block_offers(block: tuple[np.ndarray, np.ndarray, np.ndarray], table: np.ndarray, level: int,
                  width: int) -> pd.DataFrame:
    """One block's best offer per ``root * width + feed`` for ``|hops| = level`` (`ssblab.graph.traversal`)."""
    import numpy as np
    import pandas as pd

    src, dst, weight = block
    frame = pd.DataFrame({"root": table[:, 0], "src": table[:, 1], "hops": table[:, 2]})
    mask = np.isin(src, frame["src"].to_numpy())
    found = frame.merge(pd.DataFrame({"src": src[mask], "dst": dst[mask], "w": weight[mask]}), on="src")
    h, w = found["hops"].to_numpy(), found["w"].to_numpy()
    value = np.select([(w == FOLLOW) & (h == level - 1), (w == BLOCK) & (h == level - 1),
                       (w == UNFOLLOW) & (h == level - 2)], [level, -level, -level], 0)
    keys = found["root"].to_numpy() * width + found["dst"].to_numpy()
    offers = pd.Series(value, index=keys)[value != 0].groupby(level=0).max()  # +level beats -level
    return pd.DataFrame({"key": offers.index.to_numpy(np.int64), "value": offers.to_numpy(np.int64)})


def edges_with_blocks(edges: DataFrame, blocks: Iterable[tuple[str, str]]) -> DataFrame:
    """``edges`` with each ``(blocker, blocked)`` pair's state replaced by a block (self-blocks are ignored)."""
    rows = sorted({(a, b, BLOCK) for a, b in blocks if a != b})
    new = edges.sparkSession.createDataFrame(rows, "src string, dst string, weight int")
    return edges.join(new.select("src", "dst"), ["src", "dst"], "left_anti").unionByName(new)
