"""Set Replication Trees between two ssblab peers over loopback muxrpc (secret handshake, box-stream)."""

from __future__ import annotations

import asyncio
import random

import pytest
from nacl.signing import SigningKey

from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import connect, serve
from ssblab.reconcile.dag import TrDag, make_node
from ssblab.reconcile.errors import ReconcileError
from ssblab.reconcile.rpc import METHOD, reconcile, reconcile_handler
from ssblab.reconcile.simulate import random_trdag, split_replicas


async def _run(server_dag: TrDag, client_dag: TrDag) -> tuple[TrDag, list[TrDag]]:
    server_key, results = SigningKey.generate(), []
    handler = reconcile_handler(lambda root: server_dag if root == server_dag.root else None, results.append)
    server = await serve(server_key, handlers={METHOD: handler})
    port = server.sockets[0].getsockname()[1]
    address = MultiserverAddress("127.0.0.1", port, bytes(server_key.verify_key))
    try:
        async with connect(address, SigningKey.generate()) as rpc:
            merged = await reconcile(rpc, client_dag, timeout=10)
            await asyncio.sleep(0.05)  # let the server finish its side
            return merged, results
    finally:
        server.close()


@pytest.mark.parametrize("seed", range(3))
def test_two_peers_end_with_the_union(seed: int) -> None:
    rng = random.Random(seed)
    full = random_trdag(rng, 300)
    mine, theirs = split_replicas(rng, full, cuts=5)
    union = set(mine.nodes) | set(theirs.nodes)
    assert union != set(mine.nodes) or union != set(theirs.nodes)  # there is something to learn
    merged, server_results = asyncio.run(_run(theirs, mine))
    assert set(merged.nodes) == union
    assert [set(r.nodes) for r in server_results] == [union]


def test_unknown_root_fails_cleanly_on_both_sides() -> None:
    ours = TrDag.from_nodes([make_node("r"), make_node("a", ["r"])])
    other = TrDag.from_nodes([make_node("x")])
    with pytest.raises(ReconcileError, match="peer failed"):
        asyncio.run(_run(other, ours))
