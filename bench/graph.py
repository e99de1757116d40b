"""Benchmark: the follow-graph analyses on the local engine against NetworkX, on one generated contact graph.

One run, on ``--feeds`` feeds (default 10,000) and ``--edges`` contact edges (default 1,000,000), generated
directly as edges (no messages are signed; `benchkit.contact_edges`): targets drawn with a power law, as
ssb-fixtures draws popular authors; 90 % of the edges follow, 4 % block, 6 % are unfollows. The contenders:

- ssblab: ``FollowNetwork.from_edges(edges, engine="local")`` (DuckDB, Arrow, numpy, scipy; no JVM);
- NetworkX: a ``DiGraph`` of the follow edges (every feed a node), the baseline.

What is timed, each question ``--repeat`` times (default 3) on both sides, medians compared:
- loading, apart from the questions (a graph is loaded once and asked many): ssblab's ``from_edges`` and the
  packing of the graph (``net.packed``, what every iterative question starts from), NetworkX's ``DiGraph`` build;
- hops from an ordinary feed (``--max-hops``, default 3): ``net.hops`` against NetworkX's breadth-first search
  with the same cut-off (which ignores blocks and unfollows, so it does less than ssb-friends does), and against
  the pure-Python port of ssb-friends (``ssblab.friends.hops``), timed once;
- PageRank, 10 iterations: ``net.pagerank(10)`` against ``networkx.pagerank`` stopped after 10 iterations
  (``tol=0``; it then raises PowerIterationFailedConvergence, which is caught);
- weakly connected components: ``net.components()`` against ``networkx.weakly_connected_components``.

Ratios are NetworkX (or port) seconds over ssblab seconds: above 1, ssblab is faster (the goal). The answers are
cross-checked, and the run fails when they differ: ssblab's hops must equal the Python port's, the components
must be the same partition as NetworkX's, and the PageRank vector must match ten power iterations of NetworkX's
Google matrix to 1e-9.

Full size (about a minute of CPU and 2 GiB; run on a quiet machine):
    .venv/bin/python bench/graph.py --json graph.json
Smoke: ``.venv/bin/python bench/graph.py --feeds 1000 --edges 20000 --repeat 1``
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import networkx as nx
import numpy as np
from benchkit import contact_edges, feed_ids, seconds, timed, warm_local_engine, write_figures

from ssblab.friends import hops as python_hops
from ssblab.graph import FollowNetwork


def edge_map(feeds: int, edges: int, seed: int) -> dict[tuple[str, str], int]:
    """``{(source, target): weight}`` with made-up feed ids (`benchkit.contact_edges`)."""
    src, dst, weight = contact_edges(feeds, edges, seed)
    ids = feed_ids(feeds)
    return {(ids[s], ids[t]): w for s, t, w in zip(src.tolist(), dst.tolist(), weight.tolist(), strict=True)}


def run_local(edges: dict[tuple[str, str], int], root: str, max_hops: int, repeat: int) -> dict[str, Any]:
    warm_local_engine()

    net, made_s = timed(lambda: FollowNetwork.from_edges(edges, engine="local"))
    packed, pack_s = timed(lambda: net.packed)
    assert packed.edges == len(edges)
    found, hops_s = timed(lambda: net.hops(root, max_hops), repeat)
    ranks, pr_s = timed(lambda: net.pagerank(10), repeat)
    components, cc_s = timed(net.components, repeat)
    return {"hops": found, "pagerank": dict(zip(ranks["id"].to_pylist(), ranks["pagerank"].to_pylist(), strict=True)),
            "components": components, "load_parts": {"from_edges": made_s, "pack": pack_s},
            "seconds": {"load": made_s + pack_s, "hops": hops_s, "pagerank": pr_s, "components": cc_s}}


def nx_pagerank_10(graph: nx.DiGraph) -> dict[str, float]:
    """NetworkX's PageRank, stopped after exactly 10 iterations (it raises when it has not converged)."""
    try:
        return nx.pagerank(graph, max_iter=10, tol=0.0)  # type: ignore[no-any-return]
    except nx.PowerIterationFailedConvergence:
        return {}


def run_networkx(edges: dict[tuple[str, str], int], root: str, max_hops: int, repeat: int) -> dict[str, Any]:
    def build() -> nx.DiGraph:
        graph = nx.DiGraph()
        graph.add_nodes_from({feed for pair in edges for feed in pair})
        graph.add_edges_from(pair for pair, weight in edges.items() if weight == 1)
        return graph

    graph, build_s = timed(build)
    reached, bfs_s = timed(lambda: nx.single_source_shortest_path_length(graph, root, cutoff=max_hops), repeat)
    _, pr_s = timed(lambda: nx_pagerank_10(graph), repeat)
    components, cc_s = timed(lambda: list(nx.weakly_connected_components(graph)), repeat)
    return {"graph": graph, "reached": len(reached), "components": components,
            "seconds": {"load": build_s, "hops": bfs_s, "pagerank": pr_s, "components": cc_s}}


def reference_pagerank(graph: nx.DiGraph, iterations: int = 10) -> dict[str, float]:
    """Ten power iterations of NetworkX's Google matrix, sparse (for the cross-check only, not timed)."""
    order = list(graph)
    matrix = nx.to_scipy_sparse_array(graph, nodelist=order, format="csr")
    out = np.asarray(matrix.sum(axis=1)).ravel()
    n = len(order)
    x = np.full(n, 1.0 / n)
    inverse = np.divide(1.0, out, out=np.zeros(n), where=out > 0)
    for _ in range(iterations):
        x = 0.85 * ((x * inverse) @ matrix + x[out == 0].sum() / n) + 0.15 / n
    return dict(zip(order, x.tolist(), strict=True))


def same_partition(components: Any, theirs: list[set[str]]) -> bool:
    """Whether ssblab's ``id, component`` table groups the feeds as NetworkX's components do."""
    groups: dict[int, set[str]] = {}
    for feed, label in zip(components["id"].to_pylist(), components["component"].to_pylist(), strict=True):
        groups.setdefault(label, set()).add(feed)
    return sorted(map(sorted, groups.values())) == sorted(map(sorted, theirs))


def checks_of(mine: dict[str, Any], theirs: dict[str, Any], ported: dict[str, int]) -> dict[str, Any]:
    reference = reference_pagerank(theirs["graph"])
    return {"hops_equal_python_port": mine["hops"] == ported,
            "components_agree": same_partition(mine["components"], theirs["components"]),
            "pagerank_max_difference": max(abs(mine["pagerank"][feed] - value) for feed, value in reference.items())}


def report(mine: dict[str, Any], theirs: dict[str, Any], port_s: float,
           reached: int) -> dict[str, Any]:
    ours, nx_s = mine["seconds"], theirs["seconds"]
    ratios = {name: nx_s[name] / ours[name] for name in ours} | {"hops_vs_python_port": port_s / ours["hops"]}
    print(f"{'':>18}{'ssblab local':>14}{'NetworkX':>12}{'NetworkX / ssblab':>20}")
    for name in ours:
        print(f"{name:>18}{seconds(ours[name]):>14}{seconds(nx_s[name]):>12}{ratios[name]:>20.2f}")
    parts = mine["load_parts"]
    print(f"{'':>18}ssblab's load: from_edges {seconds(parts['from_edges'])} (Arrow tables from the Python dict), "
          f"packing {seconds(parts['pack'])}")
    print(f"{'ssb-friends port':>18}: hops {seconds(port_s)} ({reached:,} feeds reached; NetworkX's BFS reached "
          f"{theirs['reached']:,}); port / ssblab {ratios['hops_vs_python_port']:.2f}")
    goal = {name: ratios[name] > 1 for name in ("hops", "pagerank", "components")}
    print("goal, faster than NetworkX: "
          + ", ".join(f"{name} {'met' if met else 'MISSED'}" for name, met in goal.items()))
    return {"ssblab_local": ours, "ssblab_load_parts": parts, "networkx": nx_s, "python_port_hops": port_s,
            "ratios": ratios, "goal_faster_than_networkx": goal}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--feeds", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-hops", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each question (medians are shown)")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this file")
    args = parser.parse_args()

    edges, gen_s = timed(lambda: edge_map(args.feeds, args.edges, args.seed))
    root = feed_ids(args.feeds)[args.feeds // 2]  # an ordinary feed, not one of the most followed
    print(f"{args.feeds:,} feeds, {len(edges):,} contact edges (generated in {gen_s:.1f} s), root {root[:12]}…; "
          f"medians of {args.repeat}")
    mine = run_local(edges, root, args.max_hops, args.repeat)
    theirs = run_networkx(edges, root, args.max_hops, args.repeat)
    ported, port_s = timed(lambda: python_hops(edges, root, args.max_hops))
    figures = {"feeds": args.feeds, "edges": len(edges), "max_hops": args.max_hops, "repeat": args.repeat,
               "hops_reached": len(ported), **report(mine, theirs, port_s, len(ported)),
               "checks": checks_of(mine, theirs, ported)}
    print(f"checks: {figures['checks']}")
    write_figures(args.json, figures)
    checks = figures["checks"]
    if not (checks["hops_equal_python_port"] and checks["components_agree"]
            and checks["pagerank_max_difference"] <= 1e-9):
        sys.exit("the answers differ: see the checks above")


if __name__ == "__main__":
    main()
