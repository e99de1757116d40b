"""The follow graph: ssb-friends hops, replication, analytics, moderation scenarios and the about directory.

`FollowNetwork` is the one API, on the local engine (DuckDB, Arrow, numpy, scipy) or on Spark (with GraphFrames),
with the same answers: ``ssblab.open_dataset(path).graph()`` gives one. Underneath: `queries` (the SQL both engines
run), `packed` (the numbered graph the iterative algorithms run on), `traversal` (hops), `moderation` (what-ifs,
shared moderation, resource-attack cliques), and the engines `local` and `spark`. Names resolve on first use, so
importing this package loads neither numpy nor pyspark.
"""

from __future__ import annotations

from ssblab.core.lazy import lazy_names

_HOME = {
    **dict.fromkeys(["DatasetError", "GraphError"], "errors"),
    **dict.fromkeys(["FollowNetwork", "GraphEngine", "graph_engine"], "network"),
    **dict.fromkeys(["Change", "Clique", "SharedModeration", "WhatIf", "rank_cliques"], "moderation"),
    **dict.fromkeys(["Coverage", "hops_table"], "traversal"),
    **dict.fromkeys(["PackedGraph", "pack_arrays"], "packed"),
}

__all__ = sorted(_HOME)

__getattr__, __dir__ = lazy_names(__name__, _HOME)
