"""Benchmark: ssblab's follow-graph analyses on Spark local against NetworkX, on one generated contact graph.

One run, on ``--feeds`` feeds (default 10,000) and about ``--edges`` contact edges (default 1,000,000), generated
directly as edges (no messages are signed): targets are drawn with a power law, as ssb-fixtures draws popular
authors; 90 % of the edges follow, 4 % block, 6 % are unfollows. It measures:
- hops from a root (``--max-hops``, default 3): ssblab on Spark (`ssblab.graph.hops`), the pure-Python port
  of ssb-friends (`ssblab.friends.metric`), and NetworkX's breadth-first search over the follow edges with the same
  cut-off (it ignores blocks, so it does less than ssb-friends does);
- PageRank, 10 iterations: ssblab (`ssblab.graph.pagerank`) against ``networkx.pagerank`` stopped after 10
  iterations (``tol=0``; it then raises PowerIterationFailedConvergence, which is caught);
- connected components: GraphFrames through `ssblab.pipeline.session.connected_components` and, on a graph
  packed on the driver, `ssblab.graph.packed.packed_components` (what `FollowNetwork.components` uses), against
  ``networkx.weakly_connected_components``.
Loading (Spark: the edges into a cached DataFrame, then packed once with `ssblab.graph.packed.pack_graph`, which
numbers the feeds and keeps the edges as sparse matrices on the driver, or with ``--where blocks`` as numpy blocks
cached in Spark, the path for graphs too big for the driver; NetworkX: building the DiGraph) is timed apart, as a
graph is loaded once and queried many times. Hops and PageRank run ``--repeat`` times on both sides and the
medians are compared (ratio = NetworkX seconds / ssblab seconds: above 1, ssblab is faster). The answers are
cross-checked: the Spark hops must equal the Python port's, the component counts must agree and the PageRank
vectors must agree to 1e-9.

Usage: ``.venv/bin/python bench/graph.py [--feeds N] [--edges E] [--seed S] [--max-hops H] [--cores C]
[--repeat R] [--where driver|blocks] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import networkx as nx
import numpy as np

from ssblab.friends import hops as python_hops
from ssblab.graph import connected_components, hops
from ssblab.graph.frames import edges_frame
from ssblab.graph.packed import pack_graph, packed_components, packed_pagerank
from ssblab.pipeline.session import graphframe, spark_session

POWER_LAW = 2.0  # target index = floor(u ** POWER_LAW * feeds): a few feeds are followed by most


def timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[Any, float]:
    """The last result of ``repeat`` runs and the median time of one."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, statistics.median(times)


def seconds(value: float) -> str:
    return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.1f} ms"


def feed_ids(count: int) -> list[str]:
    """Made-up, well-formed feed ids (isFeed accepts them): the index in base 10, padded with A."""
    return ["@" + str(i).rjust(43, "A") + "=.ed25519" for i in range(count)]


def generate_edges(feeds: int, edges: int, seed: int) -> dict[tuple[str, str], int]:
    """About ``edges`` distinct (source, target) pairs without self-contacts, with ssb-friends weights."""
    rng = np.random.default_rng(seed)
    draw = int(edges * 1.08)  # duplicates and self-pairs are dropped below
    sources = rng.integers(0, feeds, draw)
    targets = np.floor(rng.random(draw) ** POWER_LAW * feeds).astype(np.int64)
    weights = rng.choice(np.array([1, -1, -2]), draw, p=[0.90, 0.04, 0.06])
    ids = feed_ids(feeds)
    found: dict[tuple[str, str], int] = {}
    for s, t, w in zip(sources.tolist(), targets.tolist(), weights.tolist(), strict=True):
        if s != t:
            found[(ids[s], ids[t])] = w
            if len(found) == edges:
                break
    return found


def run_spark(spark: Any, edges: dict[tuple[str, str], int], root: str, max_hops: int,
              repeat: int, where: str) -> dict[str, Any]:
    frame, load = timed(lambda: edges_frame(spark, edges).cache())
    _, count = timed(frame.count)
    packed, pack_s = timed(lambda: pack_graph(frame, local_limit=len(edges) if where == "driver" else 0))
    found, hops_s = timed(lambda: hops(packed, root, max_hops), repeat)
    ranks, pr_s = timed(lambda: packed_pagerank(packed, 10), repeat)
    follows = frame.where("weight = 1").select("src", "dst").cache()
    vertices = frame.selectExpr("src AS id").union(frame.selectExpr("dst AS id")).distinct().cache()
    components, cc_s = timed(lambda: connected_components(graphframe(vertices, follows)).toPandas())
    seconds = {"load": load + count, "pack": pack_s, "hops": hops_s, "pagerank": pr_s, "components": cc_s}
    counts = {components["component"].nunique()}
    if packed.local is not None:
        labels, seconds["components_packed"] = timed(lambda: packed_components(packed), repeat)
        counts.add(len(set(labels.tolist())))
    return {"hops": found, "pagerank": dict(zip(packed.ids, ranks.tolist(), strict=True)), "components": counts,
            "seconds": seconds}


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
    components, cc_s = timed(lambda: sum(1 for _ in nx.weakly_connected_components(graph)))
    return {"graph": graph, "reached": len(reached), "components": components,
            "seconds": {"build": build_s, "hops_bfs": bfs_s, "pagerank": pr_s, "components": cc_s}}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feeds", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-hops", type=int, default=3)
    parser.add_argument("--cores", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="runs of hops and PageRank (medians are shown)")
    parser.add_argument("--where", choices=["driver", "blocks"], default="driver",
                        help="pack the graph on the driver (the default up to 5M edges) or in Spark blocks")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    edges, gen_s = timed(lambda: generate_edges(args.feeds, args.edges, args.seed))
    root = feed_ids(args.feeds)[args.feeds // 2]  # an ordinary feed, not one of the most followed
    print(f"{args.feeds:,} feeds, {len(edges):,} contact edges (generated in {gen_s:.1f} s), root {root[:12]}…")
    spark = spark_session(app_name="bench-graph", cores=args.cores,
                          extra_conf={"spark.driver.memory": "6g", "spark.ui.enabled": "false",
                                      "spark.ui.showConsoleProgress": "false"})
    mine = run_spark(spark, edges, root, args.max_hops, args.repeat, args.where)
    theirs = run_networkx(edges, root, args.max_hops, args.repeat)
    ported, port_s = timed(lambda: python_hops(edges, root, args.max_hops))
    reference = reference_pagerank(theirs["graph"])
    ranks = mine["pagerank"]
    checks = {
        "hops_equal_python_port": mine["hops"] == ported,
        "components_agree": mine["components"] == {theirs["components"]},
        "pagerank_max_difference": max(abs(ranks[feed] - value) for feed, value in reference.items()),
    }
    ours, nx_s = mine["seconds"], theirs["seconds"]
    ratios = {"hops_vs_networkx_bfs": nx_s["hops_bfs"] / ours["hops"], "hops_vs_python_port": port_s / ours["hops"],
              "pagerank": nx_s["pagerank"] / ours["pagerank"], "components": nx_s["components"] / ours["components"]}
    if "components_packed" in ours:
        ratios["components_packed"] = nx_s["components"] / ours["components_packed"]
    figures = {"feeds": args.feeds, "edges": len(edges), "max_hops": args.max_hops, "repeat": args.repeat,
               "packed_on": args.where,
               "hops_reached": len(ported), "ssblab_spark": ours, "networkx": nx_s,
               "python_port_hops": port_s, "ratios": ratios, "checks": checks}
    for name, fig in ((f"ssblab ({args.where})", mine["seconds"]), ("NetworkX", theirs["seconds"])):
        print(f"{name:>16}: " + ", ".join(f"{key} {seconds(value)}" for key, value in fig.items()))
    print(f"{'ssb-friends port':>16}: hops {seconds(port_s)} ({len(ported):,} feeds reached)")
    print("ratios (NetworkX or port seconds / ssblab seconds; > 1: ssblab faster): "
          + ", ".join(f"{key} {value:.2f}" for key, value in ratios.items()))
    print(f"checks: {checks}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=2)
    spark.stop()


if __name__ == "__main__":
    main()
