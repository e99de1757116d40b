"""Benchmark: verification on Spark against the local engine, in one process, on the same data; then the export.

The input is a generated network (``ssblab.generate``) cached as JSONL under ``--work`` (default
~/.cache/ssblab/bench; generating 1,000,000 messages takes minutes, so it is written once and reused). A smaller
``--messages`` uses the first lines of a larger cached network with the same authors and seed.

The contenders, each ``--rounds`` times (default 3) in a rotating order, medians compared:
- ``verify_local(path)``: the local engine, a pool of one process per core (ssblab/pipeline/pool.py): the
  baseline;
- ``verify_local(path, workers=1)``: the local engine in this process alone (one core);
- ``verify_spark(spark, path)`` on ``local[--cores]`` (session start and a warm-up excluded: paid once a session).
Figures: wall-clock rates, Spark's and one process's ratio to the pool (its seconds over theirs: above 1, faster
than the pool), and CPU seconds of the whole process tree (this process, the pool's workers, the JVM and its
Python workers) per message, which other load on the machine does not inflate. The three reports must be equal,
or the run fails.

The machine's own ceiling is measured as well: ``--cores`` separate one-process validators started at once, each
on the same 200,000-message prefix, against one of them alone; no scheduler beats independent processes, so
their speed-up is what the cores give (on a virtual machine whose cores share physical ones, less than the core
count).

Then the Parquet export of the same source, both engines: ``export_dataset(engine="local")`` against Spark's
(`export_parquet`), with the dataset's size on disk against the JSONL (``--no-export`` skips it).

Full size: ``.venv/bin/python bench/spark_verify.py --json spark_verify.json`` (about half an hour)
Smoke: ``.venv/bin/python bench/spark_verify.py --messages 20000 --authors 100 --rounds 1``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchkit import CACHE, cached_network, tree_cpu, write_figures

from ssblab.pipeline.export import export_dataset, export_parquet
from ssblab.pipeline.verify import verify_local, verify_spark

POOL, ALONE, SPARK = "local engine (pool)", "local engine (one process)", "spark"


def measured(run: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall seconds, CPU seconds of this process tree)."""
    before, started = tree_cpu(), time.perf_counter()
    result = run()
    return result, time.perf_counter() - started, tree_cpu() - before


def parallel_ceiling(path: Path, processes: int) -> float:
    """The speed-up of ``processes`` independent one-process validators of ``path`` run at once over one."""
    command = [sys.executable, "-c", "import sys; from ssblab.pipeline.verify import verify_local; "
               "verify_local(sys.argv[1], workers=1)", str(path)]

    def run(count: int) -> float:
        started = time.perf_counter()
        for child in [subprocess.Popen(command) for _ in range(count)]:
            if child.wait() != 0:
                raise RuntimeError(f"{' '.join(command)} failed")
        return time.perf_counter() - started

    return processes * run(1) / run(processes)


def verify_rounds(spark: Any, source: Path, rounds: int, cores: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of every run of each contender; their reports must be equal."""
    contenders: dict[str, Callable[[], Any]] = {
        POOL: lambda: verify_local(source, workers=cores), ALONE: lambda: verify_local(source, workers=1),
        SPARK: lambda: verify_spark(spark, source, progress=False)}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    reports = {}
    for round_ in range(rounds):
        names = list(contenders)[round_ % 3:] + list(contenders)[: round_ % 3]
        for name in names:
            reports[name], *spent = measured(contenders[name])
            times[name].append((spent[0], spent[1]))
            print(f"{name}: {spent[0]:,.1f} s", flush=True)
    if len({repr(report.to_json()) for report in reports.values()}) != 1:
        sys.exit("the engines' verdicts differ")
    return times


def export_figures(spark: Any, source: Path, messages: int) -> dict[str, Any]:
    """Both engines' exports of ``source``: seconds, rate, size on disk; the row counts must agree."""
    out = Path(tempfile.mkdtemp(prefix="ssblab-bench-export-"))
    try:
        local, local_s, _ = measured(lambda: export_dataset(source, out / "local", engine="local"))
        theirs, spark_s, _ = measured(lambda: export_parquet(spark, source, out / "spark", progress=False))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if local.rows != theirs.rows:
        sys.exit(f"the exports differ: local {local.rows}, spark {theirs.rows}")
    size = source.stat().st_size
    print(f"export: local {messages / local_s:,.0f} msgs/s ({local_s:,.1f} s), spark {messages / spark_s:,.0f} "
          f"msgs/s ({spark_s:,.1f} s): spark / local {spark_s / local_s:.2f}; dataset {local.bytes / 2**20:,.0f} "
          f"MiB = {local.bytes / size:.1%} of the JSONL", flush=True)
    return {"export_local_s": local_s, "export_spark_s": spark_s, "export_spark_over_local": spark_s / local_s,
            "dataset_bytes": local.bytes, "jsonl_bytes": size, "rows": local.rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--authors", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--work", type=Path, default=CACHE, help="where the JSONL is cached")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each contender, rotating (medians)")
    parser.add_argument("--no-export", action="store_true", help="skip the Parquet export figures")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this file")
    args = parser.parse_args()
    from ssblab.pipeline.session import spark_session

    source = cached_network(args.work, args.messages, args.authors, args.seed)
    n = args.messages
    print(f"{n:,} messages, {args.authors} authors, {source.stat().st_size / 2**20:,.0f} MiB JSONL; "
          f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
    spark = spark_session(cores=args.cores, app_name="ssblab-bench", extra_conf={"spark.ui.enabled": "false"})
    verify_spark(spark, cached_network(args.work, min(n, 20_000), args.authors, args.seed), progress=False)
    times = verify_rounds(spark, source, args.rounds, args.cores)
    wall = {name: statistics.median(t[0] for t in found) for name, found in times.items()}
    cpu = {name: statistics.median(t[1] for t in found) for name, found in times.items()}
    figures: dict[str, Any] = {
        "messages": n, "cores": args.cores, "rounds": args.rounds, "load_average": round(os.getloadavg()[0], 1),
        "msgs_per_s": {name: round(n / value) for name, value in wall.items()},
        "ratio_to_pool": {name: round(wall[POOL] / value, 2) for name, value in wall.items()},
        "cpu_us_per_msg": {name: round(value / n * 1e6, 1) for name, value in cpu.items()}}
    for name in wall:
        print(f"{name:<28}{n / wall[name]:>10,.0f} msgs/s{wall[POOL] / wall[name]:>8.2f} x the pool"
              f"{cpu[name] / n * 1e6:>8.1f} CPU µs/msg", flush=True)
    ceiling = parallel_ceiling(cached_network(args.work, min(n, 200_000), args.authors, args.seed), args.cores)
    figures["independent_processes_speedup"] = round(ceiling, 2)
    print(f"{args.cores} independent one-process validators at once: {ceiling:.2f}x one alone (the machine's "
          f"ceiling); the pool reaches {wall[ALONE] / wall[POOL] / ceiling:.0%} of it, Spark "
          f"{wall[ALONE] / wall[SPARK] / ceiling:.0%}", flush=True)
    if not args.no_export:
        figures |= export_figures(spark, source, n)
    write_figures(args.json, figures)
    spark.stop()


if __name__ == "__main__":
    main()
