"""The graph analyses on a dataset written by ``ssblab export --format parquet``, opened with `open_dataset`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ssblab.dataset import open_dataset
from ssblab.friends import contact_edges, hops
from ssblab.generate import generate_network, write_jsonl
from ssblab.graph import FollowNetwork
from ssblab.pipeline.export import export_dataset


def test_exported_dataset_hops_and_tables(engine: Any, tmp_path: Path) -> None:
    messages = list(generate_network(25, 1500, seed=9))
    write_jsonl(iter(messages), tmp_path / "log.jsonl")
    export_dataset(tmp_path / "log.jsonl", tmp_path / "dataset", engine="local")
    ds = open_dataset(tmp_path / "dataset")
    net = FollowNetwork(engine, engine.from_arrow(ds.table("follows")), abouts=engine.from_arrow(ds.table("abouts")),
                        messages=engine.from_arrow(ds.table("messages", ["author", "timestamp"])))
    root = messages[0].value["author"]
    assert net.hops(root, 3) == hops(contact_edges(messages), root, 3)
    names = {(r["viewer"], r["about"]): r["rule"] for r in net.subjective_names([root]).to_pylist()}
    assert names and set(names.values()) <= {"own", "self", "given"}
    assert net.resource_attack_cliques(root, since=float("inf")) == []
    assert net.names() == {r["author"]: r["name"] for r in ds.table("names").to_pylist()}
