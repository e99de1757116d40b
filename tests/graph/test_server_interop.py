"""Hops on an ssb-fixtures log, on every engine, equal what a real ssb-server 16 (ssb-friends 4.4.10) answers.

Reuses the server fixture of `tests.friends.test_server_interop` (same dataset, loopback, always stopped); the
contacts come from the log itself, verified and read by the engine's pipeline, so the reader is checked too.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from ssblab.dataset import open_dataset
from ssblab.friends import DEFAULT_SERVER_MAX
from tests.friends.test_server_interop import Server, ask, differences, server  # noqa: F401  (server: fixture)
from tests.jsref import requires_node

pytestmark = [pytest.mark.interop, pytest.mark.slow, requires_node]


def test_hops_match_the_server(engine: Any, server: Server) -> None:  # noqa: F811
    spark = getattr(engine, "spark", None)
    net = open_dataset(server.path, engine="spark" if spark else "local", spark=spark).graph(engine=engine)
    root, _ = ask(server, [{}])
    out_degree = Counter(net.edges()["src"].to_pylist())
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
