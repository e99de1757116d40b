"""``ssblab demo``: the main job on the embedded default data.

Generate the default network (datasets/default.json) into the store of a local "origin" peer, serve it on
loopback and replicate every feed over EBT into a fresh store, verify that replica on Spark while exporting it as
a Parquet dataset, run the graph, moderation, thread and archive analyses on that dataset, and write their
figures and an HTML report into the output folder. Every stage shows a progress bar on a terminal.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ssblab import __version__
from ssblab.cli.extras import require
from ssblab.cli.progress import progress, ticking
from ssblab.core.schema import TABLES
from ssblab.datasets import network_spec, spec_path
from ssblab.pipeline.sources import read_source
from ssblab.store import Store
from ssblab.store.store import StoreStats

__all__ = ["STAGES", "register", "run"]

STAGES = 9


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    demo = verbs.add_parser("demo", help="run the main job on the embedded default data")
    demo.add_argument("--out", type=Path, default=Path("out"), help="output folder (default ./out)")
    demo.add_argument("--spec", type=Path, help="dataset parameters (JSON; default datasets/default.json)")
    demo.add_argument("--master", help="Spark master URL (default: local mode)")
    demo.add_argument("--engine", choices=["local", "spark"],
                      help="where the analyses run: local (DuckDB, Arrow, scipy; the default) or spark; the verify "
                      "and export stage runs on Spark either way")
    demo.set_defaults(run=run)


def _stage(n: int, what: str) -> str:
    return f"{n}/{STAGES} {what}"


def run(args: argparse.Namespace) -> int:
    require("ssblab demo (its verify and export stage runs on Spark; its report draws charts)", "pyspark",
            "altair", "vl_convert")
    from ssblab.generate import GeneratedNetwork, write_jsonl
    from ssblab.replicate.loopback import replicate_stores

    spec = json.loads((args.spec or spec_path()).read_text())
    network = GeneratedNetwork(network_spec(spec))
    out = args.out
    jsonl, origin_dir, store_dir = out / f"{spec['name']}.jsonl", out / "origin", out / "store"
    for folder in (origin_dir, store_dir, out / "archive"):
        shutil.rmtree(folder, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    with progress(_stage(1, "generating"), total=spec["messages"]) as bar:
        write_jsonl(ticking(network.messages(), bar), jsonl)
    with Store(origin_dir) as origin, Store(store_dir) as replica:
        with progress(_stage(2, "loading the origin peer"), total=spec["messages"]) as bar:
            loaded = origin.append(read_source(jsonl), on_batch=bar.update)
        with progress(_stage(3, "replicating over EBT"), total=spec["messages"]) as bar:
            replicated = replicate_stores(origin, replica, sorted(origin.heads()), on_stored=bar.update)
        stats = replica.stats()
        feeds = [list(replica.feed(feed)) for feed in sorted(replica.heads())]
    print(_summary(spec, stats))
    print(f"  origin peer {loaded.valid} messages; EBT replication {replicated.messages} messages of "
          f"{replicated.feeds} feeds in {replicated.seconds:.1f} s")

    report, valid = _analyse(args, spec, network.ids[0], store_dir, jsonl, feeds)
    report_path = _write_report(report, out)
    print(f"\nverified on Spark: {valid}/{loaded.valid} valid; done in {time.perf_counter() - started:.0f} s")
    print(f"  data     {jsonl} (JSONL), {origin_dir} (origin peer), {store_dir} (replica)")
    print(f"  parquet  {out / 'parquet'} (tables: {', '.join(TABLES)})")
    print(f"  archive  {out / 'archive'} (ssb-archive Bundles and blobs of every feed)")
    print(f"  figures  {out / 'figures'}")
    print(f"  report   {report_path}")
    ok = loaded.ok and not replicated.errors and valid == loaded.valid == stats.messages
    return 0 if ok else 1


def _analyse(args: argparse.Namespace, spec: dict[str, Any], root: str, store_dir: Path, jsonl: Path,
             feeds: list[list[Any]]) -> tuple[Any, int]:
    """Stage 4 on Spark (verify and export), then stages 5-8: each analysis of the exported dataset, on the local
    engine (or on Spark with ``--engine spark``)."""
    import pyarrow.compute as pc

    from ssblab.dataset import open_dataset
    from ssblab.graph.labels import feed_label
    from ssblab.pipeline.export import export_parquet
    from ssblab.pipeline.progress import job_progress
    from ssblab.pipeline.session import spark_session
    from ssblab.report import Report
    from ssblab.report import analyses as an

    spark = spark_session(args.master, app_name="ssblab-demo")
    parquet = args.out / "parquet"
    with job_progress(spark, _stage(4, "verifying on Spark and exporting Parquet")):
        export_parquet(spark, store_dir, parquet, progress=False)
    ds = open_dataset(parquet, engine=args.engine or "local", spark=spark if args.engine == "spark" else None)
    stamps = ds.table("messages", ["timestamp", "valid"])
    valid = pc.sum(stamps["valid"]).as_py() or 0
    last = pc.max(stamps["timestamp"]).as_py()
    net = ds.graph()
    names = net.names() if net.abouts is not None else {}
    label = lambda feed: feed_label(feed, names)  # noqa: E731  (one line, used by three sections)
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("the dataset and the follow graph", lambda: [an.overview_section(ds),
                                                     an.follow_graph_section(net, root, label=label)]),
        ("moderation scenarios", lambda: [an.moderation_section(net, root, since=last - 30 * an.DAY_MS,
                                                                label=label)]),
        ("threads and causal order", lambda: [an.tangles_section(ds.tangles(), label=label)]),
        ("archives", lambda: [an.archives_section(feeds, jsonl, args.out / "archive")]),
    ]
    sections = []
    for n, (what, step) in enumerate(steps, start=5):
        with progress(_stage(n, what), total=1, unit=" section") as bar:
            sections += step()
            bar.update()
    title = "ssblab: the default network"
    subtitle = (f"{valid:,} verified messages of {len(feeds)} feeds, replicated over EBT from a local peer, "
                f"verified on Spark {spark.version} and analysed on the {ds.engine.name} engine.")
    provenance = [("dataset", f"'{spec['name']}': {spec['authors']} authors, {spec['messages']:,} messages"),
                  ("seed", str(spec["seed"])), ("ssblab", __version__), ("Spark", spark.version),
                  ("analysis engine", ds.engine.name), ("made", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))]
    return Report(title, subtitle, sections, footer="Made by ssblab demo.", provenance=provenance), valid


def _write_report(report: Any, out: Path) -> Path:
    """Each figure as PNG and SVG under ``out/figures``, and the report as one offline HTML page."""
    from ssblab import viz
    from ssblab.report import render

    figures = {name: chart for section in report.sections for name, chart in section.figures.items()}
    with progress(f"{STAGES}/{STAGES} writing figures and the report", total=len(figures) + 1,
                  unit=" files") as bar:
        for name, chart in figures.items():
            viz.save(chart, out / "figures" / name, formats=("png", "svg"))
            bar.update()
        path = out / "report.html"
        path.write_text(render(report), encoding="utf-8")
        bar.update()
    return path


def _summary(spec: dict, stats: StoreStats) -> str:
    span_days = ((stats.last_timestamp or 0) - (stats.first_timestamp or 0)) / 86_400_000
    lines = [
        f"ssblab demo: the '{spec['name']}' network (seed {spec['seed']})",
        f"  feeds      {stats.feeds:>8}",
        f"  messages   {stats.messages:>8}   over {span_days:.0f} days of claimed time",
        f"  private    {stats.private:>8}",
        f"  forks      {stats.forks:>8}",
        "  types",
        *(f"    {kind:<14}{count:>6}" for kind, count in list(stats.types.items())[:10]),
    ]
    return "\n".join(lines)
