"""Benchmark: a whole-network-sized run through the CLI, each step a whole process, with time and peak memory.

The input is a generated network (``ssblab.generate``) of ``--feeds`` feeds and ``--messages`` messages (default
10,000 and 2,000,000, about 1.4 GiB of JSONL), written once under ``--work`` (default ~/.cache/ssblab/bench):
generating 2M messages takes a while (several minutes on one core). Then each step runs as a whole process,
``--rounds`` times (default 1; medians), and beside each local step its Spark baseline where there is one
(ratio = Spark seconds over local seconds: above 1, local is faster):

1. ``ssblab verify FILE`` (local engine: a pool of one process per core), baseline ``--engine spark``;
2. ``ssblab export --format parquet --engine local``, baseline ``--engine spark`` (the datasets must hold the
   same number of rows in every table);
3. the local analyses over the local dataset: ``ssblab graph hops`` (from the feed that follows most) and
   ``ssblab graph stats``, each against ``--engine spark`` (whose output must be the same), and ``ssblab
   tangle`` on the largest thread; `Dataset.tangles()` where this ssblab has it (else skipped, saying so);
4. ``ssblab graph stats --data FILE``: the local engine verifying the JSONL, building every table in memory and
   keeping the verified dataset (written by a thread while the analysis runs; into a cache folder under
   ``--work``, emptied before each run): its most memory-hungry path.

Peak memory per step (`benchkit`): the largest single process (``wait4``'s ``ru_maxrss``) and the whole process
tree (resident sets summed, sampled every 0.5 s; a JVM and its Python workers, or a pool's workers, included).
The local engine must stay under 8 GiB (issue 16): the run reports the largest tree peak of the local steps
against it.

Full size (about half an hour and several GiB, after the generation; run on a quiet machine):
    .venv/bin/python bench/network.py --json network.json
Smoke: ``.venv/bin/python bench/network.py --feeds 100 --messages 20000``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

from benchkit import CACHE, Run, cached_network, mib, run_process, seconds, ssblab_command, write_figures

LOCAL_LIMIT = 8 * 2**30  # issue 16: the local engine stays under 8 GiB on the whole network
SAMPLE_S = 0.5


def run_step(command: list[str], rounds: int, cache: Path | None = None) -> dict[str, Any]:
    """A step's median wall and CPU seconds, its highest peaks, and its last output (``cache``: the step's
    `ssblab.pipeline.cache` folder, emptied before each run, so that each verifies and keeps its dataset)."""
    runs: list[Run] = []
    for _ in range(rounds):
        env = None
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)
            env = {**os.environ, "SSBLAB_DATA_CACHE": str(cache)}
        runs.append(run_process(command, sample=SAMPLE_S, env=env))
    return {"seconds": statistics.median(r.seconds for r in runs), "cpu": statistics.median(r.cpu for r in runs),
            "peak_rss": max(r.peak_rss for r in runs), "peak_tree": max(r.peak_tree for r in runs),
            "stdout": runs[-1].stdout}


def table_rows(dataset: Path) -> dict[str, int]:
    """Rows of every table of a dataset, from its Parquet footers."""
    import pyarrow.parquet as pq

    return {folder.name: sum(pq.read_metadata(f).num_rows for f in folder.glob("*.parquet"))
            for folder in sorted(dataset.iterdir()) if folder.is_dir()}


def pick_roots(dataset: Path) -> tuple[str, str | None]:
    """The feed that follows most (the hops root) and the thread with most replies (the tangle root)."""
    from ssblab.dataset import open_dataset

    ds = open_dataset(dataset)
    feed = ds.sql("SELECT author FROM follows WHERE state = 'following' GROUP BY author "
                  "ORDER BY count(*) DESC, author LIMIT 1")["author"][0].as_py()
    thread = ds.sql("SELECT root FROM tangle_edges WHERE tangle = 'thread' GROUP BY root "
                    "ORDER BY count(*) DESC, root LIMIT 1")["root"].to_pylist()
    return feed, thread[0] if thread else None


def steps(source: Path, work: Path) -> list[tuple[str, list[str], str | None]]:
    """The pipeline steps: (name, command, the name of its baseline step or None), baselines first."""
    ssblab = ssblab_command()
    export = [ssblab, "export", "--store", str(source), "--format", "parquet", "--engine"]
    return [
        ("verify --engine spark", [ssblab, "verify", str(source), "--engine", "spark", "--json"], None),
        ("verify (local)", [ssblab, "verify", str(source), "--json"], "verify --engine spark"),
        ("export --engine spark", [*export, "spark", "--out", str(work / "dataset-spark")], None),
        ("export --engine local", [*export, "local", "--out", str(work / "dataset-local")], "export --engine spark"),
    ]


def analyses(source: Path, dataset: Path) -> list[tuple[str, list[str], str | None]]:
    """The analysis steps over the local dataset (and the JSONL), with their Spark baselines."""
    ssblab = ssblab_command()
    feed, thread = pick_roots(dataset)
    data = ["--data", str(dataset)]
    found: list[tuple[str, list[str], str | None]] = [
        ("graph hops --engine spark", [ssblab, "graph", "hops", *data, "--root", feed, "--json", "--engine", "spark"],
         None),
        ("graph hops (local)", [ssblab, "graph", "hops", *data, "--root", feed, "--json"], "graph hops --engine spark"),
        ("graph stats --engine spark", [ssblab, "graph", "stats", *data, "--json", "--engine", "spark"], None),
        ("graph stats (local)", [ssblab, "graph", "stats", *data, "--json"], "graph stats --engine spark"),
    ]
    if thread is not None:
        found.append(("tangle (largest thread)", [ssblab, "tangle", *data, "--root", thread, "--json"], None))
    if importlib.util.find_spec("ssblab.tangles.analysis") is not None:
        found.append(("Dataset.tangles()", [sys.executable, "-c", "import sys, ssblab; "
                                            "print(ssblab.open_dataset(sys.argv[1]).tangles())", str(dataset)], None))
    else:
        print("Dataset.tangles(): skipped, this ssblab has no ssblab.tangles.analysis", flush=True)
    found.append(("graph stats from the JSONL (local)", [ssblab, "graph", "stats", "--data", str(source), "--json"],
                  None))
    return found


def run_all(plan: list[tuple[str, list[str], str | None]], rounds: int, results: dict[str, dict[str, Any]],
            cache: Path | None = None) -> None:
    for name, command, baseline in plan:
        results[name] = found = run_step(command, rounds, cache)
        ratio = "" if baseline is None else f"  {results[baseline]['seconds'] / found['seconds']:.2f}x vs {baseline}"
        print(f"{name:<36}{seconds(found['seconds']):>10}{seconds(found['cpu']):>10}{mib(found['peak_rss']):>13}"
              f"{mib(found['peak_tree']):>11}{ratio}", flush=True)


def checks_of(results: dict[str, dict[str, Any]], work: Path, messages: int) -> dict[str, Any]:
    verified = {name: json.loads(results[name]["stdout"]) for name in ("verify (local)", "verify --engine spark")}
    spark_rows, local_rows = table_rows(work / "dataset-spark"), table_rows(work / "dataset-local")
    return {
        "all_valid": all(v["valid"] == messages for v in verified.values()),
        "verify_reports_equal": verified["verify (local)"] == verified["verify --engine spark"],
        "export_rows_equal": spark_rows == local_rows, "rows": local_rows,
        "hops_equal": results["graph hops (local)"]["stdout"] == results["graph hops --engine spark"]["stdout"],
        "stats_equal": results["graph stats (local)"]["stdout"] == results["graph stats --engine spark"]["stdout"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--feeds", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each step (medians are shown)")
    parser.add_argument("--work", type=Path, default=CACHE, help="where the JSONL is cached and datasets written")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this file")
    args = parser.parse_args()

    source = cached_network(args.work, args.messages, args.feeds, args.seed)
    work = args.work / f"network-{args.messages}-a{args.feeds}-s{args.seed}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    print(f"{args.messages:,} messages of {args.feeds:,} feeds, {mib(source.stat().st_size)} ({source})")
    print(f"{'step (whole process)':<36}{'wall':>10}{'CPU':>10}{'peak 1 proc':>13}{'peak tree':>11}", flush=True)
    results: dict[str, dict[str, Any]] = {}
    try:
        run_all(steps(source, work), args.rounds, results)
        run_all(analyses(source, work / "dataset-local"), args.rounds, results, cache=work / "cache")
        checks = checks_of(results, work, args.messages)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    local = {name: found["peak_tree"] for name, found in results.items() if "spark" not in name}
    worst = max(local, key=lambda name: local[name])
    print(f"local engine's highest tree peak: {mib(local[worst])} ({worst}): "
          f"{'under' if local[worst] < LOCAL_LIMIT else 'NOT under'} 8 GiB")
    print(f"checks: {checks}")
    write_figures(args.json, {"feeds": args.feeds, "messages": args.messages, "jsonl_bytes": source.stat().st_size,
                              "rounds": args.rounds, "checks": checks, "local_peak_tree_max": local[worst],
                              "local_under_8_gib": local[worst] < LOCAL_LIMIT,
                              "steps": {name: {k: v for k, v in found.items() if k != "stdout"}
                                        for name, found in results.items()}})
    if not all(checks[key] for key in ("all_valid", "verify_reports_equal", "export_rows_equal", "hops_equal")):
        sys.exit("the engines disagree: see the checks above")


if __name__ == "__main__":
    main()
