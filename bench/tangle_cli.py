"""``ssblab tangle`` as whole processes on a 20,000-message network, against the CLI's own start-up.

Generates the network (``ssblab generate --authors 300 --messages 20000``) and exports it on the local engine
(``ssblab export --format parquet --engine local``) into a scratch folder, unless ``--data`` names a dataset;
then runs, by turns, ``ssblab tangle --data DATASET --root ROOT`` on the local engine for the largest thread and
the baseline ``ssblab --version`` (interpreter and CLI start-up, nothing read). Figures are medians over
``--repeat`` runs of wall time (what a user waits) and of CPU time (user + system of the child, which other load
on the machine inflates less); the ratio is the median of each turn's tangle time over that turn's baseline.
``--spark`` adds one run of ``--engine spark`` (a JVM start-up: seconds) and checks it prints the same.

    python bench/tangle_cli.py [--repeat 9] [--data DATASET] [--spark]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

SSBLAB = [sys.executable, "-m", "ssblab"]


def timed(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system) and the standard output of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, out


def network(folder: Path) -> Path:
    subprocess.run([*SSBLAB, "generate", "--authors", "300", "--messages", "20000", "--out",
                    str(folder / "net.jsonl")], check=True, capture_output=True)
    subprocess.run([*SSBLAB, "export", "--store", str(folder / "net.jsonl"), "--format", "parquet", "--engine",
                    "local", "--out", str(folder / "parquet")], check=True, capture_output=True)
    return folder / "parquet"


def largest_thread(data: Path) -> str:
    import pyarrow.parquet as pq

    edges = pq.read_table(data / "tangle_edges", columns=["tangle", "root"]).to_pylist()
    return Counter(r["root"] for r in edges if r["tangle"] == "thread").most_common(1)[0][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--data", type=Path, help="a dataset to use instead of generating one")
    parser.add_argument("--spark", action="store_true", help="also one run on the Spark engine")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ssblab-bench-") as scratch:
        data = args.data or network(Path(scratch))
        root = largest_thread(data)
        tangle = [*SSBLAB, "tangle", "--data", str(data), "--root", root]
        baseline = [*SSBLAB, "--version"]
        runs: dict[str, list[tuple[float, float]]] = {"tangle": [], "baseline": []}
        for turn in range(args.repeat):
            order = [("tangle", tangle), ("baseline", baseline)]
            for name, argv in order if turn % 2 else order[::-1]:
                wall, cpu, out = timed(argv)
                runs[name].append((wall, cpu))
        print(f"ssblab tangle on {data} (largest thread: {out_lines(tangle)} lines), {args.repeat} runs each")
        for name, label in (("tangle", "ssblab tangle (local)"), ("baseline", "ssblab --version")):
            walls, cpus = zip(*runs[name], strict=True)
            print(f"  {label:<24} wall {statistics.median(walls):.3f} s   cpu {statistics.median(cpus):.3f} s")
        ratios = [t[0] / b[0] for t, b in zip(runs["tangle"], runs["baseline"], strict=True)]
        print(f"  ratio tangle / start-up (wall, median of turns): {statistics.median(ratios):.2f}x")
        if args.spark:
            wall, cpu, out = timed([*tangle, "--engine", "spark"])
            same = out == subprocess.run(tangle, check=True, capture_output=True, text=True).stdout
            print(f"  ssblab tangle --engine spark: wall {wall:.1f} s, cpu {cpu:.1f} s, same output: {same}")


def out_lines(argv: list[str]) -> int:
    return len(subprocess.run(argv, check=True, capture_output=True, text=True).stdout.splitlines())


if __name__ == "__main__":
    main()
