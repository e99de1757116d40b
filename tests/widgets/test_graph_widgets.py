"""The graph explorer and the moderation panel: their models against `FollowNetwork` on the same data."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from ssblab.friends import BLOCK, FOLLOW, UNFOLLOW, contact_edges
from ssblab.generate import generate_network
from ssblab.graph import FollowNetwork, hops_table
from ssblab.widgets import GraphExplorer, GraphSnapshot, ModerationPanel, WidgetError, hop_counts, radial_layout

if TYPE_CHECKING:
    pass

F, B, U = FOLLOW, BLOCK, UNFOLLOW
SMALL = {("me", "a"): F, ("me", "b"): F, ("a", "c"): F, ("b", "c"): F, ("a", "d"): F, ("d", "e"): F,
         ("b", "t"): F, ("t", "u"): F, ("me", "x"): B, ("a", "y"): U}


@pytest.fixture(scope="module")
def messages() -> list:
    return list(generate_network(authors=14, messages=500, seed=11))


@pytest.fixture(scope="module", params=["local", pytest.param("spark", marks=pytest.mark.spark)])
def network(request: pytest.FixtureRequest, messages: list) -> FollowNetwork:
    """The same messages on each engine: the widgets must answer as either does."""
    spark = request.getfixturevalue("spark") if request.param == "spark" else None
    return FollowNetwork.from_messages(messages, engine=request.param, spark=spark)


def test_snapshot_reads_contacts_as_ssb_friends_and_names_from_abouts(messages: list) -> None:
    snap = GraphSnapshot.from_messages(messages)
    expected = {pair: state.weight for pair, state in contact_edges(messages).items() if pair[0] != pair[1]}
    assert dict(snap.edges) == expected and expected
    abouts = [m for m in messages if isinstance(m.content, dict) and m.content.get("type") == "about"]
    named = {m.author for m in abouts if m.content.get("about") == m.author and isinstance(m.content.get("name"), str)}
    assert set(snap.names) == named
    feed = sorted(named)[0]
    assert snap.label(feed).startswith(snap.names[feed]) and feed[:7] in snap.label(feed)
    blocked = snap.with_blocks([("me", "a"), ("b", "b")])
    assert blocked.edges[("me", "a")] == BLOCK and ("b", "b") not in blocked.edges and ("me", "a") not in snap.edges


def test_hop_counts_cover_every_feed_once() -> None:
    values = {"me": 0, "a": 1, "b": 2, "x": -1, "y": -3}
    assert hop_counts(values, ["me", "a", "b", "x", "y", "far"], 1) == [
        ("0", 1), ("1", 1), ("blocked", 2), ("beyond", 1), ("unreached", 1)]


def test_radial_layout_puts_each_feed_on_its_hop_ring() -> None:
    snap = GraphSnapshot(SMALL)
    values = snap.hops("me", 2)
    placed = radial_layout(snap.feeds, values, snap.follows(), 2)
    assert set(placed) == set(snap.feeds) and placed["me"] == (0.0, 0.0)
    for feed, (x, y) in placed.items():
        value = values.get(feed)
        ring = value if value is not None and 0 <= value <= 2 else 3
        assert math.hypot(x, y) == pytest.approx(ring)
    assert placed == radial_layout(reversed(snap.feeds), values, snap.follows(), 2)  # order-free
    assert set(radial_layout(snap.feeds, values, snap.follows(), 2, max_nodes=3)) == {"me", "a", "b"}


def test_explorer_state_and_errors() -> None:
    explorer = GraphExplorer(GraphSnapshot(SMALL), "me", max_hops=1)
    assert explorer.replication_set == {"me", "a", "b"}
    assert explorer.set_max_hops(3).replication_set == {"me", "a", "b", "c", "d", "t", "e", "u"}
    assert explorer.growth().to_dict(orient="list") == {"hops": [0, 1, 2, 3], "feeds": [1, 3, 6, 8]}
    assert explorer.roots()[0] in {"me", "a", "b"}  # the feeds following the most come first
    with pytest.raises(WidgetError, match="hops must be within"):
        explorer.set_max_hops(7)
    with pytest.raises(WidgetError, match="not a feed of this graph"):
        explorer.set_root("nobody")
    chart = explorer.set_root("a").set_max_hops(1).chart()
    nodes = {row["label"].rstrip("…"): row["state"] for row in chart["layer"][1]["data"]["values"]}
    assert nodes["a"] == "root" and nodes["c"] == "replicated" and nodes["y"] == "blocked"
    assert nodes["me"] == "not replicated"
    assert "<table>" in explorer.summary_html()


def test_explorer_drawing_names_feeds_in_hop_rings_and_a_click_makes_the_root() -> None:
    import math
    import re
    import xml.etree.ElementTree as ET

    explorer = GraphExplorer(GraphSnapshot(SMALL, {"me": "Me", "a": "Alice", "c": "Carol"}), "me", max_hops=2)
    svg = explorer.svg()
    tree = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    nodes = {g.get("data-feed"): g for g in tree.iter(f"{ns}g") if g.get("data-feed")}
    assert set(nodes) == set(explorer.snapshot.feeds)
    tips = {feed: g.find(f"{ns}title").text for feed, g in nodes.items()}
    assert tips["a"].startswith("Alice (a…)\nhops 1, replicated") and "hops —" in tips["u"]
    labels = {t.text for t in tree.iter(f"{ns}text") if t.get("class") == "label"}
    assert labels == {"Me", "Alice", "b…"}  # the root and its ring 1 are named; the rest by tooltip
    rings = [float(c.get("r")) for c in tree.iter(f"{ns}circle") if c.get("fill") == "none"]
    assert len(rings) == 3 and rings == sorted(rings)  # 1 hop, 2 hops, not replicated
    centre = next(c for c in nodes["me"].iter(f"{ns}circle"))
    cx, cy = float(centre.get("cx")), float(centre.get("cy"))
    for feed, ring in (("a", 1), ("c", 2), ("e", 3), ("x", 3)):  # e is 3 hops out, x blocked: the outer ring
        circle = next(nodes[feed].iter(f"{ns}circle"))
        assert math.hypot(float(circle.get("cx")) - cx, float(circle.get("cy")) - cy) == pytest.approx(
            rings[ring - 1], abs=0.2)
    assert explorer.click("c").root == "c" and "Replication set of Carol" in explorer.svg()
    with pytest.raises(WidgetError, match="not a feed of this graph"):
        explorer.click("nobody")
    assert not re.search(r"<script", svg)


def test_explorer_answers_as_follow_network(messages: list, network: FollowNetwork) -> None:
    snap = GraphSnapshot.from_network(network)
    assert dict(snap.edges) == dict(GraphSnapshot.from_messages(messages).edges)
    explorer = GraphExplorer(snap)
    roots = explorer.roots()[:3]
    for max_hops in (1, 2):
        expected = hops_table(network.packed, roots, max_hops)  # one traversal for all the roots
        for root in roots:
            explorer.set_root(root).set_max_hops(max_hops)
            assert explorer.hops == expected[root]
    assert explorer.replication_set == network.replication_set(roots[-1], 2)


def test_panel_toggles_blocks_as_a_set() -> None:
    panel = ModerationPanel(GraphSnapshot(SMALL), "me", watch="c")
    assert panel.result().changes == {} and panel.result().views == {}
    panel.toggle("me", "a").toggle("b", "c")
    assert panel.blocks == {("me", "a"), ("b", "c")}
    assert panel.result().leaving == ["a", "c", "d"]  # e is 3 hops out: never replicated
    assert panel.result().views == {"me": (2, -2), "b": (1, -1)}
    states = panel.states()
    assert states["a"] == "leaving" and states["me"] == "root" and states["t"] == "replicated"
    assert "Leaving" in panel.summary_html() and "Whose view of c… changes" in panel.summary_html()
    assert panel.toggle("b", "c").toggle("me", "a").blocks == frozenset()
    with pytest.raises(WidgetError, match="cannot block itself"):
        panel.toggle("a", "a")
    with pytest.raises(WidgetError, match="not a feed"):
        panel.toggle("me", "nobody")


def test_panel_answers_as_follow_network_whatif(network: FollowNetwork) -> None:
    snap = GraphSnapshot.from_network(network)
    root = GraphExplorer(snap).roots()[0]
    panel = ModerationPanel(snap, root)
    friends = panel.candidates()
    blocks = [(root, friends[0]), (friends[1], friends[2]), (friends[3], friends[1])]
    for blocker, blocked in blocks:
        panel.toggle(blocker, blocked)
    panel.set_watch(friends[2])
    expected = network.whatif(root, blocks, max_hops=2, feed=friends[2])
    assert panel.result() == expected
    assert panel.result().changes and panel.result().views  # the scenario is not a trivial one
