"""Benchmark: CLI start-up as whole processes, against ``node -e ''`` (the baseline) in the same run.

Each command is run as a whole process, from fork to exit, ``--runs`` times (default 20); the runs go round by
round, each round every command once in a rotating order, so that a burst of load from elsewhere on the machine
hits all alike. Medians of the wall time are reported, and each one's ratio to node's (how many node start-ups
it costs), with the median CPU time (user + system), which load from elsewhere inflates less. The commands:

- ``node -e ''``: the baseline (a JS CLI's floor);
- ``python -c ''``: this interpreter's floor (any Python CLI pays it);
- ``ssblab --help`` and ``ssblab --version``;
- ``ssblab verify ONE.jsonl``: one generated message;
- ``ssblab graph hops --data SMALL.jsonl --root FEED``: a small generated network (``--messages`` messages of
  ``--authors`` feeds, default 3,000 of 40), verified on the way in, on the local engine (``--no-cache``: every
  run verifies, as the first verb on new data does).

The goal (issue 16): ``--help`` and verify-of-one under 150 ms; the run prints whether each met it. Inputs are
generated into ``--work`` (default ~/.cache/ssblab/bench) once.

Full size: ``.venv/bin/python bench/startup.py --json startup.json`` (about a minute on a quiet machine)
Smoke: ``.venv/bin/python bench/startup.py --runs 3``
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

from benchkit import CACHE, Run, cached_network, run_process, seconds, ssblab_command, write_figures

GOAL_S = 0.150
GOALS = ("ssblab --help", "ssblab verify (one message)")


def commands(work: Path, messages: int, authors: int) -> dict[str, list[str]]:
    """The contenders by name (the first is the baseline)."""
    one = cached_network(work, 1, 1, seed=1)
    small = cached_network(work, messages, authors, seed=1)
    with small.open("rb") as lines:
        root = json.loads(lines.readline())["author"]
    ssblab = ssblab_command()
    return {
        "node -e ''": ["node", "-e", ""],
        "python -c ''": [sys.executable, "-c", ""],
        "ssblab --help": [ssblab, "--help"],
        "ssblab --version": [ssblab, "--version"],
        "ssblab verify (one message)": [ssblab, "verify", str(one)],
        f"ssblab graph hops ({messages:,} messages)": [ssblab, "graph", "hops", "--data", str(small), "--root", root,
                                                       "--no-cache"],
    }


def measure(contenders: dict[str, list[str]], runs: int) -> dict[str, list[Run]]:
    """Every run of every command, rounds rotating the order."""
    names = list(contenders)
    found: dict[str, list[Run]] = {name: [] for name in names}
    for round_ in range(runs):
        at = round_ % len(names)
        for name in names[at:] + names[:at]:
            found[name].append(run_process(contenders[name]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="runs of each command (medians are shown)")
    parser.add_argument("--messages", type=int, default=3_000, help="messages of the graph hops dataset")
    parser.add_argument("--authors", type=int, default=40, help="feeds of the graph hops dataset")
    parser.add_argument("--work", type=Path, default=CACHE, help="where the inputs are cached")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this file")
    args = parser.parse_args()
    if not shutil.which("node"):
        sys.exit("node is not on PATH: it is the baseline")

    contenders = commands(args.work, args.messages, args.authors)
    for command in contenders.values():  # once each, untimed: the page cache is warm after it
        run_process(command)
    runs = measure(contenders, args.runs)
    medians = {name: statistics.median(r.seconds for r in found) for name, found in runs.items()}
    cpu = {name: statistics.median(r.cpu for r in found) for name, found in runs.items()}
    baseline = medians["node -e ''"]
    print(f"median of {args.runs} whole-process runs each{'':>4}{'wall':>10}{'/ node':>8}{'CPU':>10}"
          f"{'goal < 150 ms':>15}")
    for name, value in medians.items():
        goal = ("met" if value < GOAL_S else "MISSED") if name in GOALS else ""
        print(f"{name:<46}{seconds(value):>10}{value / baseline:>8.2f}{seconds(cpu[name]):>10}{goal:>15}")
    write_figures(args.json, {"runs": args.runs, "median_s": medians, "median_cpu_s": cpu,
                              "ratio_to_node": {name: value / baseline for name, value in medians.items()},
                              "goal_s": GOAL_S, "goal_met": {name: medians[name] < GOAL_S for name in GOALS}})


if __name__ == "__main__":
    main()
