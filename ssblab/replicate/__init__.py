"""The asyncio replication peer: serve a store to SSB peers, and pull feeds and blobs from them.

Layers (imports point down): `policy` (pure permission and rate table) and `scheduler` (which feeds, from
``ssblab.friends``) decide; `hub` (the store with live wake-ups), `peer` (the muxrpc server), `client` (history
streams and blobs), `ebt_shell` (the ``ssblab.net.ebt`` core over ``ebt.replicate`` streams), `clocks` (persisted
remote EBT clocks) and `runner` (one run against one remote: EBT, history streams, or both) carry it out, within
the run's `limits`, and report in `result`. Nothing reaches a store except through
``Store.append`` validation.
"""

from ssblab.replicate.client import fetch_blobs, pull_feed, pull_feeds
from ssblab.replicate.clocks import ClockStore
from ssblab.replicate.ebt_shell import EbtShell
from ssblab.replicate.errors import PermissionDenied, ReplicationError
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.limits import Budget, Limits
from ssblab.replicate.peer import ReplicaServer
from ssblab.replicate.policy import Permission, Policy
from ssblab.replicate.result import ReplicationResult, RouteCount
from ssblab.replicate.runner import MODES, ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want, feeds_from_file, wanted_by_hops

__all__ = [
    "MODES",
    "Budget",
    "ClockStore",
    "EbtShell",
    "Limits",
    "LiveStore",
    "Permission",
    "PermissionDenied",
    "Policy",
    "ReplicaServer",
    "ReplicateOptions",
    "ReplicationError",
    "ReplicationResult",
    "RouteCount",
    "Want",
    "feeds_from_file",
    "fetch_blobs",
    "pull_feed",
    "pull_feeds",
    "replicate",
    "wanted_by_hops",
]
