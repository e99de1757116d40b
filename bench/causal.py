"""The happened-before index at scale: build time, memory and query latency on a generated message DAG.

Run from the repository root: ``.venv/bin/python -m bench.causal [--messages 1000000] [--feeds 2000]``. The DAG
comes from :func:`ssblab.tangles.synthetic.message_dag` (ids, authors, sequences, references; nothing is
signed). Queries pair random messages with, half of the time, a recent one (most pairs of random messages of a
dense network are ordered; the recent ones give the concurrent answers). Latency is per call of
``happened_before`` from Python, timed one by one; ``extend`` times adding 1,000 more messages, one at a time
and as one batch.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import time

from ssblab.tangles.causal import build_index, extend_index, happened_before
from ssblab.tangles.synthetic import message_dag


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _query_pairs(rng: random.Random, ids: list[str], count: int) -> list[tuple[str, str]]:
    pairs = []
    for _ in range(count):
        at = rng.randrange(len(ids))
        earlier = rng.randrange(len(ids)) if rng.random() < 0.5 else max(0, at - rng.randrange(1, 500))
        pairs.append((ids[earlier], ids[at]))
    return pairs


def _latencies(index: object, pairs: list[tuple[str, str]]) -> tuple[list[int], int]:
    clock = time.perf_counter_ns
    out, positive = [], 0
    for earlier, later in pairs:
        started = clock()
        answer = happened_before(index, earlier, later)  # type: ignore[arg-type]
        out.append(clock() - started)
        positive += answer
    return out, positive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--feeds", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--reference-rate", type=float, default=0.5)
    parser.add_argument("--every", type=int, default=32, help="checkpoint spacing within a feed")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    messages = list(message_dag(rng, args.messages + 1000, args.feeds, reference_rate=args.reference_rate))
    base, tail = messages[: args.messages], messages[args.messages :]
    print(f"generated {len(messages):,} messages of {args.feeds:,} feeds in {time.perf_counter() - started:.1f} s")
    rss_before = _rss_mb()
    started = time.perf_counter()
    index = build_index(base, every=args.every)
    build_s = time.perf_counter() - started
    print(f"build: {build_s:.1f} s ({len(index):,} messages, {len(index.keys):,} clock deltas, "
          f"{len(index.keys) / len(index):.1f} per message)")
    print(f"memory: delta arrays {index.nbytes / 2**20:.0f} MiB; peak RSS grew {_rss_mb() - rss_before:.0f} MiB "
          f"during the build (dense clocks:  {len(index) * args.feeds * 4 / 2**30:.1f} GiB)")
    ids = [m.id for m in base]
    pairs = _query_pairs(random.Random(args.seed + 1), ids, args.queries)
    latencies, positive = _latencies(index, pairs)
    q = statistics.quantiles(latencies, n=100)
    print(f"happened_before: median {statistics.median(latencies) / 1000:.1f} µs, p99 {q[98] / 1000:.1f} µs "
          f"over {len(pairs):,} queries ({positive / len(pairs):.0%} true)")
    started = time.perf_counter()
    batched = extend_index(index, tail)
    per_batch = (time.perf_counter() - started) / len(tail)
    started = time.perf_counter()
    for m in tail:
        index = extend_index(index, [m])
    per_message = (time.perf_counter() - started) / len(tail)
    assert len(index) == len(batched) == len(messages)
    print(f"extend: {per_message * 1000:.2f} ms per message one at a time, {per_batch * 1000:.3f} ms per message "
          f"in one batch ({len(tail)} messages)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
