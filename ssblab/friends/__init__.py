"""The follow graph and hops, with the exact numbers of ssb-friends 4.4 as ssb-server 16 reports them.

`contact_edges` reads contact messages into edges, `hops` traverses them (negative values for blocked and
unfollowed feeds), `replication_set` and `explain` answer what a peer replicates and why, and `FollowGraph` does it
incrementally. The rules are written down in `ssblab.friends.contacts` and `ssblab.friends.metric`.
"""

from ssblab.friends.contacts import BLOCK, FOLLOW, UNFOLLOW, ContactState, contact_edges, contact_of, is_feed
from ssblab.friends.follow_graph import FollowGraph
from ssblab.friends.metric import DEFAULT_SERVER_MAX, build_graph, explain, hops, replication_set, traverse

__all__ = [
    "BLOCK",
    "DEFAULT_SERVER_MAX",
    "FOLLOW",
    "UNFOLLOW",
    "ContactState",
    "FollowGraph",
    "build_graph",
    "contact_edges",
    "contact_of",
    "explain",
    "hops",
    "is_feed",
    "replication_set",
    "traverse",
]
