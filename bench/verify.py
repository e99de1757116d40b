"""Validation throughput on one core: ssblab against raw PyNaCl signature checks and JS ssb-validate.

Every contender gets the same messages (a generated network, compact JSON lines, as they arrive from a peer or a
JSONL file) and is timed in the same run. ssblab and raw PyNaCl take turns on chunks of --chunk messages (the
one going first alternates), so that a burst of load from elsewhere on the machine hits both alike; their
figures are medians over every chunk of --repeat passes, and the ratio is the median of the chunks' own ratios.
JS runs once a pass, in node, before ssblab's chunks or after them by turns; its figure is the median of the
passes, and the ratio against it is the median of each pass's ssblab rate over that pass's JS rate.

- ssblab: bytes in, verdict out: strict parse, V8 encoding, id, shape, sequence/previous, signature.
- raw PyNaCl: only ``VerifyKey.verify(signing_bytes, signature)`` over precomputed bytes (keys cached): the
  per-core ceiling of any Python validator that uses libsodium.
- JS ssb-validate 4 (sodium-native) on the same lines, timed inside node (interop/js/validate.js --bench): once
  from parsed values (its own loop only) and once from the lines with JSON.parse, the input ssblab starts from.

Times are CPU seconds of the process (user + system), so that other load on the machine does not count.

    python bench/verify.py [--messages 50000] [--authors 200] [--repeat 5] [--chunk 2000] [--pure]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import nacl.signing
from benchkit import node_validate

from ssblab.core.compiled import PURE_PYTHON
from ssblab.core.encoding import encode_compact
from ssblab.core.message import Message, check_signature_format
from ssblab.core.refs import parse_feed_id
from ssblab.core.validate import FeedValidator
from ssblab.generate import generate_network

JS = "JS ssb-validate (parsed values)"
JS_PARSE = "JS ssb-validate (JSON.parse + validate)"


def pin_to_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


Item = tuple[bytes, bytes, bytes]  # public key, signed bytes, signature


def paired_pass(lines: list[bytes], items: list[Item], chunk: int) -> list[tuple[int, float, float]]:
    """(messages, ssblab seconds, raw PyNaCl seconds) of each chunk of one pass over the messages."""
    validator = FeedValidator()
    keys: dict[bytes, nacl.signing.VerifyKey] = {}

    def ours(part: list[bytes]) -> float:
        start = time.process_time()
        for line in part:
            validator.push(Message.from_json(line))
        return time.process_time() - start

    def raw(part: list[Item]) -> float:
        start = time.process_time()
        for public, signed, signature in part:
            key = keys.get(public)
            if key is None:
                key = keys[public] = nacl.signing.VerifyKey(public)
            key.verify(signed, signature)
        return time.process_time() - start

    times = []
    for turn, at in enumerate(range(0, len(lines), chunk)):
        part, part_items = lines[at : at + chunk], items[at : at + chunk]
        if turn % 2:
            raw_s, ours_s = raw(part_items), ours(part)
        else:
            ours_s, raw_s = ours(part), raw(part_items)
        times.append((len(part), ours_s, raw_s))
    assert validator.report.valid == len(lines), validator.report.to_json()["errors"][:3]
    return times


def js_rates(lines: list[bytes]) -> tuple[float, float] | None:
    """(messages/s from parsed values, messages/s from the JSON lines), or None without node."""
    node = node_validate()
    if node is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as tmp:
        tmp.write(b"\n".join(lines) + b"\n")
        tmp.flush()
        cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        taskset = ["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []
        with open(tmp.name, "rb") as stdin:
            out = subprocess.run([*taskset, *node, "--bench"], stdin=stdin,
                                 capture_output=True, check=True).stdout
    result = json.loads(out)
    return result["messages"] / result["seconds"], result["messages"] / result["seconds_with_parse"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--authors", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--chunk", type=int, default=2_000, help="messages per turn of ssblab and raw PyNaCl")
    parser.add_argument("--pure", action="store_true", help="no compiled fast paths (SSBLAB_PURE_PYTHON=1)")
    args = parser.parse_args()
    if args.pure:
        os.environ[PURE_PYTHON] = "1"  # the one switch, read at each call
    pin_to_one_core()

    messages = list(generate_network(args.authors, args.messages, seed=42))
    lines = [encode_compact(m.value) for m in messages]
    items = [(parse_feed_id(m.author), m.signing_bytes(), check_signature_format(m.value["signature"]))
             for m in messages]
    del messages
    print(f"{len(lines)} messages of {args.authors} feeds, {sum(map(len, lines)) / len(lines):.0f} bytes each "
          f"on average; one core; {args.repeat} passes", file=sys.stderr)

    chunks: list[tuple[float, float]] = []  # (ssblab msgs/s, raw msgs/s) of every chunk
    js_runs: dict[str, list[float]] = {JS: [], JS_PARSE: []}
    js_ratios: dict[str, list[float]] = {JS: [], JS_PARSE: []}
    for turn in range(args.repeat):
        js = js_rates(lines) if turn % 2 else None
        times = paired_pass(lines, items, args.chunk)
        if not turn % 2:
            js = js_rates(lines)
        chunks += [(count / ours_s, count / raw_s) for count, ours_s, raw_s in times]
        if js is not None:
            ours_pass = len(lines) / sum(ours_s for _, ours_s, _ in times)
            for name, rate in zip((JS, JS_PARSE), js, strict=True):
                js_runs[name].append(rate)
                js_ratios[name].append(ours_pass / rate)

    medians = {"ssblab": statistics.median(c[0] for c in chunks),
               "raw PyNaCl": statistics.median(c[1] for c in chunks),
               **{name: statistics.median(rates) for name, rates in js_runs.items() if rates}}
    ratios = {"raw PyNaCl": statistics.median(c[0] / c[1] for c in chunks),
              **{name: statistics.median(found) for name, found in js_ratios.items() if found}}
    print(f"{'validator':<42}{'msgs/s':>10}{'ssblab / it':>14}")
    for name, rate in medians.items():
        print(f"{name:<42}{rate:>10.0f}{ratios.get(name, 1.0):>14.2f}")
    quartiles = statistics.quantiles([c[0] / c[1] for c in chunks], n=4)
    print(f"ssblab / raw PyNaCl over {len(chunks)} chunks: quartiles {quartiles[0]:.2f} {quartiles[1]:.2f} "
          f"{quartiles[2]:.2f}", file=sys.stderr)
    if js_ratios[JS]:
        print(f"ssblab / JS per pass: {' '.join(f'{r:.2f}' for r in js_ratios[JS])}", file=sys.stderr)
    print(json.dumps({"messages": len(lines), **{k: round(v) for k, v in medians.items()},
                      **{f"ssblab/{name}": round(ratio, 3) for name, ratio in ratios.items()}}))


if __name__ == "__main__":
    main()
