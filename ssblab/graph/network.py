"""`FollowNetwork`: the small API notebooks and the CLI call, over one dataset's contacts (and abouts, messages).

Strategy: a thin facade; each method is one transform from `frames`, `hops`, `analytics`, `moderation` or `about`.
This is the one boundary that caches: the contact state and the weighted edges are cached on first use, since
every question starts from them, and packed once (`packed`) for hops, PageRank, components and what-ifs:
milliseconds a question after that, for graphs that fit on the driver.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab.friends.contacts import MessageLike
from ssblab.graph import about, analytics, frames, moderation
from ssblab.graph import traversal as traversal
from ssblab.graph.packed import PackedGraph, pack_graph

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class FollowNetwork:
    """The follow graph of a dataset, with hops, analytics, moderation scenarios and the about directory.

    Examples:
        >>> net = FollowNetwork.from_path(spark, "out/dataset")  # doctest: +SKIP
        >>> net.hops("@me...=.ed25519", max_hops=2)  # doctest: +SKIP
        {'@me...=.ed25519': 0, ...}
    """

    def __init__(self, contacts: DataFrame, *, abouts: DataFrame | None = None,
                 messages: DataFrame | None = None) -> None:
        self.contacts = contacts
        self.abouts = abouts
        self.messages = messages

    @classmethod
    def from_path(cls, spark: SparkSession, data: str | Path) -> FollowNetwork:
        """A Parquet dataset (its ``contacts``, ``abouts``, ``messages`` tables), a store or a log."""
        return cls(frames.load_contacts(spark, data), abouts=frames.read_table(spark, data, "abouts"),
                   messages=frames.read_table(spark, data, "messages"))

    @classmethod
    def from_messages(cls, spark: SparkSession, messages: Iterable[MessageLike]) -> FollowNetwork:
        return cls(frames.contacts_from_messages(spark, messages))

    @cached_property
    def state(self) -> DataFrame:
        """Per (author, contact): ``src, dst, state, weight, sequence, timestamp`` (cached)."""
        return frames.contact_state(self.contacts).cache()

    @cached_property
    def edges(self) -> DataFrame:
        """``src, dst, weight`` without self-contacts (cached)."""
        return frames.weighted_edges(self.state).cache()

    @cached_property
    def follows(self) -> DataFrame:
        return frames.follow_edges(self.state).cache()

    @cached_property
    def vertices(self) -> DataFrame:
        return frames.feeds(self.state).cache()

    @cached_property
    def graph(self) -> Any:
        """The follow graph as a GraphFrame."""
        from ssblab.pipeline.session import graphframe

        return graphframe(self.vertices, self.follows)

    @cached_property
    def packed(self) -> PackedGraph:
        """Every feed numbered and the weighted edges packed, once, for hops, PageRank and components
        (`ssblab.graph.packed`)."""
        return pack_graph(self.edges, self.vertices)

    def _on_driver(self) -> PackedGraph | None:
        """The packed graph when it is on the driver (the what-ifs and components that need it)."""
        return self.packed if self.packed.local is not None else None

    def hops(self, root: str, max_hops: int = 3, *, server_max: int | None = None) -> dict[str, int]:
        """``{feed: hops}`` as ``friends.hops({start: root, max: max_hops})`` answers (on the packed graph)."""
        return traversal.hops(self.packed, root, max_hops, server_max=server_max)

    def hops_frame(self, roots: Iterable[str], max_hops: int = 3) -> DataFrame:
        """``root, feed, hops`` for many roots (on the packed graph)."""
        return traversal.hops_frame(self.packed, roots, max_hops, spark=self.contacts.sparkSession)

    def replication_set(self, root: str, max_hops: int = 2) -> set[str]:
        """The feeds ``root`` fetches with ``friends.hops = max_hops``."""
        return {f for f, value in self.hops(root, max_hops).items() if moderation.is_replicated(value, max_hops)}

    def overlap_experiment(self, root: str, *, peers: int = 5, samples: int = 10,
                           rng: random.Random) -> list[traversal.Coverage]:
        """The paper's A.6 experiment (see `ssblab.graph.traversal.overlap_experiment`), on the packed graph."""
        packed = self._on_driver()
        if packed is None:
            followers = traversal.followers_of_someone(self.edges)
        else:  # the feeds with a row in the follow matrix, already sorted by number
            rows = packed.local.follows.by_source.getnnz(axis=1)  # type: ignore[union-attr]
            followers = [packed.ids[k] for k in rows.nonzero()[0]]
        candidates = [feed for feed in followers if feed != root]
        return traversal.overlap_experiment(self.packed, root, peers=peers, samples=samples, rng=rng,
                                            candidates=candidates)

    def degrees(self) -> DataFrame:
        return analytics.degrees(self.vertices, self.follows)

    def pagerank(self, iterations: int = 10) -> DataFrame:
        """``id, pagerank`` (see `ssblab.graph.analytics.pagerank`), on the packed graph."""
        return analytics.packed_pagerank_frame(self.contacts.sparkSession, self.packed, iterations)

    def components(self, *, strong: bool = False) -> DataFrame:
        """``id, component``: the weakly (or ``strong``ly) connected components of the follow graph.

        On the packed graph when it is on the driver (milliseconds), else with GraphFrames.
        """
        packed = self._on_driver()
        if packed is None:
            found = analytics.strongly_connected_components if strong else analytics.connected_components
            return found(self.graph)
        return analytics.packed_components_frame(self.contacts.sparkSession, packed, strong=strong)

    def path(self, source: str, target: str, max_length: int = 6) -> list[str] | None:
        """A shortest chain of follows from ``source`` to ``target``."""
        return analytics.follow_path(self.graph, source, target, max_length)

    def whatif(self, root: str, blocks: Iterable[tuple[str, str]], *, max_hops: int = 2,
               feed: str | None = None, viewers: Sequence[str] | None = None) -> moderation.WhatIf:
        """`ssblab.graph.moderation.whatif` on the packed graph (on the edges when it is not on the driver)."""
        graph = self._on_driver() or self.edges
        return moderation.whatif(graph, root, blocks, max_hops=max_hops, feed=feed, viewers=viewers)

    def shared_moderation(self, root: str, *, min_friends: int = 2, max_hops: int = 2) -> moderation.SharedModeration:
        return moderation.shared_moderation(self.edges, root, min_friends=min_friends, max_hops=max_hops,
                                            packed=self._on_driver())

    def resource_attack_cliques(self, root: str, *, since: float, **options: Any) -> list[moderation.Clique]:
        """§8.6 suspects; needs the ``messages`` table (log sizes, creation times)."""
        if self.messages is None:
            raise frames.DatasetError("resource attack: the dataset has no messages table (log sizes)")
        activity = moderation.feed_activity(self.messages)
        return moderation.resource_attack_cliques(self.edges, activity, root, since=since, **options)

    def subjective_names(self, viewers: Sequence[str], *, max_hops: int = 2) -> DataFrame:
        """``viewer, about, value, author, rule``: the name each viewer shows for each identity."""
        if self.abouts is None:
            raise frames.DatasetError("about directory: the dataset has no abouts table")
        directory = about.about_directory(self.abouts)
        return about.subjective_view(directory, self.hops_frame(viewers, max_hops), max_hops=max_hops)

    def stats(self, top: int = 10, pagerank_iterations: int = 10) -> dict[str, Any]:
        """Sizes, degrees, components and the top PageRank feeds, as plain JSON-ready values."""
        return graph_stats(self, top, pagerank_iterations)


def _component_sizes(components: DataFrame) -> list[int]:
    return [row["count"] for row in components.groupBy("component").count().orderBy("count", ascending=False)
            .collect()]


def graph_stats(net: FollowNetwork, top: int, pagerank_iterations: int) -> dict[str, Any]:
    """The numbers of ``ssblab graph stats``."""
    from pyspark.sql import functions as F

    deg = net.degrees().agg(F.count("*").alias("feeds"), F.sum("out_degree").alias("follows"),
                            F.max("in_degree").alias("max_in"), F.max("out_degree").alias("max_out"),
                            F.avg("out_degree").alias("mean_out")).collect()[0]  # an aggregate: one row
    weak = _component_sizes(net.components())
    strong = _component_sizes(net.components(strong=True))
    ranks = net.pagerank(pagerank_iterations).orderBy(F.desc("pagerank"), "id").limit(top).collect()
    return {
        "feeds": deg["feeds"], "follows": int(deg["follows"] or 0),
        "mutual_follows": analytics.mutual_follows(net.follows).count(),
        "degree": {"max_in": deg["max_in"], "max_out": deg["max_out"], "mean_out": deg["mean_out"]},
        "components": {"count": len(weak), "largest": weak[0] if weak else 0},
        "strong_components": {"count": len(strong), "largest": strong[0] if strong else 0},
        "pagerank": [{"id": row["id"], "pagerank": row["pagerank"]} for row in ranks],
    }
