"""``export_jsonl`` with its row checks against writing the stored rows as they are (what export did before it
checked them), on the embedded default store.

Run from the repository root: ``.venv/bin/python -m bench.export_jsonl [--rounds 5]``. Each row of the store is
parsed and its id, author and sequence compared with the row's before it is written (docs/security.md, tampered
rows); the baseline writes the compact values straight from SQLite. Both write the same bytes (checked). Prints the
median of ``--rounds`` runs of each and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ssblab.datasets import default_store
from ssblab.store import Store, export_jsonl


def _raw(store: Store, out: Path) -> None:
    with open(out, "wb") as f:
        for _, value, _ in store.log():
            f.write(value + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="ssblab-bench-export-"))
    contenders: dict[str, Callable[[Store, Path], object]] = {
        "raw rows (baseline)": _raw, "export_jsonl (rows checked)": lambda s, p: export_jsonl(s, p)}
    with Store(default_store(), read_only=True) as store:
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for round_ in range(args.rounds):
            for number, (name, run) in enumerate(contenders.items()):
                started = time.perf_counter()
                run(store, out / f"{round_}-{number}.jsonl")
                times[name].append(time.perf_counter() - started)
        count = store.count()
    assert len({path.read_bytes() for path in out.glob("*.jsonl")}) == 1  # every run wrote the same bytes
    base = statistics.median(times["raw rows (baseline)"])
    print(f"{count} messages, median of {args.rounds} rounds")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"  {name:30} {median * 1000:8.1f} ms  {median / base:5.2f}x  ({median / count * 1e6:.1f} µs/message)")


if __name__ == "__main__":
    main()
