"""Set Replication Trees against sending all ids: bytes and rounds as functions of n and d.

Run from the repository root: ``.venv/bin/python -m bench.reconcile [--sizes 100 1000] [--seed 1]``. Each row
is one seeded trDAG of ``n`` shared messages and two replicas that each grew ``d / 2`` new messages on top,
which the other lacks; ``d`` is the size of the symmetric difference. ``search B`` is what the
protocol sends to find the difference (everything but pushed messages), ``ids B`` what both sides would send
to exchange all their 32-byte ids in one round trip; ``push B`` (the missing messages themselves) is the same
either way.
"""

from __future__ import annotations

import argparse
import random
import time

from ssblab.reconcile.simulate import diverge_replicas, random_trdag, run_pair, sessions

ID_BYTES = 32  # a sha256 message id, the least "sending all ids" can cost per message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10_000, 50_000])
    parser.add_argument("--diffs", type=int, nargs="+", default=[0, 1, 10, 100, 1000])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    header = ("n", "d", "depth", "rounds", "search B", "ids B", "ids rounds", "push B", "seconds")
    print(" ".join(f"{h:>10}" for h in header))
    for n in args.sizes:
        rng = random.Random(args.seed)
        dag = random_trdag(rng, n, branch=0.5, max_parents=2)
        for d in args.diffs:
            a, b = diverge_replicas(rng, dag, d // 2, d - d // 2)
            started = time.perf_counter()
            alice, bob = sessions(rng, a, b)
            report = run_pair(alice, bob)
            seconds = time.perf_counter() - started
            assert set(alice.result.nodes) == set(bob.result.nodes) == set(a.nodes) | set(b.nodes)
            assert len(set(a.nodes) ^ set(b.nodes)) == d
            all_ids = (len(a) + len(b)) * ID_BYTES
            depth = max(a.max_depth, b.max_depth)
            row = (n, d, depth, report.rounds, report.overhead, all_ids, 2, sum(report.push_bytes))
            print(" ".join(f"{v:>10}" for v in row), f"{seconds:>10.2f}")


if __name__ == "__main__":
    main()
