"""The analysis verbs as whole processes on a 20,000-message network, against the CLI's own start-up.

Issue 16's goal: ``ssblab graph hops``, ``graph stats``, ``moderation whatif`` and ``tangle`` finish in under 2 s
each as whole processes on the local engine, on a 300-feed, 20,000-message network in a store.

Generates the network (``ssblab generate --authors 300 --messages 20000``), imports it into a store and exports
it as a Parquet dataset on the local engine, in a scratch folder; then runs each verb, by turns with the baseline
``ssblab --version`` (interpreter and CLI start-up, nothing read), on the store (every message verified on the way
in) and on the dataset. Figures are medians over ``--repeat`` runs of wall time (what a user waits) and of CPU
time (user + system of the child, which other load on the machine inflates less); each ratio is the median of
each turn's verb time over that turn's baseline. On a store, "first" is the first verb on its bytes (every
message verified, the dataset kept in the cache of `ssblab.pipeline.cache`, which is emptied before each such run)
and "kept" every later one (the kept dataset read back). ``--spark`` adds one run of each verb with ``--engine
spark`` on the dataset (a JVM start-up: seconds) and checks that it prints exactly what the local engine prints.

    python bench/analysis_cli.py [--repeat 7] [--spark]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from benchkit import Run, run_process, ssblab_command

SSBLAB = [ssblab_command()]
GOAL = 2.0


def network(folder: Path) -> tuple[Path, Path]:
    """The store and the Parquet dataset of one generated network."""
    def run(*args: str) -> None:
        subprocess.run([*SSBLAB, *args], check=True, capture_output=True)

    run("generate", "--authors", "300", "--messages", "20000", "--out", str(folder / "net.jsonl"))
    run("import", str(folder / "net.jsonl"), "--store", str(folder / "store"))
    run("export", "--store", str(folder / "store"), "--format", "parquet", "--engine", "local",
        "--out", str(folder / "parquet"))
    return folder / "store", folder / "parquet"


def subjects(data: Path) -> tuple[str, str, str]:
    """The most-followed feed (the root), the feed it follows that is most followed (to block), and the largest
    thread's root."""
    import pyarrow.parquet as pq

    follows = [r for r in pq.read_table(data / "follows").to_pylist() if r["state"] == "following"]
    popular = Counter(r["contact"] for r in follows)
    root = next(feed for feed, _ in popular.most_common() if any(r["author"] == feed for r in follows))
    blocked = max((r["contact"] for r in follows if r["author"] == root), key=popular.__getitem__)
    edges = pq.read_table(data / "tangle_edges", columns=["tangle", "root"]).to_pylist()
    thread = Counter(r["root"] for r in edges if r["tangle"] == "thread").most_common(1)[0][0]
    return root, blocked, thread


def verbs(root: str, blocked: str, thread: str) -> dict[str, list[str]]:
    return {
        "graph hops": ["graph", "hops", "--root", root],
        "graph stats": ["graph", "stats"],
        "moderation whatif": ["moderation", "whatif", "--root", root, "--block", blocked],
        "tangle": ["tangle", "--root", thread],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--spark", action="store_true", help="also one run of each verb on the Spark engine")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ssblab-bench-") as scratch:
        store, dataset = network(Path(scratch))
        env = {**os.environ, "SSBLAB_DATA_CACHE": str(Path(scratch) / "cache")}
        kept = Path(scratch) / "cache" / "verified"
        commands = verbs(*subjects(dataset))
        baseline = [*SSBLAB, "--version"]
        print(f"{len(commands)} verbs, local engine, {args.repeat} runs each, by turns with `ssblab --version`")
        print(f"  {'verb':<20} {'data':<12} {'wall s':>7} {'cpu s':>7} {'x start-up':>11}  under {GOAL:.0f} s")
        for name, verb in commands.items():
            for label, data in (("store, first", store), ("store, kept", store), ("parquet", dataset)):
                argv = [*SSBLAB, *verb, "--data", str(data)]
                runs: dict[str, list[Run]] = {"verb": [], "baseline": []}
                for turn in range(args.repeat):
                    order = [("verb", argv), ("baseline", baseline)]
                    for which, command in order if turn % 2 else order[::-1]:
                        if which == "verb" and label == "store, first":
                            shutil.rmtree(kept, ignore_errors=True)
                        runs[which].append(run_process(command, env=env))
                ratio = statistics.median(v.seconds / b.seconds
                                          for v, b in zip(runs["verb"], runs["baseline"], strict=True))
                wall = statistics.median(r.seconds for r in runs["verb"])
                cpu = statistics.median(r.cpu for r in runs["verb"])
                met = "yes" if wall < GOAL else "NO"
                print(f"  {name:<20} {label:<12} {wall:7.3f} {cpu:7.3f} {ratio:10.1f}x  {met}")
        start = statistics.median(run_process(baseline).seconds for _ in range(args.repeat))
        print(f"  {'ssblab --version':<33} {start:7.3f}")
        if args.spark:
            for name, verb in commands.items():
                argv = [*SSBLAB, *verb, "--data", str(dataset)]
                spark, local = run_process([*argv, "--engine", "spark"]), run_process(argv)
                same = spark.stdout == local.stdout
                print(f"  {name} --engine spark: wall {spark.seconds:.1f} s, the same output as local: {same}")
                if not same:
                    print(json.dumps({"local": local.stdout[:400].decode(), "spark": spark.stdout[:400].decode()},
                                     indent=1))


if __name__ == "__main__":
    main()
