"""The main job's analyses of one Parquet dataset, each a report `Section` with its figures.

Strategy: every function asks the library (`ssblab.graph`, `ssblab.tangles`, `ssblab.archive`) one or two
questions, turns the answers into a few facts, a small table and Vega-Lite figures, and returns them as data.
The facts are what a person would check first (how many, how far, what changes); the numbers come from the
library, never from this module's own reimplementation of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ssblab import viz
from ssblab.graph.labels import short_id
from ssblab.report.html import Section, Table
from ssblab.viz.charts import DAY_MS

if TYPE_CHECKING:
    from ssblab.core.message import Message
    from ssblab.dataset import Dataset
    from ssblab.graph.network import FollowNetwork
    from ssblab.tangles.analysis import Tangles

__all__ = ["archives_section", "follow_graph_section", "moderation_section", "overview_section", "tangles_section"]



Label = Callable[[str], str]  # a feed id -> how a person reads it (its name and the start of its key)


def overview_section(ds: Dataset) -> Section:
    """What the dataset holds: messages, feeds, validity, content types over time."""
    frame = ds.table("messages", ["author", "timestamp", "type", "is_private", "valid"]).to_pandas()
    kinds = frame["type"].fillna("private").value_counts()
    span = (frame["timestamp"].max() - frame["timestamp"].min()) / DAY_MS if len(frame) else 0.0
    facts = [("messages", len(frame)), ("feeds", frame["author"].nunique()),
             ("valid", int(frame["valid"].sum())), ("private", int(frame["is_private"].sum())),
             ("claimed time span (days)", round(float(span)))]
    table = Table(["type", "messages"], [(kind, int(n)) for kind, n in kinds.items()], "messages by content type")
    return Section("The dataset", "Every message was verified on Spark (signature, id, shape, hash chain) before "
                   "export; the tables below are read from the exported Parquet dataset.", facts, [table],
                   {"message-types": viz.message_types_over_time(frame[["timestamp", "type"]])})


def _by_hops(hops: dict[str, int], max_hops: int) -> Any:
    import pandas as pd

    counts = Counter(v for v in hops.values() if 0 <= v <= max_hops)
    cumulative, total = [], 0
    for level in range(max_hops + 1):
        total += counts.get(level, 0)
        cumulative.append({"hops": level, "feeds": total})
    return pd.DataFrame(cumulative)


def _degree_counts(degrees: Any) -> Any:
    import pandas as pd

    parts = [degrees[column].value_counts().rename_axis("degree").reset_index(name="feeds").assign(direction=name)
             for column, name in (("in_degree", "followers"), ("out_degree", "follows"))]
    return pd.concat(parts, ignore_index=True)


def follow_graph_section(net: FollowNetwork, root: str, *, max_hops: int = 3, label: Label = short_id) -> Section:
    """The follow graph from one root: hops, replication set, degrees, PageRank, components."""
    hops = net.hops(root, max_hops)
    by_hops = _by_hops(hops, max_hops)
    degrees = net.degrees().to_pandas()
    components = len(set(net.components()["component"].to_pylist()))
    ranks = net.pagerank().sort_by([("pagerank", "descending"), ("id", "ascending")]).slice(0, 5).to_pylist()
    facts = [("root (the most active feed)", label(root)), ("feeds", len(degrees)),
             ("follows", int(degrees["out_degree"].sum())), ("mutual follows", net.mutual_follows().num_rows),
             ("connected components", components),
             *((f"feeds within {row.hops} hops", int(row.feeds)) for row in by_hops.itertuples()),
             ("feeds the root's hops mark as blocked", sum(1 for v in hops.values() if v < 0))]
    table = Table(["feed", "PageRank"], [(label(r["id"]), round(r["pagerank"], 4)) for r in ranks],
                  "the most central feeds (PageRank, 10 iterations)")
    return Section("The follow graph", "Who follows whom, and how far the root's replication reaches: SSB "
                   "replicates the feeds within a few follow hops (ssb-friends semantics, blocks respected).",
                   facts, [table], {"replication-growth": viz.replication_growth(by_hops),
                                    "degree-distribution": viz.degree_distribution(_degree_counts(degrees))})


def moderation_section(net: FollowNetwork, root: str, *, since: float, label: Label = short_id) -> Section:
    """What-if blocks, shared moderation (§6.3) and the resource-attack cliques (§8.6) for the root."""
    replicated = net.replication_set(root)
    top = [row for row in net.pagerank().sort_by([("pagerank", "descending"), ("id", "ascending")]).to_pylist()
           if row["id"] in replicated - {root}][:1]
    rows: list[Sequence[Any]] = []
    facts: list[tuple[str, Any]] = [("replication set at 2 hops", len(replicated))]
    if top:
        target = top[0]["id"]
        whatif = net.whatif(root, [(root, target)])
        facts.append((f"if the root blocked {label(target)} (its most central friend), feeds leaving",
                      len(whatif.leaving)))
        rows += [("block " + label(target), label(feed), old, new) for feed, (old, new) in
                 list(whatif.changes.items())[:8]]
    shared = net.shared_moderation(root, min_friends=2)
    facts += [("trusted peers (followed by the root and 2+ of its friends)", len(shared.trusted)),
              ("blocks adopted from them", len(shared.adopted)),
              ("feeds leaving after adopting them", len(shared.effect.leaving))]
    cliques = net.resource_attack_cliques(root, since=since)
    facts.append(("dense recent cliques within 2 hops (§8.6)", len(cliques)))
    table = Table(["scenario", "feed", "hops before", "hops after"], rows, "how the root's hops change")
    clique_table = Table(["members", "density", "messages"],
                         [(len(c.feeds), round(c.density, 2), c.messages) for c in cliques[:5]],
                         "cliques ranked by the size of their logs")
    return Section("Moderation scenarios", "Blocks change what a peer replicates. These are what-if answers: "
                   "nothing is published.", facts, [table, clique_table])


def tangles_section(tangles: Tangles, *, label: Label = short_id) -> Section:
    """Threads: how many, how concurrent, how deep, and which links point at messages nobody has."""
    import pyarrow.compute as pc

    is_thread = pc.field("tangle") == "thread"
    heads = tangles.heads().filter(is_thread)
    per_root = tangles.depths().filter(is_thread).group_by("root").aggregate([("depth", "max"), ("id", "count")])
    deepest = per_root.sort_by([("depth_max", "descending"), ("id_count", "descending"), ("root", "ascending")])
    facts = [("threads", heads.num_rows),
             ("threads with concurrent heads", heads.filter(pc.field("concurrent")).num_rows),
             ("links to messages not in the dataset", tangles.dangling_links().filter(is_thread).num_rows)]
    rows = []
    for row in deepest.slice(0, 5).to_pylist():
        author = tangles.thread(row["root"]).authors.get(row["root"])
        rows.append((label(author) if author else "(not in the dataset)", short_id(row["root"]), row["id_count"],
                     row["depth_max"]))
    table = Table(["thread started by", "root message", "messages", "Lamport depth"], rows, "the deepest threads")
    return Section("Threads and causal order", "Replies link to the messages they answer; those links, not the "
                   "claimed timestamps, order a thread (a tangle).", facts, [table])


def archives_section(feeds: Sequence[Sequence[Message]], jsonl: Path, out: Path) -> Section:
    """Archive every feed (ssb-archive blobs and Bundles in ``out``), verify each by rebuilding it, compare sizes."""
    import pandas as pd

    from ssblab.archive import build_archives, open_archive, verify_by_rebuild, write_archives
    from ssblab.archive.folder import stored_bytes

    archives, _ = build_archives(feeds)
    write_archives(archives, out)
    written = open_archive(out)
    by_author = {feed[0].author: feed for feed in feeds}
    verified = sum(verify_by_rebuild(a.bundle, by_author[a.feed], written.fetch).messages for a in archives)
    archive_bytes = stored_bytes(written)
    json_bytes = jsonl.stat().st_size
    sizes = pd.DataFrame({"format": ["JSONL", "archive blobs"], "bytes": [json_bytes, archive_bytes]})
    facts = [("feeds archived", len(by_author)), ("Bundles (archive messages)", len(archives)),
             ("messages verified by rebuilding the blobs", verified),
             ("archive size / JSONL size", f"{archive_bytes / json_bytes:.0%}")]
    return Section("Archives", "Old feeds shared as compact ssb-archive blobs; a peer that has the messages "
                   "rebuilds the blobs and compares their ids.", facts, [],
                   {"archive-sizes": viz.size_comparison(sizes, title="The dataset as JSONL and as archives")})
