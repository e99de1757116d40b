"""Spark hops on an ssb-fixtures log equal what a real ssb-server 16 (ssb-friends 4.4.10) answers, feed by feed.

Reuses the server fixture of `tests.friends.test_server_interop` (same dataset, loopback, always stopped); the
contacts come from the log itself through `ssblab.graph.load_contacts`, so the reader is checked too.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import pytest

from ssblab.friends import DEFAULT_SERVER_MAX
from ssblab.graph import FollowNetwork, load_contacts
from tests.friends.test_server_interop import Server, ask, differences, server  # noqa: F401  (server: fixture)
from tests.jsref import requires_node

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.interop, pytest.mark.slow, requires_node]


def test_spark_hops_match_the_server(spark: SparkSession, server: Server) -> None:  # noqa: F811
    net = FollowNetwork(load_contacts(spark, server.path))
    root, _ = ask(server, [{}])
    out_degree = Counter(row["src"] for row in net.edges.collect())
    others = sorted((f for f in out_degree if f != root), key=lambda f: (-out_degree[f], f))[:4]
    queries = [{"start": root, "max": m} for m in (3, 2, 1)]
    queries += [{"start": other, "max": m} for other in others for m in (2, 3)]
    _, answers = ask(server, queries)
    compared = negative = 0
    for query, theirs in zip(queries, answers, strict=True):
        start, max_hops = query["start"], query["max"]
        mine = net.hops(start, max_hops, server_max=DEFAULT_SERVER_MAX if start == root else None)
        assert differences(mine, theirs) == {}, f"friends.hops({query}) differs (mine, server's)"
        compared += len(theirs)
        negative += sum(value < 0 for value in theirs.values())
    print(f"friends.hops: {len(queries)} queries, {compared} feed values matched, {negative} of them negative")
    assert compared > 300 and negative > 10  # the comparison covered blocks and unfollows, not just follows
