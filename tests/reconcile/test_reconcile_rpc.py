"""Set Replication Trees between two ssblab peers over loopback muxrpc (secret handshake, box-stream)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random

import pytest
from nacl.signing import SigningKey

from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import connect, serve
from ssblab.reconcile.dag import TrDag, make_node
from ssblab.reconcile.errors import ReconcileError
from ssblab.reconcile.rpc import METHOD, reconcile, reconcile_handler
from ssblab.reconcile.simulate import content_id, diverge_replicas, random_trdag, split_replicas


async def _run(server_dag: TrDag, client_dag: TrDag) -> tuple[TrDag, list[TrDag]]:
    server_key, results = SigningKey.generate(), []
    handler = reconcile_handler(lambda root: server_dag if root == server_dag.root else None, results.append,
                                content_id=content_id)
    server = await serve(server_key, handlers={METHOD: handler})
    port = server.sockets[0].getsockname()[1]
    address = MultiserverAddress("127.0.0.1", port, bytes(server_key.verify_key))
    try:
        async with connect(address, SigningKey.generate()) as rpc:
            merged = await reconcile(rpc, client_dag, content_id=content_id, timeout=10)
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


@pytest.mark.parametrize("forger", ["server", "client"])
def test_a_forged_payload_under_a_real_id_is_refused(forger: str) -> None:
    """The forger's replica holds a message the other lacks, under its real id but with another payload: the
    receiving side refuses it (content-id), and the session fails on both sides."""
    rng = random.Random(7)
    mine, theirs = diverge_replicas(rng, random_trdag(rng, 200), 10, 10)
    honest, forged = (mine, theirs) if forger == "server" else (theirs, mine)
    target = next(node for node in forged.nodes.values() if node.id not in honest.nodes and node.parents)
    lie = dataclasses.replace(target, payload=b"forged " + target.payload)
    forged = TrDag.from_nodes([lie if n.id == target.id else n for n in forged.nodes.values()])
    if forger == "server":
        with pytest.raises(ReconcileError) as caught:
            asyncio.run(_run(forged, honest))
        assert caught.value.code == "reconcile-content-id"
    else:  # the forger may think it is done; the honest server refuses and keeps no union
        results: list[TrDag] = []
        asyncio.run(_forge_against(honest, forged, results))
        assert results == []


async def _forge_against(server_dag: TrDag, client_dag: TrDag, results: list[TrDag]) -> None:
    """A client that does not check (it is the forger) against an honest server."""
    from ssblab.net.aio import RpcConnection

    refused: list[ReconcileError] = []

    def replica(root: bytes) -> TrDag | None:
        return server_dag if root == server_dag.root else None

    handler = reconcile_handler(replica, results.append, content_id=content_id)

    async def checked(conn: RpcConnection, *args: object):  # type: ignore[no-untyped-def]
        try:
            async for item in handler.func(conn, *args):
                yield item
        except ReconcileError as exc:
            refused.append(exc)
            raise

    key = SigningKey.generate()
    server = await serve(key, handlers={METHOD: dataclasses.replace(handler, func=checked)})
    address = MultiserverAddress("127.0.0.1", server.sockets[0].getsockname()[1], bytes(key.verify_key))
    try:
        async with connect(address, SigningKey.generate()) as rpc:
            with contextlib.suppress(ReconcileError):
                await reconcile(rpc, client_dag, content_id=lambda node: node.id, timeout=10)
            await asyncio.sleep(0.1)
    finally:
        server.close()
    assert [e.code for e in refused] == ["reconcile-content-id"]
