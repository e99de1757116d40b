"""Set Replication Trees: reconcile two replicas of a trDAG in O(log n) rounds (seed 001).

Pure and sans-IO: :class:`Session` takes and returns frozen-dataclass messages (:mod:`~ssblab.reconcile.codec`
turns them into bytes), so a muxrpc duplex call or any other stream can carry them. The security argument for
the keyed aggregates is in :mod:`ssblab.reconcile.aggregate`.
"""

from ssblab.reconcile.aggregate import (
    EMPTY,
    HASH_BITS,
    HASH_BYTES,
    NONCE_BYTES,
    Aggregate,
    SessionKey,
    derive_key,
)
from ssblab.reconcile.codec import decode, encode
from ssblab.reconcile.dag import Node, TrDag, as_id, make_node
from ssblab.reconcile.errors import Check, ReconcileError
from ssblab.reconcile.forest import Span, forest_roots
from ssblab.reconcile.messages import VERSION, Bucket, Hello, Message, Step
from ssblab.reconcile.session import ReconcileRole, Session, State

__all__ = [
    "EMPTY",
    "HASH_BITS",
    "HASH_BYTES",
    "NONCE_BYTES",
    "VERSION",
    "Aggregate",
    "Bucket",
    "Check",
    "Hello",
    "Message",
    "Node",
    "ReconcileError",
    "ReconcileRole",
    "Session",
    "SessionKey",
    "Span",
    "State",
    "Step",
    "TrDag",
    "as_id",
    "decode",
    "derive_key",
    "encode",
    "forest_roots",
    "make_node",
]
