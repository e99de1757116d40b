"""Benchmark: ssb-archive blobs against JSONL, zstd'd JSONL and the pipeline's Parquet, on the same generated feeds.

One run measures, on ``--messages`` generated messages (default 200,000):
- sizes: JSONL (one compact value per line, `ssblab.generate.write_jsonl`'s format), that JSONL with zstd
  (levels 3 and 9), Parquet with zstd of the `MESSAGES_SCHEMA` table, and the archive (every dictionary,
  block and Bundle blob);
- encoding time: the archive build against JSON serialization of the same values (ssblab's exact V8
  `encode_compact`, and orjson for reference);
- decoding time into the `MESSAGES_SCHEMA` Arrow table: from the archive, against parsing the JSONL into the
  same table. Two JSON paths: values JSONL (ids must be computed: parse, V8 re-encode, sha256, as
  `Message.from_json` does) and ``{key, value}`` JSONL (ids given: parse only).

Each encoder and decoder runs ``--rounds`` times (default 5), the order of the contenders reversed every other
round, and every time is the median of its rounds, printed twice: wall seconds (``*_s``) and CPU seconds of
this process (``*_cpu_s``). On a machine shared with other jobs the wall ratios swing with the load; the CPU
ratios (``cpu_*``) are steadier, and the ``paired_*`` ratios steadier still: the median of each round's own CPU
ratio (with the lowest and highest), since the contenders of a round run back to back.

Usage: ``.venv/bin/python bench/archive.py [--messages N] [--authors A] [--block-size B] [--seed S] [--rounds R]
[--json OUT]``
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from ssblab.archive.arrow import MESSAGES_SCHEMA, to_arrow
from ssblab.archive.bundle import build_archives
from ssblab.core.encoding import encode_compact
from ssblab.core.message import Message
from ssblab.generate import generate_network

CPU: dict[str, float] = {}  # CPU seconds of each timed step: on a shared machine, wall time also counts waiting
CPU_ROUNDS: dict[str, list[float]] = {}  # the same, round by round (for ratios paired within a round)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    return fn(), time.perf_counter() - start


def rounds(steps: dict[str, Callable[[], Any]], count: int) -> tuple[dict[str, Any], dict[str, float]]:
    """Each step's output and median wall seconds over ``count`` rounds (medians of CPU seconds go to `CPU`)."""
    walls: dict[str, list[float]] = {label: [] for label in steps}
    cpus: dict[str, list[float]] = {label: [] for label in steps}
    outputs: dict[str, Any] = {}
    for turn in range(count):
        for label in list(steps)[:: -1 if turn % 2 else 1]:
            start, cpu = time.perf_counter(), time.process_time()
            outputs[label] = steps[label]()
            cpus[label].append(time.process_time() - cpu)
            walls[label].append(time.perf_counter() - start)
    CPU.update({label: statistics.median(seconds) for label, seconds in cpus.items()})
    CPU_ROUNDS.update(cpus)
    return outputs, {label: statistics.median(seconds) for label, seconds in walls.items()}


def paired(baseline: str, contender: str) -> tuple[float, float, float]:
    """(median, lowest, highest) of baseline / contender CPU seconds, round by round: the two ran minutes apart at
    most, so a slow spell of the machine mostly cancels out."""
    ratios = [b / c for b, c in zip(CPU_ROUNDS[baseline], CPU_ROUNDS[contender], strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)


def rows_to_table(rows: list[tuple[Any, ...]]) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in MESSAGES_SCHEMA]
    return pa.Table.from_arrays(
        [pa.array(c, f.type) for c, f in zip(columns, MESSAGES_SCHEMA, strict=True)], schema=MESSAGES_SCHEMA
    )


def _row(key: str, value: dict[str, Any]) -> tuple[Any, ...]:
    content = value["content"]
    private = isinstance(content, str)
    kind = None if private else content.get("type")
    return (key, value["author"], value["sequence"], value["previous"], float(value["timestamp"]), None, kind,
            orjson.dumps(content).decode(), private, True, None)  # fmt: skip


def json_path_values(jsonl: bytes) -> pa.Table:
    """Values JSONL -> table; the id needs the signing encoding, so each line is a `Message.from_json`."""
    rows = []
    for line in jsonl.splitlines():
        msg = Message.from_json(line)
        rows.append(_row(msg.id, msg.value))
    return rows_to_table(rows)


def json_path_kvt(jsonl: bytes) -> pa.Table:
    """``{key, value}`` JSONL -> table: parse only."""
    rows = []
    for line in jsonl.splitlines():
        record = orjson.loads(line)
        rows.append(_row(record["key"], record["value"]))
    return rows_to_table(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--authors", type=int, default=100)
    parser.add_argument("--block-size", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5, help="runs of each encoder and decoder (medians)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    msgs, t_gen = timed(lambda: list(generate_network(args.authors, args.messages, args.seed)))
    feeds: dict[str, list[Message]] = defaultdict(list)
    for m in msgs:
        feeds[m.author].append(m)
    built, encode_s = rounds({
        "encode_json_v8": lambda: b"".join(encode_compact(m.value) + b"\n" for m in msgs),
        "encode_json_orjson": lambda: b"".join(orjson.dumps(m.value) + b"\n" for m in msgs),
        "encode_archive": lambda: build_archives(list(feeds.values()), args.block_size),
    }, args.rounds)
    jsonl, (archives, dicts) = built["encode_json_v8"], built["encode_archive"]
    t_json, t_orjson, t_encode = encode_s["encode_json_v8"], encode_s["encode_json_orjson"], encode_s["encode_archive"]
    kvt = b"".join(orjson.dumps({"key": m.id, "value": m.value}) + b"\n" for m in msgs)
    zstd3 = len(pa.Codec("zstd", compression_level=3).compress(jsonl, asbytes=True))
    zstd9 = len(pa.Codec("zstd", compression_level=9).compress(jsonl, asbytes=True))
    archive_size = sum(map(len, archives[0].dictionaries)) + sum(
        sum(map(len, a.blocks)) + len(a.bundle_blob) for a in archives
    )
    blobs = [b for a in archives for b in a.blocks]
    to_arrow(blobs[-1:], dicts)  # warm up: first use of pyarrow's compute kernels imports modules
    json_path_values(jsonl[: jsonl.index(b"\n") + 1])
    tables, decode_s = rounds({
        "decode_archive_arrow": lambda: to_arrow(blobs, dicts, valid=True),
        "decode_json_values": lambda: json_path_values(jsonl),
        "decode_json_kvt": lambda: json_path_kvt(kvt),
    }, args.rounds)
    table_archive, table_values, table_kvt = tables["decode_archive_arrow"], tables["decode_json_values"], tables[
        "decode_json_kvt"]
    t_decode, t_values, t_kvt = decode_s["decode_archive_arrow"], decode_s["decode_json_values"], decode_s[
        "decode_json_kvt"]
    assert table_archive.num_rows == table_values.num_rows == len(msgs)
    parquet = io.BytesIO()
    pq.write_table(table_kvt, parquet, compression="zstd")
    figures = {
        "messages": len(msgs), "feeds": len(feeds), "block_size": args.block_size, "rounds": args.rounds,
        "generate_s": t_gen,
        "jsonl_bytes": len(jsonl), "jsonl_zstd3_bytes": zstd3, "jsonl_zstd9_bytes": zstd9,
        "parquet_zstd_bytes": parquet.tell(), "archive_bytes": archive_size,
        "archive_vs_jsonl": archive_size / len(jsonl), "archive_vs_zstd3": archive_size / zstd3,
        "archive_vs_zstd9": archive_size / zstd9, "archive_vs_parquet": archive_size / parquet.tell(),
        "encode_archive_s": t_encode, "encode_json_v8_s": t_json, "encode_json_orjson_s": t_orjson,
        "decode_archive_arrow_s": t_decode, "decode_json_values_s": t_values, "decode_json_kvt_s": t_kvt,
        "decode_speedup_vs_values": t_values / t_decode, "decode_speedup_vs_kvt": t_kvt / t_decode,
        "encode_vs_json_v8": t_json / t_encode,
        **{f"{label}_cpu_s": seconds for label, seconds in CPU.items()},
        "cpu_decode_speedup_vs_values": CPU["decode_json_values"] / CPU["decode_archive_arrow"],
        "cpu_decode_speedup_vs_kvt": CPU["decode_json_kvt"] / CPU["decode_archive_arrow"],
        "cpu_encode_vs_json_v8": CPU["encode_json_v8"] / CPU["encode_archive"],
        **{
            f"paired_{name}": "{:.3f} ({:.3f} to {:.3f})".format(*paired(baseline, contender))
            for name, baseline, contender in (
                ("decode_speedup_vs_values", "decode_json_values", "decode_archive_arrow"),
                ("decode_speedup_vs_kvt", "decode_json_kvt", "decode_archive_arrow"),
                ("encode_vs_json_v8", "encode_json_v8", "encode_archive"),
            )
        },
    }  # fmt: skip
    for key, value in figures.items():
        shown = f"{value:,.3f}" if isinstance(value, float) else value if isinstance(value, str) else f"{value:,}"
        print(f"{key:32} {shown}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
