"""The archive extension against another build of it, in one process, turn by turn (a C change's speed).

Build the baseline from any checkout (e.g. ``git worktree add /tmp/base main && cd /tmp/base && pip wheel . -w
/tmp/w`` or ``python setup.py build_ext --inplace``) and pass its ``ssblab/archive/_speedups*.so``. Each turn
builds the archives of ``--messages`` generated messages and decodes them to Arrow once with each extension (the
one going first alternates); the Python code is this checkout's for both. Times are CPU seconds; the ratio is
the median of the turns' own this/baseline ratios, with the lowest and highest. The blobs of both builds are
checked to be the same bytes.

    python bench/archive_builds.py BASELINE.so [--messages 50000] [--turns 21]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from collections import defaultdict
from types import ModuleType

import ssblab.archive.compiled as compiled
from ssblab.archive.arrow import to_arrow
from ssblab.archive.bundle import build_archives
from ssblab.generate import generate_network


def load(path: str) -> ModuleType:
    """The extension at ``path`` under another package name (its init function is still ``PyInit__speedups``)."""
    spec = importlib.util.spec_from_file_location("baseline._speedups", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", help="the other build's _speedups shared library")
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--turns", type=int, default=21)
    args = parser.parse_args()
    builds = {"baseline": load(args.baseline), "this": compiled.built()}
    feeds: dict[str, list] = defaultdict(list)
    for m in generate_network(100, args.messages, 1):
        feeds[m.author].append(m)
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    blobs: dict[str, list[bytes]] = {}
    for turn in range(args.turns):
        for name in sorted(builds, reverse=bool(turn % 2)):
            compiled._EXTENSION = builds[name]  # a benchmark's swap: the library never rebinds it
            start = time.process_time()
            archives, dicts = build_archives(list(feeds.values()), 8192)
            times[name, "encode"].append(time.process_time() - start)
            blobs[name] = [b for a in archives for b in a.blocks]
            start = time.process_time()
            to_arrow(blobs[name], dicts, valid=True)
            times[name, "decode"].append(time.process_time() - start)
    assert blobs["this"] == blobs["baseline"], "the two builds made different blobs"
    for step in ("encode", "decode"):
        ratios = [t / b for t, b in zip(times["this", step], times["baseline", step], strict=True)]
        print(f"{step}: baseline {statistics.median(times['baseline', step]):.3f} s, this "
              f"{statistics.median(times['this', step]):.3f} s, this/baseline {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f} to {max(ratios):.3f}) over {args.turns} turns")


if __name__ == "__main__":
    main()
