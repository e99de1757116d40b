"""``ssblab demo``: the main job on the embedded default data.

Generate the default network (datasets/default.json), import it into a fresh store, verify the store from
scratch, and print a summary. Later stages (replication, Spark, analyses, report) join this pipeline.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from ssblab.cli.progress import progress, ticking
from ssblab.store import Store, read_jsonl
from ssblab.store.store import StoreStats
from ssblab.store.verify import verify_path

DEFAULT_SPEC = Path(__file__).resolve().parents[2] / "datasets" / "default.json"


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    demo = verbs.add_parser("demo", help="run the main job on the embedded default data")
    demo.add_argument("--out", type=Path, default=Path("out"), help="output folder (default ./out)")
    demo.add_argument("--spec", type=Path, default=DEFAULT_SPEC, help="dataset parameters (JSON)")
    demo.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ssblab.generate import generate_network, write_jsonl

    spec = json.loads(args.spec.read_text())
    args.out.mkdir(parents=True, exist_ok=True)
    jsonl, store_dir = args.out / f"{spec['name']}.jsonl", args.out / "store"
    shutil.rmtree(store_dir, ignore_errors=True)
    started = time.perf_counter()

    messages = generate_network(spec["authors"], spec["messages"], spec["seed"], **spec.get("options", {}))
    with progress("1/3 generating", total=spec["messages"]) as bar:
        write_jsonl(ticking(messages, bar), jsonl)
    with Store(store_dir) as store, progress("2/3 importing") as bar:
        imported = store.append(read_jsonl(jsonl), on_batch=bar.update)
        stats = store.stats()
    with progress("3/3 verifying") as bar:
        verified = verify_path(store_dir, on_message=bar.update)

    print(_summary(spec, stats, time.perf_counter() - started))
    print(f"\nimport: {imported.valid} stored, {imported.invalid} rejected; "
          f"verify: {verified.valid}/{verified.checked} valid")
    print(f"data: {jsonl} (JSONL), {store_dir} (store)")
    return 0 if imported.ok and verified.ok else 1


def _summary(spec: dict, stats: StoreStats, seconds: float) -> str:
    span_days = ((stats.last_timestamp or 0) - (stats.first_timestamp or 0)) / 86_400_000
    lines = [
        f"ssblab demo: the '{spec['name']}' network (seed {spec['seed']})",
        f"  feeds      {stats.feeds:>8}",
        f"  messages   {stats.messages:>8}   over {span_days:.0f} days of claimed time",
        f"  private    {stats.private:>8}",
        f"  forks      {stats.forks:>8}",
        "  types",
        *(f"    {kind:<14}{count:>6}" for kind, count in list(stats.types.items())[:10]),
        f"  time       {seconds:>8.1f} s",
    ]
    return "\n".join(lines)
