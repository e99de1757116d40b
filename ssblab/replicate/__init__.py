"""The asyncio replication peer: serve a store to SSB peers, and pull feeds and blobs from them.

Layers (imports point down): `policy` (pure permission and rate table) and `scheduler` (which feeds, from
``ssblab.friends``) decide; `hub` (the store with live wake-ups), `peer` (the muxrpc server), `client` (history
streams and blobs), `ebt_shell` (the ``ssblab.net.ebt`` core over ``ebt.replicate`` streams), `clocks` (persisted
remote EBT clocks) and `runner` (one run against one remote) carry it out. Nothing reaches a store except through
``Store.append`` validation.
"""

from ssblab.replicate.client import ReplicationResult, fetch_blobs, pull_feed, pull_feeds
from ssblab.replicate.clocks import ClockStore
from ssblab.replicate.ebt_shell import EbtShell
from ssblab.replicate.errors import PermissionDenied, ReplicationError
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.peer import ReplicaServer
from ssblab.replicate.policy import Permission, Policy
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want, feeds_from_file, wanted_by_hops

__all__ = [
    "ClockStore",
    "EbtShell",
    "LiveStore",
    "Permission",
    "PermissionDenied",
    "Policy",
    "ReplicaServer",
    "ReplicateOptions",
    "ReplicationError",
    "ReplicationResult",
    "Want",
    "feeds_from_file",
    "fetch_blobs",
    "pull_feed",
    "pull_feeds",
    "replicate",
    "wanted_by_hops",
]
