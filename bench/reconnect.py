"""Bytes on reconnect: EBT with request skipping against EBT without it (and history streams), ssblab to ssblab.

Two ssblab peers on loopback, the client dialling through a byte-counting relay (`ssblab.replicate.measure`):

1. a first sync of a generated network (``--authors`` feeds), then one quiet session, after which both sides
   remember each other's clock (as JS ssb-ebt does, a peer stores the clock the other *announced*);
2. ``--changed`` feeds publish two new posts each;
3. three reconnects from identical replicas: EBT with the remembered clocks (request skipping), EBT after both
   sides forgot them (every feed announced again), and createHistoryStream (one stream per feed).

It prints the bytes each way and the ratio of each reconnect to the request-skipping one, the median of
``--runs`` rounds (each starts from copies of the same synced pair of stores).

    python bench/reconnect.py [--authors 500] [--messages 5000] [--changed 5] [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from nacl.signing import SigningKey

from ssblab.generate import GeneratedNetwork, NetworkSpec
from ssblab.replicate.measure import Measurement, append_posts, forget_clock, measure_stores
from ssblab.store import Store

CONTENDERS = ("EBT, request skipping", "EBT, clocks forgotten", "createHistoryStream")


def _copy(source: Path, target: Path) -> Path:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    return target


def reconnects(work: Path, network: GeneratedNetwork, changed: int, timestamp: float,
               keys: dict[str, SigningKey]) -> dict[str, Measurement]:
    """From copies of the synced pair, publish on ``changed`` feeds and reconnect in each of the three ways."""
    runs = {}
    for name, mode in zip(CONTENDERS, ("ebt", "ebt", "history"), strict=True):
        origin_dir, replica_dir = _copy(work / "origin", work / "o"), _copy(work / "synced", work / "r")
        if name == CONTENDERS[1]:
            forget_clock(origin_dir, keys["client_key"])
            forget_clock(replica_dir, keys["server_key"])
        with Store(origin_dir) as origin, Store(replica_dir) as replica:
            append_posts(origin, {kp.id: kp for kp in network.keypairs[:changed]}, 2, timestamp=timestamp)
            runs[name] = measure_stores(origin, replica, sorted(origin.heads()), mode=mode, **keys)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--authors", type=int, default=500)
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--changed", type=int, default=5, help="feeds with new messages at each reconnect")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    network = GeneratedNetwork(NetworkSpec(args.authors, args.messages, seed=11))
    keys = {"server_key": SigningKey(b"s" * 32), "client_key": SigningKey(b"c" * 32)}
    with tempfile.TemporaryDirectory(prefix="bench-reconnect-") as tmp:
        work = Path(tmp)
        with Store(work / "origin") as origin:
            origin.append(network.messages())
            feeds = sorted(origin.heads())
            with Store(work / "synced") as replica:
                first = measure_stores(origin, replica, feeds, **keys)
                quiet = measure_stores(origin, replica, feeds, **keys)  # both sides now hold the other's clock
            last = origin.stats().last_timestamp or 0
        rounds = [reconnects(work, network, args.changed, last + 1000 * (i + 1), keys) for i in range(args.runs)]
    print(f"{args.authors} feeds, {args.messages} messages; {args.changed} feeds gain 2 posts before each reconnect; "
          f"median of {args.runs}")
    print(f"first sync: {first.messages} messages, {first.bytes_up:,} B up, {first.bytes_down:,} B down; "
          f"the quiet session after it: {quiet.bytes_total:,} B")
    base = statistics.median(r[CONTENDERS[0]].bytes_total for r in rounds)
    print(f"{'reconnect':26} {'messages':>8} {'bytes up':>10} {'bytes down':>11} {'total':>10} {'vs skipping':>11}")
    for name in CONTENDERS:
        up = statistics.median(r[name].bytes_up for r in rounds)
        down = statistics.median(r[name].bytes_down for r in rounds)
        messages = statistics.median(r[name].messages for r in rounds)
        print(f"{name:26} {messages:8.0f} {up:10,.0f} {down:11,.0f} {up + down:10,.0f} {(up + down) / base:10.1f}x")


if __name__ == "__main__":
    main()
