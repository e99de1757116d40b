"""Validation throughput on one core: ssblab against raw PyNaCl signature checks and JS ssb-validate.

Every contender gets the same messages (a generated network, compact JSON lines, as they arrive from a peer or a
JSONL file) and is timed in the same run; each figure is the median of --repeat runs.

- ssblab: bytes in, verdict out: strict parse, V8 encoding, id, shape, sequence/previous, signature.
- raw PyNaCl: only ``VerifyKey.verify(signing_bytes, signature)`` over precomputed bytes (keys cached): the
  per-core ceiling of any Python validator that uses libsodium.
- JS ssb-validate 4 (sodium-native) on the same lines, timed inside node (interop/js/validate.js --bench): once
  from parsed values (its own loop only) and once from the lines with JSON.parse, the input ssblab starts from.

Times are CPU seconds of the process (user + system), so that other load on the machine does not count.

    python bench/verify.py [--messages 50000] [--authors 200] [--repeat 5]
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
from pathlib import Path

import nacl.signing

from ssblab.core.encoding import encode_compact
from ssblab.core.message import Message, check_signature_format
from ssblab.core.refs import parse_feed_id
from ssblab.core.validate import FeedValidator
from ssblab.generate import generate_network

ROOT = Path(__file__).resolve().parents[1]
JS = "JS ssb-validate (parsed values)"
JS_PARSE = "JS ssb-validate (JSON.parse + validate)"


def pin_to_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def ssblab_rate(lines: list[bytes]) -> float:
    validator = FeedValidator()
    start = time.process_time()
    for line in lines:
        validator.push(Message.from_json(line))
    seconds = time.process_time() - start
    assert validator.report.valid == len(lines), validator.report.to_json()["errors"][:3]
    return len(lines) / seconds


def raw_nacl_rate(items: list[tuple[bytes, bytes, bytes]]) -> float:
    keys: dict[bytes, nacl.signing.VerifyKey] = {}
    start = time.process_time()
    for public, signed, signature in items:
        key = keys.get(public)
        if key is None:
            key = keys[public] = nacl.signing.VerifyKey(public)
        key.verify(signed, signature)
    return len(items) / (time.process_time() - start)


def js_rates(lines: list[bytes]) -> tuple[float, float] | None:
    """(messages/s from parsed values, messages/s from the JSON lines), or None without node."""
    script = ROOT / "interop" / "js" / "validate.js"
    if not shutil.which("node") or not (ROOT / "interop" / "node_modules").exists():
        return None
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as tmp:
        tmp.write(b"\n".join(lines) + b"\n")
        tmp.flush()
        cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        taskset = ["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []
        with open(tmp.name, "rb") as stdin:
            out = subprocess.run([*taskset, "node", str(script), "--bench"], stdin=stdin,
                                 capture_output=True, check=True).stdout
    result = json.loads(out)
    return result["messages"] / result["seconds"], result["messages"] / result["seconds_with_parse"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--authors", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    pin_to_one_core()

    messages = list(generate_network(args.authors, args.messages, seed=42))
    lines = [encode_compact(m.value) for m in messages]
    items = [(parse_feed_id(m.author), m.signing_bytes(), check_signature_format(m.value["signature"]))
             for m in messages]
    del messages
    print(f"{len(lines)} messages of {args.authors} feeds, {sum(map(len, lines)) / len(lines):.0f} bytes each "
          f"on average; one core; median of {args.repeat} runs", file=sys.stderr)

    runs: dict[str, list[float]] = {"ssblab": [], "raw PyNaCl": [], JS: [], JS_PARSE: []}
    for _ in range(args.repeat):  # interleaved, so that machine noise hits every contender alike
        runs["ssblab"].append(ssblab_rate(lines))
        runs["raw PyNaCl"].append(raw_nacl_rate(items))
        if (js := js_rates(lines)) is not None:
            runs[JS].append(js[0])
            runs[JS_PARSE].append(js[1])

    medians = {name: statistics.median(rates) for name, rates in runs.items() if rates}
    ours = medians["ssblab"]
    print(f"{'validator':<34}{'msgs/s':>10}{'ssblab / it':>14}")
    for name, rate in medians.items():
        print(f"{name:<34}{rate:>10.0f}{ours / rate:>14.2f}")
    ratios = {f"ssblab/{name}": round(ours / rate, 3) for name, rate in medians.items() if name != "ssblab"}
    print(json.dumps({"messages": len(lines), **{k: round(v) for k, v in medians.items()}, **ratios}))


if __name__ == "__main__":
    main()
