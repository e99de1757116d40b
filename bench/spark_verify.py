"""Spark verification against the single-process validator on the same data, in one run; then the export.

The input is a generated network (``ssblab.generate``) cached as JSONL under --cache (generating 1,000,000
messages takes minutes, so it is written once and reused). A smaller --messages uses the first lines of a larger
cached network with the same authors and seed: a prefix of a feed log is itself a valid log.

Figures: wall-clock rates of ``verify_path`` (one process, one core) and of ``verify_spark`` on ``local[cores]``
(session start and a warm-up excluded: they are paid once per session), the speed-up, the per-message cost per
core (wall time x cores / messages) of each, then the Parquet export rate and the dataset's size on disk against
the JSONL. CPU seconds of the whole process tree (driver, JVM, Python workers) give a per-message cost that
other load on the machine does not inflate. The two reports must be equal, or the run fails. The load average
is printed too: on a shared machine other processes take cores away from both contenders.

The machine's own ceiling is measured as well: ``--cores`` separate single-process validators started at once,
each on the same 200,000-message prefix, against one of them alone. No scheduler can beat independent processes,
so their speed-up is what the cores give (on a virtual machine whose cores share physical ones, less than the
core count), and Spark's speed-up divided by it says how much of that Spark keeps.

Both contenders run ``--rounds`` times (default 3), alternating which goes first, and the medians are compared:
on a shared virtual machine a single pair of runs swings by 15 % either way (1.64x and 1.91x in two runs here).
The Spark session is up throughout, so its JVM idles (about 4 % of a core) during the single-process runs.

    .venv/bin/python -m bench.spark_verify [--messages 1000000] [--authors 1000] [--cores 2] [--rounds 3]
                                           [--no-export]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ssblab.generate import generate_network, write_jsonl
from ssblab.pipeline.verify import verify_path

CACHE = Path(tempfile.gettempdir()) / "ssblab-bench"


def cached_network(cache: Path, messages: int, authors: int, seed: int) -> Path:
    """The JSONL of a generated network: cached, or cut from a larger cached one, or generated now."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"net-{messages}-a{authors}-s{seed}.jsonl"
    if path.exists():
        return path
    larger = sorted((p for p in cache.glob(f"net-*-a{authors}-s{seed}.jsonl")
                     if int(p.name.split("-")[1]) > messages), key=lambda p: int(p.name.split("-")[1]))
    part = path.with_suffix(".jsonl.part")
    if larger:
        with larger[0].open("rb") as src, part.open("wb") as out:
            out.writelines(itertools.islice(src, messages))
    else:
        print(f"generating {messages:,} messages of {authors} authors into {path} (once)...", flush=True)
        write_jsonl(generate_network(authors, messages, seed), part)
    os.replace(part, path)
    return path


def tree_cpu() -> float:
    """CPU seconds of this process and every live descendant (the JVM, its Python workers), reaped ones included
    through their parents' cumulative times (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry.name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
    tree, grew = {os.getpid()}, True
    while grew:
        more = {pid for pid, (ppid, _) in stats.items() if ppid in tree} - tree
        tree |= more
        grew = bool(more)
    return sum(stats[pid][1] for pid in tree if pid in stats) / ticks


def timed(run, cpu=tree_cpu):  # type: ignore[no-untyped-def]
    """(result, wall seconds, CPU seconds of the process tree, or of what ``cpu`` counts)."""
    before, started = cpu(), time.perf_counter()
    result = run()
    return result, time.perf_counter() - started, cpu() - before


def parallel_ceiling(path: Path, processes: int) -> float:
    """The speed-up of ``processes`` independent single-process validators of ``path`` run at once over one."""
    command = [sys.executable, "-c", "import sys; from ssblab.pipeline.verify import verify_path; "
               "verify_path(sys.argv[1])", str(path)]

    def run(count: int) -> float:
        started = time.perf_counter()
        for child in [subprocess.Popen(command) for _ in range(count)]:
            if child.wait() != 0:
                raise RuntimeError(f"{' '.join(command)} failed")
        return time.perf_counter() - started

    return processes * run(1) / run(processes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--authors", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each contender, alternating (medians)")
    parser.add_argument("--no-export", action="store_true", help="skip the Parquet export figures")
    args = parser.parse_args()
    from ssblab.pipeline.export import export_parquet
    from ssblab.pipeline.session import spark_session
    from ssblab.pipeline.verify import verify_spark

    source = cached_network(args.cache, args.messages, args.authors, args.seed)
    n = args.messages
    print(f"{n:,} messages, {args.authors} authors, {source.stat().st_size / 2**20:,.0f} MiB JSONL; "
          f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
    spark = spark_session(cores=args.cores, app_name="ssblab-bench",
                          extra_conf={"spark.ui.showConsoleProgress": "false"})
    warm = cached_network(args.cache, min(n, 20_000), args.authors, args.seed)
    verify_spark(spark, warm, progress=False)
    singles, sparks = [], []
    for round_ in range(args.rounds):
        order = ("single", "spark") if round_ % 2 == 0 else ("spark", "single")
        for contender in order:
            if contender == "single":
                # This process alone: Spark's workers come and go meanwhile, which the tree's sum would count.
                single, *times = timed(lambda: verify_path(source), time.process_time)
                singles.append(times)
                print(f"single process: {n / times[0]:,.0f} msgs/s ({times[0]:,.1f} s, {times[1]:,.1f} CPU s)",
                      flush=True)
            else:
                report, *times = timed(lambda: verify_spark(spark, source, progress=False))
                sparks.append(times)
                print(f"spark local[{args.cores}]: {n / times[0]:,.0f} msgs/s ({times[0]:,.1f} s)", flush=True)
    assert report.to_json() == single.to_json(), "the Spark verdicts differ from the single-process ones"
    single_s, single_cpu = (statistics.median(t[i] for t in singles) for i in (0, 1))
    spark_s, spark_cpu = (statistics.median(t[i] for t in sparks) for i in (0, 1))
    speedup = single_s / spark_s
    figures = {
        "messages": n, "cores": args.cores, "rounds": args.rounds, "load_average": round(os.getloadavg()[0], 1),
        "single_msgs_per_s": round(n / single_s), "spark_msgs_per_s": round(n / spark_s),
        "speedup": round(speedup, 2),
        "single_us_per_msg_per_core": round(single_s / n * 1e6, 1),
        "spark_us_per_msg_per_core": round(spark_s * args.cores / n * 1e6, 1),
        "per_core_cost_ratio": round(spark_s * args.cores / single_s, 2),
        "single_cpu_us_per_msg": round(single_cpu / n * 1e6, 1), "spark_cpu_us_per_msg": round(spark_cpu / n * 1e6, 1),
        "cpu_cost_ratio": round(spark_cpu / single_cpu, 2),
    }
    print(f"medians of {args.rounds}: single {n / single_s:,.0f} msgs/s, spark local[{args.cores}] "
          f"{n / spark_s:,.0f} msgs/s ({spark_s:,.1f} s), speed-up {speedup:.2f}x, "
          f"per-core cost {figures['per_core_cost_ratio']:.2f}x the single process's (wall), "
          f"{figures['cpu_cost_ratio']:.2f}x (CPU: {spark_cpu:,.1f} s)", flush=True)
    ceiling = parallel_ceiling(cached_network(args.cache, min(n, 200_000), args.authors, args.seed), args.cores)
    figures |= {"independent_processes_speedup": round(ceiling, 2), "speedup_of_ceiling": round(speedup / ceiling, 2)}
    print(f"{args.cores} independent single processes at once: {ceiling:.2f}x one alone (the machine's ceiling); "
          f"Spark reaches {speedup / ceiling:.0%} of it", flush=True)
    if not args.no_export:
        out = Path(tempfile.mkdtemp(prefix="ssblab-bench-export-")) / "dataset"
        try:
            summary, export_s, _ = timed(lambda: export_parquet(spark, source, out, progress=False))
            figures |= {"export_msgs_per_s": round(n / export_s), "export_s": round(export_s, 1),
                        "dataset_bytes": summary.bytes, "jsonl_bytes": source.stat().st_size,
                        "dataset_to_jsonl": round(summary.bytes / source.stat().st_size, 3), "rows": summary.rows}
            print(f"export: {n / export_s:,.0f} msgs/s ({export_s:,.1f} s); dataset {summary.bytes / 2**20:,.0f} "
                  f"MiB = {summary.bytes / source.stat().st_size:.1%} of the JSONL", flush=True)
        finally:
            shutil.rmtree(out.parent, ignore_errors=True)
    print(json.dumps(figures))
    spark.stop()


if __name__ == "__main__":
    main()
