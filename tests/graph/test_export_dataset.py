"""The graph analyses on a dataset written by ``ssblab export --format parquet`` (`ssblab.pipeline.export`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ssblab.friends import contact_edges, hops
from ssblab.generate import generate_network, write_jsonl
from ssblab.graph import FollowNetwork

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.slow  # the export verifies and derives every table first


def test_exported_dataset_hops_and_tables(spark: SparkSession, tmp_path: Path) -> None:
    export = pytest.importorskip("ssblab.pipeline.export", reason="the Parquet export is not in this checkout")
    messages = list(generate_network(25, 1500, seed=9))
    write_jsonl(iter(messages), tmp_path / "log.jsonl")
    export.export_parquet(spark, tmp_path / "log.jsonl", tmp_path / "dataset", progress=False)
    net = FollowNetwork.from_path(spark, tmp_path / "dataset")
    assert net.abouts is not None and net.messages is not None
    root = messages[0].value["author"]
    assert net.hops(root, 3) == hops(contact_edges(messages), root, 3)
    names = {(r["viewer"], r["about"]): r["rule"] for r in net.subjective_names([root]).collect()}
    assert names and set(names.values()) <= {"own", "self", "given"}
    assert net.resource_attack_cliques(root, since=float("inf")) == []
