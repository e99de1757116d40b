"""``ssblab demo``: the main job on the embedded default data.

Generate the default network (datasets/default.json) into the store of a local "origin" peer, serve it on
loopback and replicate every feed over EBT into a fresh store, verify that replica from scratch, and print a
summary. Later stages (Spark, analyses, figures, report) join this pipeline.
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
    from ssblab.replicate.loopback import replicate_stores

    spec = json.loads(args.spec.read_text())
    args.out.mkdir(parents=True, exist_ok=True)
    jsonl, origin_dir, store_dir = args.out / f"{spec['name']}.jsonl", args.out / "origin", args.out / "store"
    for folder in (origin_dir, store_dir):
        shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()

    messages = generate_network(spec["authors"], spec["messages"], spec["seed"], **spec.get("options", {}))
    with progress("1/4 generating", total=spec["messages"]) as bar:
        write_jsonl(ticking(messages, bar), jsonl)
    with Store(origin_dir) as origin, Store(store_dir) as replica:
        with progress("2/4 loading the origin peer", total=spec["messages"]) as bar:
            loaded = origin.append(read_jsonl(jsonl), on_batch=bar.update)
        with progress("3/4 replicating over EBT", total=spec["messages"]) as bar:
            replicated = replicate_stores(origin, replica, sorted(origin.heads()), on_stored=bar.update)
        stats = replica.stats()
    with progress("4/4 verifying the replica", total=spec["messages"]) as bar:
        verified = verify_path(store_dir, on_message=bar.update)

    print(_summary(spec, stats, time.perf_counter() - started))
    print(f"\norigin peer: {loaded.valid} messages; EBT replication: {replicated.messages} messages of "
          f"{replicated.feeds} feeds in {replicated.seconds:.1f} s; verify: {verified.valid}/{verified.checked} valid")
    print(f"data: {jsonl} (JSONL), {origin_dir} (the origin peer's store), {store_dir} (the replica)")
    ok = loaded.ok and verified.ok and not replicated.errors and verified.valid == loaded.valid
    return 0 if ok else 1


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
