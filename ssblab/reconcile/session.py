"""The reconciliation session: a sans-IO state machine, one per side (seed 001, "Protocol", Algorithm 1).

Strategy. Both sides run the same machine and send at once; each received message is answered by at most one.

1. ``Hello``: the trDAG's root (component 1: both must name the same one), a nonce for the session key
   (:func:`~ssblab.reconcile.aggregate.derive_key`) and the maximum depth (phase 1); ``m`` is the lower one.
2. ``Step`` 1: the total aggregate, the aggregates of the forest roots over depths ``1 .. m`` and, from the
   deeper side, every message deeper than ``m`` (the peer cannot hold any of them).
3. ``Step`` r: the children of every node whose aggregates differed in step r-1 (phase 2: the tree search);
   the keyed hashes of every leaf (one depth) that differed; the messages the peer's buckets showed it lacks
   (component 3, eager push, running alongside the search).
4. When a round carried neither aggregates nor buckets the session ends: it runs the final checks and exposes
   the merged :class:`~ssblab.reconcile.dag.TrDag` as :attr:`Session.result`.

Both sides hold the same pair of aggregates for every frontier node, so they take the same decisions and their
frontiers stay equal without naming nodes. Rounds: 1 + (height of the tallest tree + 1) + 2, i.e.
``log2(m) + 4`` at most.

Invariants (each failure raises :class:`ReconcileError` naming the check, moves to ``FAILED`` and discards
what was received; nothing is accepted before every check passed): every received aggregate is plausible; a
frontier has one aggregate per node; a parent equals the union of its children; the forest roots plus the
peer's tail equal its total; a bucket adds up to its leaf's aggregate; every pushed message was announced (or
is in the tail), is new, matches its content id, lands at the announced depth and has its parents; the tail
adds up to what the peer's total left for it. The peer's total is then explained by what we hold: equal
subtrees, checked children down to checked buckets, and the checked tail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from ssblab.reconcile.aggregate import (
    EMPTY,
    HASH_BYTES,
    NONCE_BYTES,
    Aggregate,
    SessionKey,
    aggregate_of,
    derive_key,
)
from ssblab.reconcile.dag import Node, TrDag
from ssblab.reconcile.errors import Check, ReconcileError
from ssblab.reconcile.forest import DepthIndex, Span, forest_roots
from ssblab.reconcile.messages import VERSION, Bucket, Hello, Message, Step

__all__ = ["EXPECTS", "ReconcileRole", "Session", "State"]


class ReconcileRole(Enum):
    """Orders the nonces in the key derivation; otherwise both sides behave alike."""

    INITIATOR = "initiator"
    RESPONDER = "responder"


class State(Enum):
    IDLE = "idle"
    HELLO_SENT = "hello-sent"
    STEPPING = "stepping"
    DONE = "done"
    FAILED = "failed"


EXPECTS: dict[State, type[Hello] | type[Step]] = {State.HELLO_SENT: Hello, State.STEPPING: Step}
"""The message each state accepts; ``start`` leaves ``IDLE``, the end of the search leaves ``STEPPING``."""


@dataclass
class _Search:
    """What the session knows once the key is agreed (mutated only by :class:`Session`)."""

    key: SessionKey
    mine: DepthIndex
    common_depth: int
    peer_max: int
    frontier: tuple[Span, ...]
    last_sent: Step
    peer_tail: Aggregate = EMPTY
    peer_parents: dict[Span, Aggregate] = field(default_factory=dict)
    peer_leaves: dict[int, Aggregate] = field(default_factory=dict)
    announced: tuple[int, ...] = ()  # depths whose buckets the last step carried (and the peer's must carry)
    pulls: dict[bytes, int] = field(default_factory=dict)  # keyed hash -> depth, announced by the peer
    expected_depth: dict[bytes, int] = field(default_factory=dict)  # message id -> depth (0: tail)
    received: list[Node] = field(default_factory=list)


class Session:
    """One side of a reconciliation.

    Args:
        role: which nonce comes first in the key.
        dag: this side's messages of the trDAG.
        nonce: ``NONCE_BYTES`` fresh random bytes from the shell.
        content_id: when given, every pushed message must satisfy ``content_id(node) == node.id``.

    Examples:
        >>> from ssblab.reconcile.dag import make_node
        >>> root, a, b = make_node("r"), make_node("a", ["r"]), make_node("b", ["r"])
        >>> alice = Session(ReconcileRole.INITIATOR, TrDag.from_nodes([root, a]), bytes(32))
        >>> bob = Session(ReconcileRole.RESPONDER, TrDag.from_nodes([root, b]), bytes([1]) * 32)
        >>> to_bob, to_alice = [alice.start()], [bob.start()]
        >>> while to_bob or to_alice:
        ...     to_bob, to_alice = (  # both answer at once: lockstep
        ...         [reply for m in to_alice for reply in alice.receive(m)],
        ...         [reply for m in to_bob for reply in bob.receive(m)],
        ...     )
        >>> sorted(alice.result.nodes) == sorted(bob.result.nodes) == [b"a", b"b", b"r"]
        True
    """

    def __init__(
        self, role: ReconcileRole, dag: TrDag, nonce: bytes, *, content_id: Callable[[Node], bytes] | None = None
    ) -> None:
        if len(nonce) != NONCE_BYTES:
            raise ReconcileError(Check.NONCE, f"our nonce has {len(nonce)} bytes, not {NONCE_BYTES}")
        self.role, self.dag, self.nonce, self.content_id = role, dag, nonce, content_id
        self.state = State.IDLE
        self._search: _Search | None = None
        self._result: TrDag | None = None

    @property
    def result(self) -> TrDag:
        """The merged trDAG, once the session is ``DONE``."""
        if self._result is None:
            raise ReconcileError(Check.CLOSED, f"no result in state {self.state.value}")
        return self._result

    def start(self) -> Hello:
        """The first message; call once."""
        if self.state is not State.IDLE:
            raise ReconcileError(Check.UNEXPECTED_MESSAGE, f"start in state {self.state.value}")
        self.state = State.HELLO_SENT
        return Hello(VERSION, self.dag.root, self.nonce, self.dag.max_depth)

    def receive(self, message: Message) -> tuple[Message, ...]:
        """Handle the peer's next message and return what to send back (nothing once the session ends).

        Raises:
            ReconcileError: the check the message failed; the session is then ``FAILED`` for good.
        """
        expected = EXPECTS.get(self.state)
        try:
            if expected is None:
                raise ReconcileError(Check.CLOSED, f"{type(message).__name__} in state {self.state.value}")
            if not isinstance(message, expected):
                detail = f"{type(message).__name__} instead of {expected.__name__}"
                raise ReconcileError(Check.UNEXPECTED_MESSAGE, detail)
            return self._on_hello(message) if isinstance(message, Hello) else self._on_step(message)
        except ReconcileError:
            self.state, self._search = State.FAILED, None
            raise

    # -- phase 1 and the forest roots ----------------------------------------------------------------------

    def _on_hello(self, hello: Hello) -> tuple[Message, ...]:
        if hello.version != VERSION:
            raise ReconcileError(Check.VERSION, f"peer speaks version {hello.version}, we speak {VERSION}")
        if hello.root != self.dag.root:
            raise ReconcileError(Check.ROOT_MISMATCH, f"peer reconciles {hello.root!r}, we {self.dag.root!r}")
        if len(hello.nonce) != NONCE_BYTES:
            raise ReconcileError(Check.NONCE, f"peer nonce has {len(hello.nonce)} bytes")
        nonces = (self.nonce, hello.nonce) if self.role is ReconcileRole.INITIATOR else (hello.nonce, self.nonce)
        key = derive_key(self.dag.root, *nonces)
        mine = DepthIndex.build(self.dag, key)
        common = min(mine.max_depth, hello.max_depth)
        frontier = forest_roots(common)
        tail = [mine.by_hash[h] for d in range(common + 1, mine.max_depth + 1) for h in mine.at(d)]
        step = Step(1, mine.above(0), tuple(mine.span(s) for s in frontier), (), tuple(tail))
        self._search = _Search(key, mine, common, hello.max_depth, frontier, step)
        self.state = State.STEPPING
        return (step,)

    def _check_total(self, search: _Search, step: Step) -> None:
        if (step.total is None) != (step.round != 1):
            raise ReconcileError(Check.TOTAL, f"a total must come in round 1 and only then, not {step.round}")
        if step.total is None:
            return
        if not step.total.is_plausible():
            raise ReconcileError(Check.AGGREGATE_RANGE, f"peer total {step.total}")
        roots = EMPTY
        for aggregate in step.aggregates:
            roots = roots.union(aggregate)
        tail = step.total.minus(roots)
        tail_depths = search.peer_max - search.common_depth  # each deeper depth holds at least one message
        if not tail.is_plausible() or (tail.count > 0) != (tail_depths > 0) or tail.count < tail_depths:
            raise ReconcileError(Check.TOTAL_UNION, f"peer roots {roots} do not fit its total {step.total}")
        search.peer_tail = tail

    # -- phase 2: one round of the tree search -------------------------------------------------------------

    def _check_aggregates(self, search: _Search, step: Step) -> None:
        if len(step.aggregates) != len(search.frontier):
            detail = f"{len(step.aggregates)} aggregates, {len(search.frontier)} nodes in round {step.round}"
            raise ReconcileError(Check.FRONTIER_SIZE, detail)
        for span, aggregate in zip(search.frontier, step.aggregates, strict=True):
            if not aggregate.is_plausible():
                raise ReconcileError(Check.AGGREGATE_RANGE, f"{aggregate} for depths {span}")
        for parent, (left, right) in self._sibling_pairs(search, step).items():
            if left.union(right) != search.peer_parents[parent]:
                raise ReconcileError(Check.CHILDREN_UNION, f"depths {parent} != union of its children")
        self._check_total(search, step)

    @staticmethod
    def _sibling_pairs(search: _Search, step: Step) -> dict[Span, tuple[Aggregate, Aggregate]]:
        """Each expanded parent with its two children: the frontier lists them in the parents' order."""
        parents = sorted(search.peer_parents)
        return {p: (step.aggregates[2 * i], step.aggregates[2 * i + 1]) for i, p in enumerate(parents)}

    def _compare(self, search: _Search, step: Step) -> tuple[tuple[Span, ...], tuple[int, ...]]:
        """The next frontier and the leaves that differ, from both sides' aggregates of this frontier."""
        frontier: list[Span] = []
        leaves: list[int] = []
        search.peer_parents = {}
        for span, theirs in zip(search.frontier, step.aggregates, strict=True):
            if search.mine.span(span) == theirs:
                continue
            if span.is_leaf:
                leaves.append(span.lo)
                search.peer_leaves[span.lo] = theirs
            else:
                frontier.extend(span.children())
                search.peer_parents[span] = theirs
        return tuple(frontier), tuple(leaves)

    def _on_buckets(self, search: _Search, buckets: tuple[Bucket, ...]) -> list[Node]:
        """Check the peer's buckets, note what it will push to us, and return what we push to it."""
        if tuple(b.depth for b in buckets) != search.announced:
            raise ReconcileError(Check.UNEXPECTED_BUCKET, f"buckets {[b.depth for b in buckets]}")
        pushes: list[Node] = []
        for bucket in buckets:
            well_formed = all(len(h) == HASH_BYTES for h in bucket.hashes)
            if not well_formed or list(bucket.hashes) != sorted(set(bucket.hashes)):
                raise ReconcileError(Check.BUCKET_HASHES, f"bucket of depth {bucket.depth}")
            if aggregate_of(bucket.hashes) != search.peer_leaves[bucket.depth]:
                raise ReconcileError(Check.BUCKET_AGGREGATE, f"bucket of depth {bucket.depth}")
            theirs, mine = set(bucket.hashes), set(search.mine.at(bucket.depth))
            search.pulls.update((h, bucket.depth) for h in theirs - mine)
            pushes.extend(search.mine.by_hash[h] for h in sorted(mine - theirs))
        return pushes

    def _on_pushes(self, search: _Search, step: Step) -> None:
        held = {n.id for n in search.received}
        for node in step.pushes:
            if node.id in self.dag or node.id in held:
                raise ReconcileError(Check.DUPLICATE_MESSAGE, f"pushed {node.id!r} twice or we hold it")
            if self.content_id is not None and self.content_id(node) != node.id:
                raise ReconcileError(Check.CONTENT_ID, f"pushed {node.id!r} does not match its content")
            digest = search.key.digest(node.id)
            if digest in search.pulls:
                search.expected_depth[node.id] = search.pulls.pop(digest)
            elif step.round == 1 and search.peer_max > search.common_depth:
                search.expected_depth[node.id] = 0
            else:
                raise ReconcileError(Check.UNSOLICITED_MESSAGE, f"{node.id!r} in round {step.round}")
            search.received.append(node)
            held.add(node.id)

    def _on_step(self, step: Step) -> tuple[Message, ...]:
        search = self._search
        assert search is not None  # STEPPING always has a search
        if step.round != search.last_sent.round:
            raise ReconcileError(Check.ROUND, f"peer step {step.round}, ours {search.last_sent.round}")
        self._check_aggregates(search, step)
        pushes = self._on_buckets(search, step.buckets)
        self._on_pushes(search, step)
        if not search.last_sent.is_searching:
            self._finish(search)
            return ()
        frontier, leaves = self._compare(search, step)
        buckets = tuple(Bucket(d, search.mine.at(d)) for d in leaves)
        aggregates = tuple(search.mine.span(s) for s in frontier)
        search.frontier, search.announced = frontier, leaves
        search.last_sent = Step(step.round + 1, None, aggregates, buckets, tuple(pushes))
        return (search.last_sent,)

    # -- the end: component 3's final checks ---------------------------------------------------------------

    def _finish(self, search: _Search) -> None:
        if search.pulls:
            raise ReconcileError(Check.MISSING_MESSAGE, f"{len(search.pulls)} announced messages never came")
        merged = self.dag.extend(search.received)
        tail = EMPTY
        for node in search.received:
            depth, expected = merged.depths[node.id], search.expected_depth[node.id]
            if expected == 0:
                tail = tail.union(aggregate_of([search.key.digest(node.id)]))
            is_placed = search.common_depth < depth <= search.peer_max if expected == 0 else depth == expected
            if not is_placed:
                detail = f"{node.id!r} lands at depth {depth}, announced {expected or 'the tail'}"
                raise ReconcileError(Check.DEPTH_MISMATCH, detail)
        if tail != search.peer_tail:
            raise ReconcileError(Check.TAIL_AGGREGATE, f"received tail {tail}, claimed {search.peer_tail}")
        self.state, self._result, self._search = State.DONE, merged, None
