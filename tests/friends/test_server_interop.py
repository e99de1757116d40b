"""A real ssb-server 16 (ssb-friends 4.4.10) on an ssb-fixtures log answers friends.hops exactly as `hops` does.

The server runs on loopback on a free port and is always stopped in the fixture's teardown (`tests.ssbserver`);
the queries go through ``interop/js/hops.js``, which connects with the server's own secret (the master may
call ``friends.hops``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ssblab.friends import DEFAULT_SERVER_MAX, contact_edges, hops
from ssblab.pipeline.sources import read_source
from tests.jsref import requires_node, run_js, ssb_fixtures
from tests.ssbserver import require_js, ssb_server

pytestmark = [pytest.mark.interop, pytest.mark.slow, requires_node]

SEED, MESSAGES, AUTHORS = 11, 5000, 300
OTHER_ROOTS = 8


@dataclass(frozen=True)
class Server:
    path: Path
    port: int


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    require_js()
    path = tmp_path_factory.mktemp("friends-server")
    ssb_fixtures(path, seed=SEED, messages=MESSAGES, authors=AUTHORS)
    with ssb_server(path) as (address, _):
        yield Server(path, address.port)


def ask(server: Server, queries: list[dict[str, Any]]) -> tuple[str, list[dict[str, int]]]:
    """The server's id and its friends.hops answer to each query, in order."""
    out = json.loads(run_js("hops.js", [str(server.path / "secret"), str(server.port)], json.dumps(queries)))
    return out["id"], out["answers"]


def differences(mine: dict[str, int], theirs: dict[str, int]) -> dict[str, tuple[int | None, int | None]]:
    return {feed: (mine.get(feed), theirs.get(feed)) for feed in mine.keys() | theirs.keys()
            if mine.get(feed) != theirs.get(feed)}


def test_server_hops_match_feed_by_feed(server: Server) -> None:
    received = list(read_source(server.path))
    assert [r.error for r in received if r.error is not None] == []
    edges = contact_edges(r.message for r in received if r.message is not None)
    root, _ = ask(server, [{}])
    out_degree = Counter(source for source, _ in edges)
    others = sorted((feed for feed in out_degree if feed != root), key=lambda feed: (-out_degree[feed], feed))
    queries = [{"start": root, "max": m} for m in (3, 2, 1, 5)] + [{"max": 0}]
    queries += [{"start": other, "max": m} for other in others[:OTHER_ROOTS] for m in (2, 3, 4)]
    _, answers = ask(server, queries)
    compared = negative = 0
    for query, theirs in zip(queries, answers, strict=True):
        start, max_hops = query.get("start", root), query["max"]
        mine = hops(edges, start, max_hops, server_max=DEFAULT_SERVER_MAX if start == root else None)
        assert differences(mine, theirs) == {}, f"friends.hops({query}) differs (mine, server's)"
        compared += len(theirs)
        negative += sum(value < 0 for value in theirs.values())
    print(f"friends.hops: {len(queries)} queries, {compared} feed values matched, {negative} of them negative")
    assert compared > 800 and negative > 50  # the comparison covered blocks and unfollows, not just follows
