"""`FollowNetwork`: the one API of the follow-graph analyses, on either engine, with the same answers.

Strategy: a facade over an engine (`ssblab.graph.local.LocalGraphEngine`: DuckDB, Arrow, numpy, scipy; or
`ssblab.graph.spark.SparkGraphEngine`: Spark SQL and GraphFrames). Relational questions are the shared queries of
`ssblab.graph.queries`; iterative ones run on the graph packed once (`ssblab.graph.packed`): hops, PageRank,
components, paths, what-ifs. Answers are plain values or ``pyarrow.Table``s sorted by their keys, so the two
engines' answers compare equal (tests/graph run every method on both).

This is the one boundary that caches: the ``follows`` relation, the edges, the feeds and the packed graph are
made on first use, since every question starts from them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any, Protocol

from ssblab.friends.contacts import BLOCK, FOLLOW, UNFOLLOW, MessageLike, contact_of
from ssblab.graph import moderation, queries
from ssblab.graph.errors import DatasetError
from ssblab.graph.local import LocalGraphEngine
from ssblab.graph.packed import (
    PackedGraph,
    canonical_components,
    packed_components,
    packed_motifs,
    packed_pagerank,
    packed_path,
    packed_triangles,
    packed_with_blocks,
)
from ssblab.graph.spark import LOCAL_EDGES, SparkGraphEngine
from ssblab.graph.traversal import Coverage, hops, hops_table, overlap_experiment
from ssblab.pipeline.engines import Engine, SparkEngine, resolve_engine
from ssblab.pipeline.tables import Dialect

__all__ = ["FollowNetwork", "GraphEngine", "graph_engine"]

DAMPING = 0.85  # NetworkX's and the PageRank paper's alpha


class GraphEngine(Protocol):
    """What `FollowNetwork` asks of an engine (`LocalGraphEngine`, `SparkGraphEngine`)."""

    name: str
    dialect: Dialect

    def query(self, sql: str, **inputs: Any) -> Any: ...

    def collect(self, relation: Any) -> Any: ...

    def from_arrow(self, table: Any) -> Any: ...

    def cache(self, relation: Any) -> Any: ...

    def pack(self, edges: Any, feeds: Any) -> PackedGraph: ...


def graph_engine(engine: str | Engine | Any = None, *, spark: Any = None,
                 local_limit: int | None = None) -> GraphEngine:
    """The graph engine of an engine choice (`ssblab.pipeline.engines.resolve_engine`'s rule; a graph engine is
    taken as it is). ``local_limit``: on Spark, the most edges collected here rather than kept in Spark blocks."""
    if isinstance(engine, LocalGraphEngine | SparkGraphEngine):
        return engine
    chosen = resolve_engine(engine, spark=spark)
    if isinstance(chosen, SparkEngine):
        return SparkGraphEngine(chosen.spark, local_limit=LOCAL_EDGES if local_limit is None else local_limit)
    return LocalGraphEngine()


class FollowNetwork:
    """The follow graph of a dataset: hops, analytics, moderation scenarios and the about directory.

    Args:
        engine: the graph engine (`graph_engine`).
        follows: the ``follows`` table (docs/datasets.md) as the engine's relation.
        abouts: the ``abouts`` table, for the about directory.
        messages: the ``messages`` table, for log sizes (§8.6).

    Examples:
        >>> net = ssblab.open_dataset("out/parquet").graph()  # doctest: +SKIP
        >>> net.hops("@me...=.ed25519", max_hops=2)  # doctest: +SKIP
        {'@me...=.ed25519': 0, ...}
    """

    def __init__(self, engine: GraphEngine, follows: Any, *, abouts: Any = None, messages: Any = None) -> None:
        self.engine = engine
        self.follows = engine.cache(follows)
        self.abouts = abouts
        self.messages = messages

    @classmethod
    def from_messages(cls, messages: Iterable[MessageLike], *, engine: str | Engine | Any = None,
                      spark: Any = None) -> FollowNetwork:
        """The follow graph of messages read as ssb-friends reads them (hand-made graphs, tests, widgets)."""
        import pyarrow as pa

        from ssblab.pipeline.tables import follows_sql

        rows = []
        for position, message in enumerate(messages, start=1):
            found = contact_of(message)
            if found is not None:
                value: Any = getattr(message, "value", message)
                author, contact, state = found
                rows.append({"id": str(getattr(message, "id", None) or value.get("key") or f"#{position}"),
                             "author": author, "sequence": int(value.get("sequence", position)),
                             "timestamp": float(value.get("timestamp", 0.0)), "contact": contact,
                             "following": state.following, "blocking": state.blocking})
        schema = pa.schema([("id", pa.string()), ("author", pa.string()), ("sequence", pa.int64()),
                            ("timestamp", pa.float64()), ("contact", pa.string()), ("following", pa.bool_()),
                            ("blocking", pa.bool_())])
        chosen = graph_engine(engine, spark=spark)
        contacts = chosen.from_arrow(pa.Table.from_pylist(rows, schema))
        return cls(chosen, chosen.query(follows_sql(chosen.dialect), contacts=contacts))

    @classmethod
    def from_edges(cls, edges: Mapping[tuple[str, str], int], *, engine: str | Engine | Any = None,
                   spark: Any = None, abouts: Any = None, messages: Any = None) -> FollowNetwork:
        """A hand-made graph: ``{(source, dest): weight}`` with ssb-friends' weights (1 follow, -1 block, -2
        cleared), any names; ``abouts`` and ``messages`` as Arrow tables with the dataset's columns."""
        import pyarrow as pa

        states = {FOLLOW: "following", BLOCK: "blocking", UNFOLLOW: "cleared"}
        pairs = sorted(edges)
        follows = pa.table({"author": pa.array([a for a, _ in pairs], pa.string()),
                            "contact": pa.array([b for _, b in pairs], pa.string()),
                            "state": pa.array([states[edges[p]] for p in pairs], pa.string()),
                            "id": pa.array([f"%{a}>{b}" for a, b in pairs], pa.string()),
                            "sequence": pa.array(range(1, len(pairs) + 1), pa.int64()),
                            "timestamp": pa.array([0.0] * len(pairs), pa.float64())})
        chosen = graph_engine(engine, spark=spark)
        return cls(chosen, chosen.from_arrow(follows),
                   abouts=None if abouts is None else chosen.from_arrow(abouts),
                   messages=None if messages is None else chosen.from_arrow(messages))

    @property
    def engine_name(self) -> str:
        return self.engine.name

    # The relations every question starts from.

    @cached_property
    def edge_relation(self) -> Any:
        """``src, dst, weight`` without self-contacts (the engine's relation, cached)."""
        return self.engine.cache(self.engine.query(queries.edges_sql(), follows=self.follows))

    @cached_property
    def feed_relation(self) -> Any:
        """``id`` of every feed a contact names (the engine's relation, cached)."""
        return self.engine.cache(self.engine.query(queries.feeds_sql(), follows=self.follows))

    @cached_property
    def packed(self) -> PackedGraph:
        """Every feed numbered and the weighted edges packed, once (`ssblab.graph.packed`)."""
        return self.engine.pack(self.edge_relation, self.feed_relation)

    @cached_property
    def _id_column(self) -> Any:
        """The packed feed ids as an Arrow array, once (each table of a per-feed answer starts with them)."""
        import pyarrow as pa

        return pa.array(self.packed.ids, pa.string())

    def _table(self, sql: str, order: Sequence[str], **inputs: Any) -> Any:
        """A query's answer as an Arrow table sorted by ``order`` (so both engines' answers compare equal)."""
        found = self.engine.collect(self.engine.query(sql, **inputs))
        return found.sort_by([(key, "ascending", "at_start") for key in order])

    def edges(self) -> Any:
        """``src, dst, weight`` as an Arrow table."""
        return self._table(queries.edges_sql(), ["src", "dst"], follows=self.follows)

    def state(self) -> Any:
        """The ``follows`` table (each pair's current state) as an Arrow table."""
        return self.engine.collect(self.follows).sort_by([("author", "ascending"), ("contact", "ascending")])

    # Hops and replication.

    def hops(self, root: str, max_hops: int = 3, *, server_max: int | None = None) -> dict[str, int]:
        """``{feed: hops}`` as ``friends.hops({start: root, max: max_hops})`` answers (ssb-server 16)."""
        return hops(self.packed, root, max_hops, server_max=server_max)

    def hops_table(self, roots: Iterable[str], max_hops: int = 3) -> Any:
        """``root, feed, hops`` for many roots, as an Arrow table."""
        import pyarrow as pa

        found = hops_table(self.packed, roots, max_hops)
        rows = sorted((root, feed, value) for root, values in found.items() for feed, value in values.items())
        return pa.table({"root": pa.array([r[0] for r in rows], pa.string()),
                         "feed": pa.array([r[1] for r in rows], pa.string()),
                         "hops": pa.array([r[2] for r in rows], pa.int32())})

    def replication_set(self, root: str, max_hops: int = 2) -> set[str]:
        """The feeds ``root`` fetches with ``friends.hops = max_hops``."""
        return {f for f, value in self.hops(root, max_hops).items() if moderation.is_replicated(value, max_hops)}

    def followers_of_someone(self) -> list[str]:
        """Every feed that follows at least one feed, sorted (the A.6 experiment draws its peers from them)."""
        return sorted(set(self.edges().filter(_column_equals("weight", 1))["src"].to_pylist()))

    def overlap_experiment(self, root: str, *, peers: int = 5, samples: int = 10,
                           rng: random.Random) -> list[Coverage]:
        """The paper's A.6 experiment (`ssblab.graph.traversal.overlap_experiment`)."""
        candidates = [feed for feed in self.followers_of_someone() if feed != root]
        return overlap_experiment(self.packed, root, candidates=candidates, peers=peers, samples=samples, rng=rng)

    # Analytics.

    def degrees(self) -> Any:
        """``id, in_degree, out_degree`` for every feed (0 for feeds nobody follows or who follow nobody)."""
        return self._table(queries.degrees_sql(), ["id"], edges=self.edge_relation, feeds=self.feed_relation)

    def mutual_follows(self) -> Any:
        """``a, b`` with ``a < b`` for each pair of feeds that follow each other."""
        return self._table(queries.mutual_follows_sql(), ["a", "b"], edges=self.edge_relation)

    def pagerank(self, iterations: int = 10, damping: float = DAMPING) -> Any:
        """``id, pagerank`` after ``iterations`` power iterations from the uniform vector (NetworkX's definition):
        each feed passes ``damping`` of its rank to the feeds it follows, in equal shares; the rank of feeds who
        follow nobody is spread over all feeds."""
        import pyarrow as pa

        ranks = packed_pagerank(self.packed, iterations, damping)
        return pa.table({"id": self._id_column, "pagerank": pa.array(ranks, pa.float64())})

    def components(self, *, strong: bool = False) -> Any:
        """``id, component``: the weakly (or, with ``strong``, strongly) connected components of the follow graph,
        numbered 0, 1, … in the order of their smallest feed id."""
        import pyarrow as pa

        if self.packed.local is not None:
            labels = packed_components(self.packed, strong=strong)
        else:
            found = self._remote().components(self.edge_relation, self.feed_relation, strong=strong)
            by_id = dict(zip(found["id"].to_pylist(), found["component"].to_pylist(), strict=True))
            labels = [by_id[feed] for feed in self.packed.ids]
        return pa.table({"id": self._id_column,
                         "component": pa.array(canonical_components(_array(labels)), pa.int64())})

    def triangles(self) -> Any:
        """``id, triangles``: how many triangles of the undirected follow graph each feed is in."""
        import pyarrow as pa

        if self.packed.local is None:
            return self._remote().triangles(self.edge_relation, self.feed_relation).sort_by("id")
        return pa.table({"id": self._id_column,
                         "triangles": pa.array(packed_triangles(self.packed), pa.int64())})

    def motif_counts(self) -> dict[str, int]:
        """How often each directed motif occurs: ``mutual_pairs``, ``follow_cycles`` (a -> b -> c -> a) and
        ``feed_forward`` (a follows b and c, b follows c)."""
        if self.packed.local is None:
            return self._remote().motif_counts(self.edge_relation, self.feed_relation)  # type: ignore[no-any-return]
        return packed_motifs(self.packed)

    def path(self, source: str, target: str, max_length: int = 6) -> list[str] | None:
        """The lexicographically smallest of the shortest chains of follows from ``source`` to ``target`` ("how is
        X connected to me"), or None when no chain of at most ``max_length`` follows exists."""
        if self.packed.local is None:
            if source == target:
                return [source]
            return self._remote().path(self.edge_relation, self.feed_relation, source, target,  # type: ignore[no-any-return]
                                       max_length)
        return packed_path(self.packed, source, target, max_length)

    def _remote(self) -> Any:
        """The Spark engine, for a graph kept in Spark blocks (GraphFrames answers there)."""
        return self.engine

    # Moderation.

    def with_blocks(self, blocks: Iterable[tuple[str, str]]) -> PackedGraph:
        """The packed graph with each ``(blocker, blocked)`` pair's state replaced by a block."""
        if self.packed.local is not None:
            return packed_with_blocks(self.packed, blocks)
        from ssblab.graph.spark import edges_with_blocks

        return self.engine.pack(edges_with_blocks(self.edge_relation, blocks), self.feed_relation)

    def whatif(self, root: str, blocks: Iterable[tuple[str, str]], *, max_hops: int = 2, feed: str | None = None,
               viewers: Sequence[str] | None = None) -> moderation.WhatIf:
        """Hops before and after adding ``blocks`` (``(blocker, blocked)`` pairs, by the root or by anyone)."""
        return moderation.whatif(self.packed, self.with_blocks(blocks), root, max_hops=max_hops, feed=feed,
                                 viewers=viewers)

    def trusted_peers(self, root: str, min_friends: int) -> list[str]:
        """Feeds the root follows that at least ``min_friends`` of the root's other friends follow too (§6.3)."""
        found = self._table(queries.trusted_peers_sql(root, min_friends), ["peer"], edges=self.edge_relation)
        return found["peer"].to_pylist()  # type: ignore[no-any-return]

    def shared_moderation(self, root: str, *, min_friends: int = 2, max_hops: int = 2) -> moderation.SharedModeration:
        """Adopt the blocks of the peers `trusted_peers` picks, as if the root had published them."""
        import pyarrow as pa

        trusted = self.trusted_peers(root, min_friends)
        peers = self.engine.from_arrow(pa.table({"peer": pa.array(trusted, pa.string())}))
        blocks = self._table(queries.adopted_blocks_sql(root), ["src", "dst"], edges=self.edge_relation,
                             trusted=peers)
        adopted = tuple(zip(blocks["src"].to_pylist(), blocks["dst"].to_pylist(), strict=True))
        effect = self.whatif(root, [(root, blocked) for _, blocked in adopted], max_hops=max_hops)
        return moderation.SharedModeration(tuple(trusted), adopted, effect)

    def feed_activity(self) -> Any:
        """``author, messages, first_seen``: each feed's log size and first claimed time."""
        return self._table(queries.feed_activity_sql(), ["author"], messages=self._needs("messages", "log sizes"))

    def resource_attack_cliques(self, root: str, *, since: float, max_hops: int = 2, min_size: int = 3,
                                min_density: float = 0.8) -> list[moderation.Clique]:
        """Dense groups of feeds first seen at or after ``since`` (ms) within the root's ``max_hops`` reach
        (§8.6): the suspects of a resource attack, largest logs first."""
        near = {f for f, value in self.hops(root, max_hops).items() if 0 < value <= max_hops}
        activity = self.feed_activity()
        recent = {a: (n, t) for a, n, t in zip(activity["author"].to_pylist(), activity["messages"].to_pylist(),
                                                activity["first_seen"].to_pylist(), strict=True)
                  if a in near and t >= since}
        pairs = self.mutual_follows()
        inside = [(a, b) for a, b in zip(pairs["a"].to_pylist(), pairs["b"].to_pylist(), strict=True)
                  if a in recent and b in recent]
        return moderation.rank_cliques(inside, recent, min_size=min_size, min_density=min_density)

    # The about directory.

    def about_directory(self) -> Any:
        """``about, author, attribute, value, sequence, timestamp, is_self``: per target, author and attribute,
        the latest value (paper §3.1, Figure 3)."""
        return self._table(queries.about_directory_sql(), ["about", "author", "attribute"],
                           abouts=self._needs("abouts", "about directory"))

    def self_and_given(self, attribute: str = "name") -> Any:
        """``about, self_chosen, given``: each target's own latest value and the distinct values others gave it."""
        directory = self.engine.query(queries.about_directory_sql(), abouts=self._needs("abouts", "about directory"))
        return self._table(queries.self_and_given_sql(self.engine.dialect, attribute), ["about"],
                           directory=directory)

    def names(self) -> dict[str, str]:
        """``{feed: its self-chosen name}``."""
        found = self.self_and_given("name")
        return {about: name for about, name in zip(found["about"].to_pylist(), found["self_chosen"].to_pylist(),
                                                   strict=True) if name is not None}

    def subjective_names(self, viewers: Sequence[str], *, max_hops: int = 2) -> Any:
        """``viewer, about, value, author, rule``: the name each viewer shows for each identity (``rule``: own,
        self or given)."""
        directory = self.engine.query(queries.about_directory_sql(), abouts=self._needs("abouts", "about directory"))
        hops_rows = self.engine.from_arrow(self.hops_table(viewers, max_hops))
        return self._table(queries.subjective_view_sql(max_hops), ["viewer", "about"], directory=directory,
                           hops=hops_rows)

    def _needs(self, table: str, what: str) -> Any:
        relation = getattr(self, table)
        if relation is None:
            raise DatasetError(f"{what}: the dataset has no {table} table")
        return relation

    def stats(self, top: int = 10, pagerank_iterations: int = 10) -> dict[str, Any]:
        """Sizes, degrees, components and the top PageRank feeds, as plain JSON-ready values."""
        return graph_stats(self, top, pagerank_iterations)


def _column_equals(column: str, value: int) -> Any:
    import pyarrow.compute as pc

    return pc.equal(pc.field(column), value)


def _array(values: Any) -> Any:
    import numpy as np

    return np.asarray(values)


def _sizes(components: Any) -> list[int]:
    import pyarrow.compute as pc

    counts = pc.value_counts(components["component"]).field("counts").to_pylist()
    return sorted(counts, reverse=True)


def graph_stats(net: FollowNetwork, top: int, pagerank_iterations: int) -> dict[str, Any]:
    """The numbers of ``ssblab graph stats``."""
    degrees = net.degrees()
    ins, outs = degrees["in_degree"].to_pylist(), degrees["out_degree"].to_pylist()
    weak, strong = _sizes(net.components()), _sizes(net.components(strong=True))
    ranks = net.pagerank(pagerank_iterations).sort_by([("pagerank", "descending"), ("id", "ascending")])
    return {
        "feeds": len(ins), "follows": sum(outs), "mutual_follows": net.mutual_follows().num_rows,
        "degree": {"max_in": max(ins, default=None), "max_out": max(outs, default=None),
                   "mean_out": sum(outs) / len(outs) if outs else None},
        "components": {"count": len(weak), "largest": weak[0] if weak else 0},
        "strong_components": {"count": len(strong), "largest": strong[0] if strong else 0},
        "pagerank": [{"id": i, "pagerank": r} for i, r in zip(ranks["id"].to_pylist()[:top],
                                                               ranks["pagerank"].to_pylist()[:top], strict=True)],
    }

