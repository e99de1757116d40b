"""Validation throughput on one core: ssblab against raw PyNaCl signature checks and JS ssb-validate.

Every contender gets the same messages (a generated network, compact JSON lines, as they arrive from a peer or a
JSONL file) and is timed in the same run; each figure is the median of --repeat runs.

- ssblab: bytes in, verdict out: strict parse, V8 encoding, id, shape, sequence/previous, signature.
- raw PyNaCl: only ``VerifyKey.verify(signing_bytes, signature)`` over precomputed bytes (keys cached): the
  per-core ceiling of any Python validator that uses libsodium.
- JS ssb-validate 4 (sodium-native) on the same lines, timed inside node (interop/js/validate.js --bench).

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


def pin_to_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def ssblab_rate(lines: list[bytes]) -> float:
    validator = FeedValidator()
    start = time.perf_counter()
    for line in lines:
        validator.push(Message.from_json(line))
    seconds = time.perf_counter() - start
    assert validator.report.valid == len(lines), validator.report.to_json()["errors"][:3]
    return len(lines) / seconds


def raw_nacl_rate(items: list[tuple[bytes, bytes, bytes]]) -> float:
    keys: dict[bytes, nacl.signing.VerifyKey] = {}
    start = time.perf_counter()
    for public, signed, signature in items:
        key = keys.get(public)
        if key is None:
            key = keys[public] = nacl.signing.VerifyKey(public)
        key.verify(signed, signature)
    return len(items) / (time.perf_counter() - start)


def js_rate(lines: list[bytes]) -> float | None:
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
    return result["messages"] / result["seconds"]


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

    runs: dict[str, list[float]] = {"ssblab": [], "raw PyNaCl": [], "JS ssb-validate": []}
    for _ in range(args.repeat):  # interleaved, so that machine noise hits every contender alike
        runs["ssblab"].append(ssblab_rate(lines))
        runs["raw PyNaCl"].append(raw_nacl_rate(items))
    js = [js_rate(lines) for _ in range(max(1, args.repeat // 2))]
    runs["JS ssb-validate"] = [r for r in js if r is not None]

    medians = {name: statistics.median(rates) for name, rates in runs.items() if rates}
    ours = medians["ssblab"]
    print(f"{'validator':<18}{'msgs/s':>10}{'ssblab / it':>14}")
    for name, rate in medians.items():
        print(f"{name:<18}{rate:>10.0f}{ours / rate:>14.2f}")
    print(json.dumps({"messages": len(lines), **{k: round(v) for k, v in medians.items()},
                      "ratio_vs_raw_pynacl": round(ours / medians["raw PyNaCl"], 3),
                      "ratio_vs_js": round(ours / medians["JS ssb-validate"], 3) if "JS ssb-validate" in medians
                      else None}))


if __name__ == "__main__":
    main()
