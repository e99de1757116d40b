"""One replication run against one remote: connect, choose feeds, pull them (history or EBT), then blobs.

Strategy: with a feed list, one round; with hops, rounds until the wanted set stops growing (each round's feeds
reveal the contacts that decide the next). Live mode then keeps every stream open. Invariants: a run never raises
for a single feed's failure (it is in ``result.errors``); it raises only when the peer cannot be reached at all
(wrong address, wrong key, wrong network, silence), as `HandshakeError` within ``timeout``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from nacl.signing import SigningKey

from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import RpcConnection, connect, feed_id
from ssblab.net.shs import MAIN_NETWORK_KEY
from ssblab.replicate.client import STALL_TIMEOUT, ReplicationResult, fetch_blobs, pull_feeds
from ssblab.replicate.ebt_shell import pull_ebt
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.scheduler import Want, wanted_by_hops

MODES = ("history", "ebt")


@dataclass(frozen=True)
class ReplicateOptions:
    """``feeds`` fixes the set; otherwise feeds within ``hops`` of ``root`` (default: the remote's own id)."""

    mode: str = "history"
    feeds: tuple[Want, ...] | None = None
    hops: int = 2
    root: str | None = None
    blobs: bool = False
    live: bool = False
    network_key: bytes = MAIN_NETWORK_KEY
    timeout: float = 10.0
    stall: float = STALL_TIMEOUT
    explain: bool = False


async def replicate(address: str | MultiserverAddress, live: LiveStore, signing_key: SigningKey,
                    options: ReplicateOptions = ReplicateOptions(), *,
                    on_stored: Callable[[int], None] | None = None,
                    on_wants: Callable[[list[Want]], None] | None = None) -> ReplicationResult:
    """Replicate from ``address`` into ``live`` until caught up (or, with ``live``, until the peer leaves)."""
    started, result = time.monotonic(), ReplicationResult(options.mode)
    me = feed_id(bytes(signing_key.verify_key))
    async with connect(address, signing_key, options.network_key, timeout=options.timeout) as conn:
        done: set[str] = set()
        while wants := _next_wants(live, conn, options, done):
            if on_wants:
                on_wants(wants)
            new = [w.feed for w in wants if w.feed not in done]
            stored = await _pull(conn, live, me, new, options, on_stored, result)
            result.messages += stored
            done.update(new)
            if options.feeds is not None:
                break
        result.feeds = len(done)
        if options.blobs:
            fetched, errors = await fetch_blobs(conn, live, live.blob_refs(), timeout=options.stall)
            result.blobs, result.errors = fetched, [*result.errors, *errors]
        if options.live:
            await _pull(conn, live, me, sorted(done), options, on_stored, result, live_mode=True)
    result.seconds = time.monotonic() - started
    return result


def _next_wants(live: LiveStore, conn: RpcConnection, options: ReplicateOptions, done: set[str]) -> list[Want]:
    """The feeds still to pull this round (empty when the set is complete)."""
    if options.feeds is not None:
        wants = list(options.feeds)
    else:
        wants = wanted_by_hops(live, options.root or conn.remote_id, options.hops, explain=options.explain)
    return wants if any(w.feed not in done for w in wants) else []


async def _pull(conn: RpcConnection, live: LiveStore, me: str, feeds: list[str], options: ReplicateOptions,
                on_stored: Callable[[int], None] | None, result: ReplicationResult, *, live_mode: bool = False) -> int:
    if options.mode == "ebt":
        return await pull_ebt(conn, live, me, feeds, result, stall=options.stall, live_mode=live_mode,
                              on_stored=on_stored)
    stored, errors = await pull_feeds(conn, live, feeds, live_mode=live_mode, stall=options.stall,
                                      on_stored=on_stored)
    result.errors.extend(errors)
    return stored
