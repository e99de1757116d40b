"""One replication run against one remote: connect, choose feeds, pull them (EBT, history streams, or both), blobs.

Strategy: with a feed list, one round; with hops, rounds until the wanted set stops growing (each round's feeds
reveal the contacts that decide the next). Each round runs the mode's routes: ``ebt`` asks the remote over EBT
(history streams only if the remote has no EBT at all), ``history`` one createHistoryStream per feed, and
``auto`` (the default) EBT first and then history streams for every feed EBT left unserved, since a JS peer's
EBT sends only the feeds in its own replication set. Live mode then keeps the streams open.

Invariants: a run never raises for a single feed's failure (it is in ``result.errors``); it raises only when the
peer cannot be reached at all (wrong address, wrong key, wrong network, silence), as `HandshakeError` within
``timeout``. The run's `Budget` and deadline bound it as a whole; ``result.messages`` is what the store gained,
so messages of a feed that later failed are counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from nacl.signing import SigningKey

from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import RpcConnection, connect, feed_id
from ssblab.net.errors import RemoteCallError
from ssblab.net.shs import MAIN_NETWORK_KEY
from ssblab.replicate.client import STALL_TIMEOUT, fetch_blobs, pull_feeds
from ssblab.replicate.clocks import ClockStore
from ssblab.replicate.ebt_shell import EbtClient, EbtShell
from ssblab.replicate.errors import ReplicationError
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.limits import GRACE, Budget, Limits
from ssblab.replicate.result import ReplicationResult
from ssblab.replicate.scheduler import Want, wanted_by_hops

__all__ = ["MODES", "ReplicateOptions", "replicate"]

MODES = ("auto", "ebt", "history")


@dataclass(frozen=True)
class ReplicateOptions:
    """``feeds`` fixes the set; otherwise feeds within ``hops`` of ``root`` (default: the remote's own id)."""

    mode: str = "auto"
    feeds: tuple[Want, ...] | None = None
    hops: int = 2
    root: str | None = None
    blobs: bool = False
    live: bool = False
    network_key: bytes = MAIN_NETWORK_KEY
    timeout: float = 10.0
    stall: float = STALL_TIMEOUT
    explain: bool = False
    limits: Limits = field(default_factory=Limits)


@dataclass
class _Run:
    """One run's moving parts, shared by its rounds."""

    conn: RpcConnection
    live: LiveStore
    me: str
    options: ReplicateOptions
    result: ReplicationResult
    budget: Budget
    on_stored: Callable[[int], None] | None
    heads: dict[str, int] = field(default_factory=dict)  # each requested feed's sequence when the run began
    by_history: set[str] = field(default_factory=set)  # feeds that went to history streams (auto, or no EBT)
    ebt: EbtClient | None = None  # the run's one EBT session, opened by the first round that uses EBT
    ebt_refused: bool = False

    def ebt_client(self) -> EbtClient:
        if self.ebt is None:
            shell = EbtShell(self.live, self.me, (), ClockStore(self.live.store.path), budget=self.budget)
            self.ebt = EbtClient(shell, self.conn)
        return self.ebt


async def replicate(address: str | MultiserverAddress, live: LiveStore, signing_key: SigningKey,
                    options: ReplicateOptions = ReplicateOptions(), *,
                    on_stored: Callable[[int], None] | None = None,
                    on_wants: Callable[[list[Want]], None] | None = None) -> ReplicationResult:
    """Replicate from ``address`` into ``live`` until caught up (or, with ``live``, until the peer leaves)."""
    started, result = time.monotonic(), ReplicationResult(options.mode)
    before = live.store.count()
    async with connect(address, signing_key, options.network_key, timeout=options.timeout) as conn:
        run = _Run(conn, live, feed_id(bytes(signing_key.verify_key)), options, result, Budget(options.limits),
                   on_stored)
        deadline = None if options.live else options.limits.deadline
        try:
            await _bounded(_rounds(run, on_wants), run.budget, deadline)
            if options.blobs and not run.budget.reason:
                fetched, errors = await fetch_blobs(conn, live, live.blob_refs(), timeout=options.stall)
                result.blobs, result.errors = fetched, [*result.errors, *errors]
            if options.live and not run.budget.reason and not conn.closed.is_set():
                await _bounded(_live(run), run.budget, None)
        finally:
            if run.ebt is not None:
                await run.ebt.close()
    if run.budget.reason:
        result.stopped = run.budget.reason
        result.errors.append(run.budget.error())
    for error in result.errors:
        if error.feed in run.heads:
            error.stored = live.sequence(error.feed) - run.heads[error.feed]
    result.messages = live.store.count() - before
    result.seconds = time.monotonic() - started
    return result


async def _bounded(work: Awaitable[None], budget: Budget, deadline: float | None) -> None:
    """Run ``work`` until it ends, the budget stops the run, or ``deadline`` seconds pass; a stopped run gets
    `GRACE` seconds to commit what it holds, then it is cancelled (what was committed stays)."""
    task = asyncio.ensure_future(work)
    stop = asyncio.create_task(budget.stopped.wait())
    try:
        await asyncio.wait({task, stop}, timeout=deadline, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            budget.stop("deadline")  # no-op when a limit stopped it; either way every route stops taking
            await asyncio.wait({task}, timeout=GRACE)
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        stop.cancel()
        task.cancel()


async def _rounds(run: _Run, on_wants: Callable[[list[Want]], None] | None) -> None:
    """Every round of the run; the result's feeds, unserved list and route counts are kept up to date, so a run
    cut short still reports what it did."""
    done: set[str] = set()
    while wants := _next_wants(run, done):
        new = [w.feed for w in wants if w.feed not in done]
        if run.conn.closed.is_set():  # the peer hung up before these were asked for (a full server, say)
            run.result.errors += [ReplicationError(f"{feed} from {run.conn.remote_id}: connection closed",
                                                   feed=feed, code="connection-closed") for feed in new]
            run.result.unserved = sorted(set(run.result.unserved) | set(new))
            return
        if on_wants:
            on_wants(wants)
        for feed in new:
            run.heads.setdefault(feed, run.live.sequence(feed))
        done.update(new)
        run.result.feeds = len(done)
        run.result.unserved = sorted(set(run.result.unserved) | set(new))
        await _round(run, new)
        if run.options.feeds is not None:
            break


def _next_wants(run: _Run, done: set[str]) -> list[Want]:
    """The feeds still to pull this round (empty when the set is complete)."""
    options = run.options
    if options.feeds is not None:
        wants = list(options.feeds)
    else:
        wants = wanted_by_hops(run.live, options.root or run.conn.remote_id, options.hops, explain=options.explain)
    return wants if any(w.feed not in done for w in wants) else []


async def _round(run: _Run, feeds: list[str]) -> None:
    """One round's routes over ``feeds``: EBT (ebt, auto), then history streams for what is still unserved."""
    if run.options.mode == "history" or run.ebt_refused:
        await _history(run, feeds)
        return
    try:
        left = await _route(run, "ebt", feeds, run.ebt_client().pull(feeds))
    except RemoteCallError as exc:  # no EBT there: history streams, in either mode
        run.ebt_refused = True
        run.result.mode = f"{run.options.mode} (peer refused ebt: {exc}; history streams)"
        left = feeds
    if left and (run.options.mode == "auto" or run.ebt_refused):
        await _history(run, left)


def _history(run: _Run, feeds: list[str]) -> Awaitable[list[str]]:
    run.by_history.update(feeds)
    return _route(run, "history", feeds, pull_feeds(run.conn, run.live, feeds, stall=run.options.stall,
                                                    budget=run.budget, on_stored=run.on_stored))


async def _route(run: _Run, name: str, feeds: list[str],
                 pulling: Awaitable[tuple[list[str], list[ReplicationError]]]) -> list[str]:
    """Run one route; count what it served and stored; return the feeds it left unserved. A later route that
    serves a feed takes it off ``unserved`` and replaces its error from an earlier route."""
    before = run.live.store.count()
    served, errors = await pulling
    count, result = run.result.routes[name], run.result
    count.feeds += len(served)
    count.messages += run.live.store.count() - before
    if name == "ebt" and run.on_stored:
        run.on_stored(run.live.store.count() - before)
    got = set(served)
    result.errors = [e for e in result.errors if e.feed not in got] + errors
    result.unserved = sorted(set(result.unserved) - got)
    return [feed for feed in feeds if feed not in got]


async def _live(run: _Run) -> None:
    """Live mode: the feeds that came by history streams stay on live history streams, the rest on EBT, until
    the peer leaves."""
    by_ebt = [feed for feed in sorted(run.heads) if feed not in run.by_history]
    pulls = [pull_feeds(run.conn, run.live, sorted(run.by_history), live_mode=True, stall=run.options.stall,
                        budget=run.budget, on_stored=run.on_stored)]
    if by_ebt:
        pulls.append(run.ebt_client().pull(by_ebt, live=True))
    for _, errors in await asyncio.gather(*pulls):
        run.result.errors.extend(errors)
