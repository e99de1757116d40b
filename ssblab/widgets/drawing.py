"""Drawing a follow graph around one root: a radial layout by hops and the rows `ssblab.viz.follow_network` draws.

Strategy: the root sits at the centre and each feed on the ring of its hop value, so "how far does my data go"
reads as distance; everything the root does not replicate (blocked, unfollowed, out of reach) shares the outer
ring. Within a ring, feeds are ordered by the mean angle of the feeds that bring them in (their followers on inner
rings), so friends of one friend sit together and few lines cross; ties and feeds with no inner follower fall back
to id order.

Invariants: pure and deterministic (same hops and edges, same picture); every drawn feed gets one position; at most
``max_nodes`` feeds are drawn, inner rings first (a drawing of thousands of dots says nothing a count does not).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

Position = tuple[float, float]


def ring_of(value: int | None, max_hops: int) -> int:
    """The ring a hop value is drawn on: its value when replicated, else the outer ring ``max_hops + 1``."""
    return value if value is not None and 0 <= value <= max_hops else max_hops + 1


def _mean_angle(angles: list[float]) -> float | None:
    if not angles:
        return None
    x, y = sum(math.cos(a) for a in angles), sum(math.sin(a) for a in angles)
    if abs(x) < 1e-12 and abs(y) < 1e-12:
        return None
    return math.atan2(y, x) % (2 * math.pi)


def radial_layout(feeds: Iterable[str], hops: Mapping[str, int], follows: Iterable[tuple[str, str]],
                  max_hops: int, *, max_nodes: int = 400) -> dict[str, Position]:
    """``{feed: (x, y)}`` with the root (hop 0) at the origin and ring ``k`` at radius ``k``.

    Args:
        feeds: the feeds to place (those not in ``hops`` go to the outer ring).
        hops: ``{feed: hops}`` from the root.
        follows: ``(follower, followed)`` pairs, to order each ring by where its followers are.
        max_hops: the root's ``friends.hops``.
        max_nodes: the most feeds placed, inner rings first, then by id.
    """
    ranked = sorted(set(feeds) | set(hops), key=lambda f: (ring_of(hops.get(f), max_hops), f))[:max_nodes]
    followers: dict[str, list[str]] = {}
    for source, dest in follows:
        followers.setdefault(dest, []).append(source)
    rings: dict[int, list[str]] = {}
    for feed in ranked:
        rings.setdefault(ring_of(hops.get(feed), max_hops), []).append(feed)
    angle: dict[str, float] = {}
    placed: dict[str, Position] = {}
    for ring in sorted(rings):
        members = rings[ring]
        if ring == 0:
            placed.update({feed: (0.0, 0.0) for feed in members})
            continue
        keys = {feed: _mean_angle([angle[f] for f in followers.get(feed, ()) if f in angle]) for feed in members}
        order = sorted(members, key=lambda f: (keys[f] is None, keys[f] or 0.0, f))
        for i, feed in enumerate(order):
            angle[feed] = 2 * math.pi * (i + 0.5) / len(order) + 0.3 * ring  # a twist per ring avoids spokes
            placed[feed] = (ring * math.cos(angle[feed]), ring * math.sin(angle[feed]))
    return placed


def drawing_frames(positions: Mapping[str, Position], states: Mapping[str, str], values: Mapping[str, int],
                   labels: Mapping[str, str], follows: Iterable[tuple[str, str]],
                   highlighted: Iterable[str]) -> tuple[Any, Any]:
    """The ``nodes`` and ``edges`` frames of `ssblab.viz.follow_network` (pandas)."""
    import pandas as pd

    inside = set(highlighted)
    nodes = pd.DataFrame(
        [{"x": x, "y": y, "label": labels.get(feed, feed), "state": states.get(feed, "not replicated"),
          "hops": "—" if values.get(feed) is None else str(values[feed])}
         for feed, (x, y) in positions.items()], columns=["x", "y", "label", "state", "hops"])
    edges = pd.DataFrame(
        [{"x": positions[a][0], "y": positions[a][1], "x2": positions[b][0], "y2": positions[b][1],
          "inside": a in inside and b in inside}
         for a, b in follows if a in positions and b in positions], columns=["x", "y", "x2", "y2", "inside"])
    return nodes, edges


def node_states(values: dict[str, int], root: str, max_hops: int) -> dict[str, str]:
    """``root``, ``replicated``, ``blocked`` (a negative value) or ``not replicated`` per reached feed."""
    def state(feed: str, value: int) -> str:
        if feed == root:
            return "root"
        if value < 0:
            return "blocked"
        return "replicated" if value <= max_hops else "not replicated"

    return {feed: state(feed, value) for feed, value in values.items()}
