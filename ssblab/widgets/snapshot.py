"""A driver-side copy of a follow graph, for widgets that answer on every click.

Strategy: a widget asks dozens of small questions (hops from this root, with these blocks, at that depth) and must
answer each within a frame or two. A Spark job per click costs seconds, so a widget collects the weighted contact
edges once (`GraphSnapshot.from_network`, or `from_messages` without Spark) and answers with `ssblab.friends.metric`,
the pure port of ssb-friends whose numbers the Spark traversal is tested equal to. The tests of this package check
the widgets' answers against `ssblab.graph.FollowNetwork` on the same data.

Invariants: ``edges`` maps ``(source, dest)`` to ssb-friends' weight (follow 1, block -1, cleared -2), without
self-contacts (they never change a hop value); read from data, its ends are well-formed feed ids (hand-made graphs
in tests may use any names); a snapshot never changes (scenarios derive new snapshots with `with_blocks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ssblab.friends import BLOCK, FOLLOW, contact_edges
from ssblab.friends import hops as friends_hops
from ssblab.friends.contacts import MessageLike
from ssblab.graph.labels import feed_label, short_id

__all__ = ["GraphSnapshot", "short_id"]

if TYPE_CHECKING:
    from ssblab.dataset import Dataset
    from ssblab.graph import FollowNetwork

Edges = Mapping[tuple[str, str], int]


@dataclass(frozen=True)
class GraphSnapshot:
    """Weighted contact edges and display names, held in memory."""

    edges: Edges
    names: Mapping[str, str] = field(default_factory=dict)  # feed -> its self-chosen name

    def __post_init__(self) -> None:
        object.__setattr__(self, "edges", MappingProxyType(dict(self.edges)))
        object.__setattr__(self, "names", MappingProxyType(dict(self.names)))

    @classmethod
    def from_network(cls, net: FollowNetwork) -> GraphSnapshot:
        """A `FollowNetwork`'s edges and the self-chosen names of its ``abouts`` table, on its engine."""
        found = net.edges()
        edges = dict(zip(zip(found["src"].to_pylist(), found["dst"].to_pylist(), strict=True),
                         found["weight"].to_pylist(), strict=True))
        return cls(edges, net.names() if net.abouts is not None else {})

    @classmethod
    def from_dataset(cls, data: str | Path | Dataset) -> GraphSnapshot:
        """The follow graph and names of a dataset (a path is opened on the local engine: no JVM)."""
        from ssblab.dataset import Dataset, open_dataset

        return cls.from_network((data if isinstance(data, Dataset) else open_dataset(data)).graph())

    @classmethod
    def from_messages(cls, messages: Iterable[MessageLike]) -> GraphSnapshot:
        """Read contacts as ssb-friends does and names from self-describing about messages (the latest wins)."""
        items = list(messages)
        edges = {pair: state.weight for pair, state in contact_edges(items).items() if pair[0] != pair[1]}
        names: dict[str, str] = {}
        for item in items:
            value: Any = getattr(item, "value", item)
            content = value.get("content") if isinstance(value, dict) else None
            if (isinstance(content, dict) and content.get("type") == "about" and content.get("about") == value.get(
                    "author") and isinstance(content.get("name"), str)):
                names[value["author"]] = content["name"]
        return cls(edges, names)

    @property
    def feeds(self) -> list[str]:
        """Every feed named by a contact, sorted."""
        return sorted({feed for pair in self.edges for feed in pair})

    def label(self, feed: str) -> str:
        """A feed's name and the start of its key (names are self-chosen, so not unique)."""
        return feed_label(feed, self.names)

    def hops(self, root: str, max_hops: int) -> dict[str, int]:
        """``{feed: hops}`` exactly as ``friends.hops({start: root, max: max_hops})`` answers."""
        return friends_hops(self.edges, root, max_hops)

    def replication_set(self, root: str, max_hops: int) -> set[str]:
        return {feed for feed, value in self.hops(root, max_hops).items() if 0 <= value <= max_hops}

    def follows(self) -> list[tuple[str, str]]:
        """The follow edges, sorted."""
        return sorted(pair for pair, weight in self.edges.items() if weight == FOLLOW)

    def with_blocks(self, blocks: Iterable[tuple[str, str]]) -> GraphSnapshot:
        """This graph with each ``(blocker, blocked)`` pair's state replaced by a block (self-blocks ignored),
        as `ssblab.graph.with_blocks` does on Spark."""
        edges = dict(self.edges)
        for blocker, blocked in blocks:
            if blocker != blocked:
                edges[(blocker, blocked)] = BLOCK
        return GraphSnapshot(edges, self.names)
