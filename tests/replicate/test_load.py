"""Load: 50 clients replicate from one `ssblab` server at once, over loopback; all end with complete replicas."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from ssblab.replicate.hub import LiveStore
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store
from tests.replicate.helpers import filled_store, ids_by_feed, network, served, signing_key

CLIENTS = 50


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["history", "ebt"])
def test_fifty_clients_at_once(tmp_path: Path, mode: str) -> None:
    source = filled_store(tmp_path / "source")
    wants = tuple(Want(kp.id, None, "listed") for kp in network()[0].keypairs)
    replicas = [Store(tmp_path / f"replica-{i}") for i in range(CLIENTS)]

    async def main() -> list:
        async with served(source, signing_key(network()[0].keypairs[0])) as (address, _):
            return await asyncio.gather(*(
                replicate(address, LiveStore(replica), SigningKey.generate(), ReplicateOptions(mode=mode, feeds=wants))
                for replica in replicas))

    results = asyncio.run(asyncio.wait_for(main(), 600))
    expected = ids_by_feed(source)
    assert [r.errors for r in results] == [[]] * CLIENTS
    assert all(ids_by_feed(replica) == expected for replica in replicas)
