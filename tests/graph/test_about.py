"""The about directory (§3.1, Figure 3) and the subjective reader on every engine: two viewers, one identity, two
names."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from ssblab.friends import FOLLOW
from ssblab.graph import FollowNetwork
from ssblab.graph.errors import DatasetError

ABOUTS = [
    # id, author, sequence, timestamp, about, name, image, description
    ("%1", "T", 1, 1.0, "T", "tee", "&img", None),
    ("%2", "T", 2, 5.0, "T", "tea", None, "hello"),  # renames itself; sets no image, so &img stays
    ("%3", "F", 1, 2.0, "T", "troll", None, None),
    ("%4", "G", 1, 3.0, "T", "gardener", None, None),
    ("%5", "A", 1, 4.0, "G", "gee", None, None),
    ("%6", "G", 2, 6.0, "G", "g", None, None),
]
COLUMNS = ["id", "author", "sequence", "timestamp", "about", "name", "image", "description"]


def test_directory_and_two_viewers(engine: Any) -> None:
    abouts = pa.Table.from_pylist([dict(zip(COLUMNS, row, strict=True)) for row in ABOUTS])
    # A follows F only, so never replicates T's own messages; B reaches T through G.
    net = FollowNetwork.from_edges({("A", "F"): FOLLOW, ("B", "G"): FOLLOW, ("G", "T"): FOLLOW}, engine=engine,
                                   abouts=abouts)
    rows = {(r["about"], r["author"], r["attribute"]): (r["value"], r["is_self"])
            for r in net.about_directory().to_pylist()}
    assert rows[("T", "T", "name")] == ("tea", True)
    assert rows[("T", "T", "image")] == ("&img", True)
    assert rows[("T", "F", "name")] == ("troll", False)
    assert len(rows) == 7
    names = {r["about"]: (r["self_chosen"], r["given"]) for r in net.self_and_given().to_pylist()}
    assert names["T"] == ("tea", ["gardener", "troll"])
    assert net.names() == {"T": "tea", "G": "g"}
    seen = {(r["viewer"], r["about"]): (r["value"], r["rule"]) for r in net.subjective_names(["A", "B"]).to_pylist()}
    assert seen == {("A", "T"): ("troll", "given"), ("A", "G"): ("gee", "own"),
                    ("B", "T"): ("tea", "self"), ("B", "G"): ("g", "self")}


def test_a_graph_without_abouts_says_so(engine: Any) -> None:
    with pytest.raises(DatasetError, match="about directory: the dataset has no abouts table"):
        FollowNetwork.from_edges({("A", "F"): FOLLOW}, engine=engine).about_directory()
