"""The one error of set reconciliation, naming the check that failed."""

from __future__ import annotations

from enum import StrEnum

from ssblab.core.errors import SsbError

__all__ = ["Check", "ReconcileError"]


class Check(StrEnum):
    """The checks a session runs on what it builds and receives; the value is the stable error ``code``."""

    ENCODING = "encoding"  # bytes that are not a reconcile message
    UNEXPECTED_MESSAGE = "unexpected-message"  # a message type the state does not accept
    CLOSED = "closed"  # a message after the session ended
    VERSION = "version"
    ROOT_MISMATCH = "root-mismatch"  # component 1: the peers name different trDAGs
    NONCE = "nonce"  # a nonce of the wrong length
    ROUND = "round"  # a step out of lockstep
    TOTAL = "total"  # the total aggregate is missing in round 1, or present later
    FRONTIER_SIZE = "frontier-size"  # not one aggregate per tree node of the agreed frontier
    AGGREGATE_RANGE = "aggregate-range"  # a negative count, or an empty set with a non-zero XOR
    TOTAL_UNION = "total-union"  # the forest roots and the tail do not add up to the total
    CHILDREN_UNION = "children-union"  # a parent is not the union of its two children
    UNEXPECTED_BUCKET = "unexpected-bucket"  # a depth bucket that the search did not ask for
    BUCKET_HASHES = "bucket-hashes"  # bucket hashes of the wrong length, unsorted or repeated
    BUCKET_AGGREGATE = "bucket-aggregate"  # a bucket's hashes do not add up to its leaf aggregate
    CONTENT_ID = "content-id"  # a pushed message whose id is not its content's hash
    DUPLICATE_MESSAGE = "duplicate-message"  # a message sent twice, or one this side already holds
    UNSOLICITED_MESSAGE = "unsolicited-message"  # a message nobody asked for
    MISSING_MESSAGE = "missing-message"  # an announced message that never came
    MISSING_PARENT = "missing-parent"  # a message whose parents are not (and will not be) known
    SECOND_ROOT = "second-root"  # a second message without parents
    DEPTH_MISMATCH = "depth-mismatch"  # a message that lands at another depth than announced
    TAIL_AGGREGATE = "tail-aggregate"  # phase 1: the messages above the common depth are not what was claimed


class ReconcileError(SsbError):
    """A failed :class:`Check`: the session ends and nothing it received is accepted."""

    def __init__(self, check: Check, detail: str) -> None:
        self.check = check
        self.detail = detail
        super().__init__(f"{check.value}: {detail}", code=f"reconcile-{check.value}")
