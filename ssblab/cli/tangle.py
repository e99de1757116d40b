"""``ssblab tangle --data DIR --root MSGID``: one thread in causal order, read from the Parquet tables.

Reads ``DIR/tangle_edges`` and ``DIR/messages`` (each a Parquet file or a directory of them, with or without the
``.parquet`` suffix) with pyarrow, keeping only the thread's rows, so no Spark session is started.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ssblab.core.errors import SsbError
from ssblab.tangles.thread import Tangle, causal_sort, check_tangle, heads, lamport_depths, tangle_from_edges

__all__ = ["MissingTable", "load_tangle", "register"]


class MissingTable(SsbError):
    """The data directory lacks a table the verb needs."""

    code = "missing-table"


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    tangle = verbs.add_parser("tangle", help="print a thread (or another tangle) in causal order")
    tangle.add_argument("--data", type=Path, required=True, help="directory of the Parquet tables")
    tangle.add_argument("--root", required=True, help="the root message id (%%….sha256)")
    tangle.add_argument("--name", default="thread", help="the tangle: thread (root/branch) or a content.tangles key")
    tangle.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    tangle.set_defaults(run=_run)


def _table_path(data: Path, table: str) -> Path:
    for candidate in (data / table, data / f"{table}.parquet"):
        if candidate.exists():
            return candidate
    raise MissingTable(f"tangle: no {table} table in {data} (looked for {table}/ and {table}.parquet)")


def _read(data: Path, table: str, column: str, values: list[str]) -> list[dict[str, Any]]:
    import pyarrow.dataset as ds

    dataset = ds.dataset(_table_path(data, table), format="parquet")
    return dataset.to_table(filter=ds.field(column).isin(values)).to_pylist()  # type: ignore[no-any-return]


def load_tangle(data: Path, root: str, name: str = "thread") -> tuple[Tangle, dict[str, str]]:
    """The tangle from the tables in ``data``, and each member's author."""
    rows = [r for r in _read(data, "tangle_edges", "root", [root]) if r["tangle"] == name]
    ids = sorted({root} | {r["id"] for r in rows})
    messages = {m["id"]: m for m in _read(data, "messages", "id", ids)}
    root_message = messages.get(root)
    received = {i: m["received"] for i, m in messages.items() if m.get("received") is not None}
    tangle = tangle_from_edges(rows, root, name=name, received=received,
                               root_timestamp=None if root_message is None else root_message["timestamp"])
    authors = {i: m["author"] for i, m in messages.items()} | {r["id"]: r["author"] for r in rows}
    return tangle, authors


def _run(args: argparse.Namespace) -> int:
    tangle, authors = load_tangle(args.data, args.root, args.name)
    order, depths, report = causal_sort(tangle), lamport_depths(tangle), check_tangle(tangle)
    if args.json:
        print(json.dumps({
            "root": tangle.root, "tangle": tangle.name, "order": order, "depths": depths,
            "heads": heads(tangle), "missing": report.missing, "is_trdag": report.is_trdag,
        }))
        return 0
    if not report.root_present:
        print(f"(root {tangle.root} is not in the data)")
    for message_id in order:
        when = datetime.fromtimestamp(tangle.timestamps[message_id] / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
        depth = depths.get(message_id)
        print(f"{'?' if depth is None else depth:>4}  {when}  {message_id}  {authors.get(message_id, '')}")
    for missing, by in report.missing.items():
        print(f"missing: {missing} (linked from {len(by)} message{'s' if len(by) != 1 else ''})")
    print(f"{len(order)} messages, heads: {', '.join(heads(tangle))}")
    return 0
