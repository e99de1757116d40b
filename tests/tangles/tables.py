"""Hand-made datasets for the tangle analyses: rows written as a Parquet dataset that `open_dataset` opens on
either engine, so data with faults (missing messages, gaps in feeds, invalid messages, cycles) reaches both.

``message_rows`` and ``causal_rows`` turn generated messages (``ssblab.generate``) or message DAGs
(``ssblab.tangles.synthetic``) into rows; ``write_dataset`` writes them, every other table empty.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ssblab.core.message import Message
from ssblab.core.schema import DATASET_VERSION, TABLES, arrow_schema, arrow_timestamps
from ssblab.pipeline import extract
from ssblab.pipeline.export import MANIFEST
from ssblab.pipeline.tables import TIMESTAMPS
from ssblab.tangles.causal import CausalMessage
from tests.tangles.edges import tangle_rows

Rows = dict[str, list[dict[str, Any]]]
MESSAGE_DEFAULTS = {"format": "classic", "type": "post", "content": "{}", "is_private": False, "valid": True}


def _table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    schema = arrow_schema(name)
    base = {f.name: pa.array([r.get(f.name) for r in rows], f.type) for f in schema if f.name not in TIMESTAMPS}
    columns = [arrow_timestamps(base[TIMESTAMPS[f.name]]) if f.name in TIMESTAMPS else base[f.name] for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def write_dataset(folder: Path, tables: Rows) -> Path:
    """A dataset folder holding ``tables`` (name -> rows; messages get `MESSAGE_DEFAULTS`), the rest empty."""
    for name in TABLES:
        rows = tables.get(name, [])
        if name == "messages":
            rows = [{**MESSAGE_DEFAULTS, **r} for r in rows]
        (folder / name).mkdir(parents=True)
        pq.write_table(_table(name, rows), folder / name / "part-00000.parquet")
    (folder / MANIFEST).write_text(json.dumps({"format": "ssblab-dataset", "version": DATASET_VERSION}))
    return folder


def message_rows(messages: Iterable[Message]) -> Rows:
    """The ``messages``, ``links`` and ``tangle_edges`` rows of generated messages."""
    found: Rows = {"messages": [], "links": [], "tangle_edges": []}
    for m in messages:
        value = m.value
        key = {"id": m.id, "author": value["author"], "timestamp": float(value["timestamp"])}
        found["messages"].append({**key, "sequence": value["sequence"], "previous": value["previous"],
                                  "content": json.dumps(value["content"])})
        if isinstance(value["content"], dict):
            found["links"] += [{**key, "target": t, "kind": kind, "path": path}
                               for t, kind, path in extract.links(value["content"])]
            found["tangle_edges"] += tangle_rows([m])
    return found


def causal_rows(messages: Iterable[CausalMessage]) -> Rows:
    """The ``messages`` and ``links`` rows of a message DAG (claimed times: the order given)."""
    found: Rows = {"messages": [], "links": []}
    for position, m in enumerate(messages):
        key = {"id": m.id, "author": m.author, "timestamp": float(position)}
        found["messages"].append({**key, "sequence": m.sequence})
        found["links"] += [{**key, "target": ref, "kind": "message", "path": f"$.refs[{i}]"}
                           for i, ref in enumerate(m.references)]
    return found
