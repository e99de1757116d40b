"""Benchmark: the follow-graph analyses on the Spark engine with the graph kept in Spark blocks, at 10M edges.

The graph is a ``follows`` table (``author, contact, state``, as in docs/datasets.md) of ``--edges`` contact edges
(default 10,000,000) among ``--feeds`` feeds (default edges / 100, as bench/graph.py's 1M edges among 10,000),
drawn as bench/graph.py draws them (`benchkit.contact_edges`) and written once as Parquet parts under ``--work``
(default ~/.cache/ssblab/bench). Spark reads it and ``FollowNetwork`` runs on ``SparkGraphEngine(spark,
local_limit=0)``: the edges are never collected to the driver, but packed into numpy blocks cached in Spark, one
per core (hops levels and PageRank iterations are one job each), and components are GraphFrames'.

Timed, on ``local[--cores]`` (session start excluded): loading (reading the table, caching it and packing the
blocks, ``net.packed``), hops from an ordinary feed (``--max-hops``, default 3), PageRank (10 iterations) and
weakly connected components; hops and PageRank ``--repeat`` times (medians), components once. Peak memory:
this driver process (VmHWM), the JVM's process (VmHWM) and its heap (the peak of its heap pools, read through
py4j from the JVM's MemoryPoolMXBeans), and the whole process tree (resident sets summed, sampled; Python
workers included).

Baseline, in the same run: the local engine on the same table (``pyarrow`` read, ``FollowNetwork`` on
``LocalGraphEngine``), after the Spark figures are taken; ratios are local seconds over Spark seconds (below 1,
Spark is slower: it pays for jobs, where the local engine pays for one process's memory). The answers must
agree: the same hops, the same components, PageRank to 1e-9. ``--no-local`` skips the baseline.

Full size (several minutes and a few GiB; run on a quiet machine):
    .venv/bin/python bench/graph_spark.py --json graph_spark.json
Smoke: ``.venv/bin/python bench/graph_spark.py --edges 100000 --repeat 1``
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchkit import (
    CACHE,
    TreeMemory,
    contact_edges,
    feed_ids,
    mib,
    process_tree,
    seconds,
    status_kib,
    timed,
    warm_local_engine,
    write_figures,
)

from ssblab.graph import FollowNetwork
from ssblab.graph.local import LocalGraphEngine
from ssblab.graph.spark import SparkGraphEngine

STATES = ("following", "blocking", "cleared")  # by ssb-friends weight 1, -1, -2
PART_ROWS = 1_000_000


def cached_follows(work: Path, feeds: int, edges: int, seed: int) -> Path:
    """A ``follows`` table folder of Parquet parts (written once, then reused)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = work / f"follows-{edges}-f{feeds}-s{seed}"
    if folder.is_dir():
        return folder
    src, dst, weight = contact_edges(feeds, edges, seed)
    ids, states = pa.array(feed_ids(feeds), pa.string()), pa.array(STATES, pa.string())
    state_of = {1: 0, -1: 1, -2: 2}
    part = folder.with_suffix(".part")
    part.mkdir(parents=True, exist_ok=True)
    for number, at in enumerate(range(0, len(src), PART_ROWS)):
        rows = slice(at, at + PART_ROWS)
        table = pa.table({"author": ids.take(pa.array(src[rows])), "contact": ids.take(pa.array(dst[rows])),
                          "state": states.take(pa.array([state_of[w] for w in weight[rows].tolist()]))})
        pq.write_table(table, part / f"part-{number:05d}.parquet")
    os.replace(part, folder)
    return folder


def questions(net: FollowNetwork, root: str, max_hops: int, repeat: int) -> tuple[dict[str, Any], dict[str, float]]:
    """The answers and the times of hops, PageRank and components on a loaded network."""
    found, hops_s = timed(lambda: net.hops(root, max_hops), repeat)
    ranks, pr_s = timed(lambda: net.pagerank(10), repeat)
    components, cc_s = timed(net.components)
    answers = {"hops": found, "pagerank": dict(zip(ranks["id"].to_pylist(), ranks["pagerank"].to_pylist(),
                                                   strict=True)), "components": components}
    return answers, {"hops": hops_s, "pagerank": pr_s, "components": cc_s}


def command_name(pid: int) -> str:
    """A process's command name (/proc/PID/comm), "" when it is gone."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def jvm_memory(spark: Any) -> dict[str, int]:
    """The JVM's peak resident set (VmHWM of the driver's ``java`` child) and the peak of its heap pools."""
    jvm = spark.sparkContext._jvm  # py4j's view of the driver JVM
    pools = jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
    heap = sum(pool.getPeakUsage().getUsed() for pool in pools if str(pool.getType()) == "Heap memory")
    java = [pid for pid in process_tree(os.getpid()) if command_name(pid) == "java"]
    return {"jvm_peak_rss": sum(status_kib(pid, "VmHWM") * 1024 for pid in java), "jvm_peak_heap": heap}


def run_spark(args: argparse.Namespace, table: Path, root: str) -> dict[str, Any]:
    from ssblab.pipeline.session import spark_session

    spark = spark_session(app_name="bench-graph-spark", cores=args.cores,
                          extra_conf={"spark.driver.memory": args.driver_memory, "spark.ui.enabled": "false"})
    with TreeMemory(os.getpid(), 0.5) as tree:
        engine = SparkGraphEngine(spark, local_limit=0)
        net, load_s = timed(lambda: FollowNetwork(engine, spark.read.parquet(str(table))))
        packed, pack_s = timed(lambda: net.packed)
        assert packed.local is None, "the graph was collected: local_limit=0 should keep it in Spark"
        answers, times = questions(net, root, args.max_hops, args.repeat)
        memory = {"driver_peak_rss": status_kib("self", "VmHWM") * 1024, **jvm_memory(spark)}
    spark.stop()
    return {"answers": answers, "seconds": {"load": load_s + pack_s, **times},
            "memory": {**memory, "tree_peak_rss": tree.peak}, "edges": packed.edges, "feeds": len(packed.ids)}


def run_local(args: argparse.Namespace, table: Path, root: str) -> dict[str, Any]:
    import pyarrow.parquet as pq

    def load() -> FollowNetwork:
        net = FollowNetwork(LocalGraphEngine(), pq.read_table(table))
        assert net.packed.local is not None
        return net

    warm_local_engine()
    net, load_s = timed(load)
    answers, times = questions(net, root, args.max_hops, args.repeat)
    return {"answers": answers, "seconds": {"load": load_s, **times}}


def checks_of(spark: dict[str, Any], local: dict[str, Any]) -> dict[str, Any]:
    ranks = local["pagerank"]
    return {"hops_equal": spark["hops"] == local["hops"],
            "components_equal": spark["components"].equals(local["components"]),
            "pagerank_max_difference": max(abs(spark["pagerank"][feed] - value) for feed, value in ranks.items())}


def report(mine: dict[str, Any], local: dict[str, Any] | None) -> dict[str, Any]:
    ours = mine["seconds"]
    print(f"{'':>12}{'Spark blocks':>14}" + (f"{'local':>12}{'local / Spark':>16}" if local else ""))
    for name, value in ours.items():
        rest = f"{seconds(local['seconds'][name]):>12}{local['seconds'][name] / value:>16.2f}" if local else ""
        print(f"{name:>12}{seconds(value):>14}{rest}")
    print("peak memory: " + ", ".join(f"{key} {mib(value)}" for key, value in mine["memory"].items()))
    figures = {"spark_blocks": ours, "memory": mine["memory"]}
    if local:
        figures |= {"local": local["seconds"],
                    "ratios": {name: local["seconds"][name] / value for name, value in ours.items()},
                    "checks": checks_of(mine["answers"], local["answers"])}
        print(f"checks: {figures['checks']}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edges", type=int, default=10_000_000)
    parser.add_argument("--feeds", type=int, help="default: edges / 100")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-hops", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3, help="runs of hops and PageRank (medians are shown)")
    parser.add_argument("--cores", type=int, default=None, help="local[N] (default: every core)")
    parser.add_argument("--driver-memory", default="6g", help="the JVM's heap limit (spark.driver.memory)")
    parser.add_argument("--work", type=Path, default=CACHE, help="where the follows table is cached")
    parser.add_argument("--no-local", action="store_true", help="skip the local engine's baseline and checks")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this file")
    args = parser.parse_args()
    feeds = args.feeds or max(10, args.edges // 100)

    # Drawn in a child process, so that this driver's peak memory is the engine's alone.
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as child:
        table, gen_s = timed(lambda: child.submit(cached_follows, args.work, feeds, args.edges, args.seed).result())
    root = feed_ids(feeds)[feeds // 2]  # an ordinary feed, not one of the most followed
    print(f"{feeds:,} feeds, {args.edges:,} contact edges drawn, table {table} ({gen_s:.1f} s); root {root[:12]}…; "
          f"medians of {args.repeat}", flush=True)
    mine = run_spark(args, table, root)
    local = None if args.no_local else run_local(args, table, root)
    figures = {"feeds": mine["feeds"], "edges": mine["edges"], "max_hops": args.max_hops, "repeat": args.repeat,
               "cores": args.cores or os.cpu_count(), **report(mine, local)}
    write_figures(args.json, figures)
    checks = figures.get("checks")
    if checks and not (checks["hops_equal"] and checks["components_equal"]
                       and checks["pagerank_max_difference"] <= 1e-9):
        sys.exit("the engines' answers differ: see the checks above")


if __name__ == "__main__":
    main()
