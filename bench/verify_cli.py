"""Benchmark: whole-process ``ssblab verify FILE`` (local engine) against JS ssb-validate as a whole process.

bench/verify.py compares validation loops inside their processes, on one core; this bench times what a user
waits for: the process from fork to exit, start-up included, on the same file. The input is ``--messages``
hostile messages (default 30,000), written once under ``--work`` (default ~/.cache/ssblab/bench):

- two thirds a generated network (``ssblab.generate``, ``--authors`` feeds, default 200): posts with accents,
  other scripts and emoji (UTF-16 surrogate pairs: the latin1 id quirk), private messages boxed to 1-7
  recipients, contacts, votes, abouts;
- one third, interleaved, from ``--authors / 4`` more feeds with float timestamps, whose contents break naive
  serializers: floats in every ``Number::toString`` regime, integers beyond 2**53, integer-like keys (which V8
  moves first), control characters and U+2028, and boxes of such content.

The contenders, ``--rounds`` times each (default 5), alternating which goes first; medians compared:
- ssblab: ``ssblab verify FILE --json``; above ``pool.PARALLEL_BYTES`` of input the local engine verifies in a
  pool of one process per core (ssblab/pipeline/pool.py), below it in one process;
- JS: ``node interop/js/validate.js < FILE``: ssb-validate 4 (sodium-native), one verdict line per message, the
  baseline. Both must find every message valid, or the run fails.

The ratio is node's seconds over ssblab's (the goal of issue 16: at least 1.2). ``--threshold-study`` also times
``verify_local`` in this process on prefixes of the file around ``pool.PARALLEL_BYTES``: alone
(``workers=1``) against the pool forced with ``split_bytes`` (one split per core), which shows where the pool
starts to pay.

Full size: ``.venv/bin/python bench/verify_cli.py --threshold-study --json verify_cli.json`` (a few minutes)
Smoke: ``.venv/bin/python bench/verify_cli.py --messages 3000 --authors 40 --rounds 1``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchkit import CACHE, node_validate, run_process, seconds, ssblab_command, timed, write_figures

from ssblab import Keypair, box, create_message
from ssblab.core.encoding import encode_compact
from ssblab.generate import generate_network
from ssblab.pipeline import pool
from ssblab.pipeline.verify import verify_local

AWKWARD_TEXT = "naïve ’quotes’ 😀 \u2028 \x01\x1f tab\t 中文 עברית ありがとう"


def awkward_content(rng: random.Random, feeds: list[str]) -> Any:
    """One content that breaks naive serializers (floats, big integers, integer-like keys, unicode) or a box."""
    kind = rng.randrange(5)
    if kind == 0:
        return {"type": "measure", "values": [rng.uniform(-1e6, 1e6), rng.random() * 10.0 ** rng.randint(-30, 30),
                                              0.1, 1e21, 1.5e-7, 1e-6, 5e-324, 1.7976931348623157e308, -0.5]}
    if kind == 1:
        return {"type": "big", "n": rng.randrange(2**53, 2**64), "m": 2**53 + 1, "neg": -(2**60)}
    if kind == 2:
        return {"type": "keys", "b": 1, str(rng.randrange(2**33)): "big index", "10": "ten", "2": "two",
                "a": {"1": [], "0": {}}, "4294967295": "not an index"}
    if kind == 3:
        return {"type": "ünïcødé-typé", "text": AWKWARD_TEXT * rng.randint(1, 8)}
    recipients = rng.sample(feeds, rng.randint(1, min(7, len(feeds))))
    return box({"type": "post", "text": AWKWARD_TEXT, "n": [1.5, 1e21], "recps": recipients}, recipients,
               rng.randbytes)


def awkward_feeds(count: int, feeds: int, seed: int) -> Iterator[bytes]:
    """``count`` signed messages of ``feeds`` feeds with awkward contents and float timestamps, round robin."""
    rng = random.Random(seed)
    keys = [Keypair.generate(hashlib.sha256(f"bench.verify_cli/{seed}/{i}".encode()).digest())
            for i in range(feeds)]
    previous: list[Any] = [None] * feeds
    for i in range(count):
        at = i % feeds
        previous[at] = create_message(keys[at], awkward_content(rng, [k.id for k in keys]), previous=previous[at],
                                      timestamp=1_700_000_000_000 + i * 1.5 + rng.random())
        yield encode_compact(previous[at].value)


def hostile_file(work: Path, messages: int, authors: int, seed: int) -> Path:
    """The input (cached): a generated network with awkward feeds' messages interleaved, one in three."""
    path = work / f"hostile-{messages}-a{authors}-s{seed}.jsonl"
    if path.exists():
        return path
    work.mkdir(parents=True, exist_ok=True)
    awkward = awkward_feeds(messages // 3, max(1, authors // 4), seed)
    plain = (encode_compact(m.value) for m in generate_network(authors, messages - messages // 3, seed))
    part = path.with_suffix(".part")
    with part.open("wb") as out:
        for i in range(messages):
            line = next(awkward) if i % 3 == 2 else next(plain)
            out.write(line + b"\n")
    os.replace(part, path)
    return path


def whole_processes(path: Path, messages: int, rounds: int) -> dict[str, list[Any]]:
    """Every run of both contenders, alternating which goes first; each checked to find every message valid."""
    node = node_validate()
    if node is None:
        sys.exit("node and interop/node_modules are needed: run `make setup`")
    contenders = {"ssblab": [ssblab_command(), "verify", str(path), "--json"], "node ssb-validate": node}
    runs: dict[str, list[Any]] = {name: [] for name in contenders}
    for round_ in range(rounds):
        for name in list(contenders)[:: 1 if round_ % 2 == 0 else -1]:
            found = run_process(contenders[name], stdin=path if name != "ssblab" else None)
            valid = json.loads(found.stdout)["valid"] if name == "ssblab" else found.stdout.count(b'"valid":true')
            if valid != messages:
                sys.exit(f"{name} found {valid} of {messages} messages valid")
            runs[name].append(found)
    return runs


def verify_seconds(path: str, rounds: int, **options: Any) -> float:
    """The median seconds of ``verify_local(path, **options)``."""
    return timed(lambda: verify_local(path, **options), rounds)[1]


def threshold_study(path: Path, rounds: int) -> list[dict[str, Any]]:
    """``verify_local`` alone and in the forced pool on prefixes of ``path`` around ``pool.PARALLEL_BYTES``."""
    workers, rows = pool.cores(), []
    with path.open("rb") as source:
        lines = source.readlines()
    sizes = [s for s in (2**19, 2**20, 2**21, 2**22, 2**23) if s <= sum(map(len, lines))]
    for size in sizes:
        count, total = 0, 0
        while total < size:
            total, count = total + len(lines[count]), count + 1
        with tempfile.NamedTemporaryFile(suffix=".jsonl") as prefix:
            prefix.write(b"".join(lines[:count]))
            prefix.flush()
            alone = verify_seconds(prefix.name, rounds, workers=1)
            pooled = verify_seconds(prefix.name, rounds, split_bytes=total // workers + 1)
        rows.append({"bytes": total, "messages": count, "alone_s": alone, "pool_s": pooled,
                     "pool_speedup": alone / pooled})
        print(f"{total / 2**20:>8.1f} MiB {count:>8,} msgs  alone {seconds(alone):>9}  pool of {workers} "
              f"{seconds(pooled):>9}  speed-up {alone / pooled:.2f}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=30_000)
    parser.add_argument("--authors", type=int, default=200, help="feeds of the generated part")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--rounds", type=int, default=5, help="runs of each contender (medians are shown)")
    parser.add_argument("--work", type=Path, default=CACHE, help="where the input is cached")
    parser.add_argument("--threshold-study", action="store_true", help="also time verify_local alone and pooled "
                        "on prefixes around pool.PARALLEL_BYTES")
    parser.add_argument("--json", metavar="OUT", help="also write the figures to this file")
    args = parser.parse_args()

    path = hostile_file(args.work, args.messages, args.authors, args.seed)
    size, workers = path.stat().st_size, pool.cores()
    parallel = pool.is_parallel(path, workers)
    print(f"{args.messages:,} messages, {size / 2**20:.1f} MiB ({path}); pool.PARALLEL_BYTES "
          f"{pool.PARALLEL_BYTES / 2**20:.0f} MiB: ssblab verify uses "
          + (f"a pool of {workers} processes" if parallel else "one process (one core)"), flush=True)
    runs = whole_processes(path, args.messages, args.rounds)
    medians = {name: statistics.median(r.seconds for r in found) for name, found in runs.items()}
    cpu = {name: statistics.median(r.cpu for r in found) for name, found in runs.items()}
    ratio = medians["node ssb-validate"] / medians["ssblab"]
    print(f"{'whole process':<20}{'wall':>10}{'msgs/s':>10}{'CPU':>10}")
    for name, value in medians.items():
        print(f"{name:<20}{seconds(value):>10}{args.messages / value:>10,.0f}{seconds(cpu[name]):>10}")
    print(f"ssblab / node ssb-validate: {ratio:.2f}x (goal: at least 1.2x)")
    figures = {"messages": args.messages, "bytes": size, "parallel": parallel, "workers": workers,
               "parallel_bytes": pool.PARALLEL_BYTES, "rounds": args.rounds, "median_s": medians,
               "median_cpu_s": cpu, "msgs_per_s": {n: args.messages / v for n, v in medians.items()},
               "speedup_vs_node": ratio, "goal_met": ratio >= 1.2}
    if args.threshold_study:
        figures["threshold_study"] = threshold_study(path, args.rounds)
    write_figures(args.json, figures)


if __name__ == "__main__":
    main()
