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

import html
import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["drawing_frames", "network_svg", "node_states", "radial_layout", "ring_of"]


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


SVG_SIZE = 560
LABEL_RINGS = 1  # names are written next to the root and its ring 1; every node has its name as a tooltip


def network_svg(positions: Mapping[str, Position], states: Mapping[str, str], values: Mapping[str, int],
                labels: Mapping[str, str], names: Mapping[str, str], follows: Iterable[tuple[str, str]],
                highlighted: Iterable[str], *, max_hops: int, title: str, size: int = SVG_SIZE) -> str:
    """The drawing as an SVG a person can read and click: dashed hop rings around the root, follows as lines,
    feeds as dots coloured by state (`ssblab.viz.NODE_STATES`) with their ``labels`` and hops as a tooltip,
    ``names`` written next to the inner rings, and ``data-feed`` on each dot for the view's click handler."""
    from ssblab.viz.charts import NODE_STATES

    outer = max_hops + 1
    unit = (size / 2 - 28) / outer
    centre = size / 2 + 10

    def xy(feed: str) -> tuple[float, float]:
        x, y = positions[feed]
        return round(centre + x * unit, 1), round(centre - y * unit, 1)

    inside = set(highlighted)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="ssblab-network" width="{size}" height="{size + 20}" '
             f'viewBox="0 0 {size} {size + 20}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
             f'<text class="title" x="8" y="18" font-size="14" font-weight="600">{html.escape(title)}</text>']
    for ring in range(1, outer + 1):
        name = f"{ring} hop{'s' if ring > 1 else ''}" if ring <= max_hops else "not replicated"
        parts.append(f'<circle cx="{size / 2}" cy="{centre}" r="{ring * unit:.1f}" fill="none" stroke="#d5d5d5" '
                     f'stroke-dasharray="3 4"/><text x="{size / 2 + 3}" y="{centre - ring * unit + 11:.1f}" '
                     f'font-size="9" fill="#999">{name}</text>')
    for a, b in follows:
        if a in positions and b in positions:
            (x1, y1), (x2, y2) = xy(a), xy(b)
            opacity = 0.45 if a in inside and b in inside else 0.12
            parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#8a9bb0" stroke-width="0.7" '
                         f'opacity="{opacity}"/>')
    for feed in positions:
        (x, y), state = xy(feed), states.get(feed, "not replicated")
        hops = "—" if values.get(feed) is None else str(values[feed])
        tip = html.escape(f"{labels.get(feed, feed)}\nhops {hops}, {state}\n(click: make it the root)")
        radius = 9 if state == "root" else 5
        parts.append(f'<g class="node" data-feed="{html.escape(feed)}" style="cursor:pointer"><title>{tip}</title>'
                     f'<circle cx="{x}" cy="{y}" r="{radius}" fill="{NODE_STATES.get(state, "#c9c9c9")}" '
                     f'stroke="white" stroke-width="0.8"/></g>')
        if ring_of(values.get(feed), max_hops) <= LABEL_RINGS:
            parts.append(f'<text class="label" x="{x + radius + 2}" y="{y + 3}" font-size="10" fill="#333" '
                         f'pointer-events="none">{html.escape(names.get(feed, feed))}</text>')
    parts.append("</svg>")
    return "".join(parts)
