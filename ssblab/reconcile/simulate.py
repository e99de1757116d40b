"""Seeded builders and an in-memory pair harness, shared by the tests, the benchmark and notebooks.

:func:`random_trdag` grows a trDAG the way concurrent writers do: a new message links every tip it picked
(tips have no incoming edges and cannot reach each other, so the links are a transitive reduction), or, as a
writer that has not seen the newest messages, a single recent one (a new branch). Ids are content hashes
(:func:`content_id`). :func:`split_replicas` gives two ancestor-closed replicas by removing random messages
with all their descendants, :func:`diverge_replicas` by letting each grow new messages, as concurrent writers do.
:func:`run_pair` drives two sessions in lockstep through the byte codec and counts rounds and bytes. The
randomness is always a ``random.Random`` passed in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

from ssblab.reconcile.codec import decode, encode
from ssblab.reconcile.dag import Node, TrDag
from ssblab.reconcile.messages import Message, Step
from ssblab.reconcile.session import ReconcileRole, Session

__all__ = [
    "PairReport", "Tamper", "content_id", "content_node", "diverge_replicas", "random_trdag", "run_pair",
    "sessions", "split_replicas",
]


def content_id(node: Node) -> bytes:
    """The id of a simulated message: sha256 over its parents and payload (as SSB hashes the message)."""
    h = hashlib.sha256()
    for parent in node.parents:
        h.update(len(parent).to_bytes(4, "big") + parent)
    h.update(node.payload)
    return h.digest()


def content_node(parents: list[bytes], payload: bytes) -> Node:
    """A simulated message whose id is :func:`content_id` of its parents and payload."""
    draft = Node(b"", tuple(parents), payload)
    return dataclasses.replace(draft, id=content_id(draft))


def _grow(
    rng: random.Random,
    nodes: list[Node],
    tips: list[bytes],
    count: int,
    *,
    branch: float,
    max_parents: int,
    writer: bytes = b"",
) -> list[Node]:
    """``count`` new messages by ``writer`` on top of ``nodes`` (oldest first, tips ``tips``); both lists grow."""
    new = []
    for _ in range(count):
        if rng.random() < branch:
            parents = [rng.choice(nodes[-8:]).id]
        else:
            parents = rng.sample(tips, rng.randint(1, min(max_parents, len(tips))))
        node = content_node(parents, writer + len(nodes).to_bytes(4, "big") + rng.randbytes(8))
        tips[:] = [t for t in tips if t not in parents] + [node.id]
        nodes.append(node)
        new.append(node)
    return new


def random_trdag(rng: random.Random, n: int, *, branch: float = 0.2, max_parents: int = 3) -> TrDag:
    """A trDAG of ``n >= 1`` messages (root included)."""
    root = content_node([], rng.randbytes(8))
    nodes = [root]
    _grow(rng, nodes, [root.id], n - 1, branch=branch, max_parents=max_parents)
    return TrDag.from_nodes(nodes)


def _without_descendants(dag: TrDag, removed: set[bytes]) -> TrDag:
    order = sorted(dag.nodes, key=dag.depths.__getitem__)
    for node_id in order:  # parents come first, so one pass closes the set under descendants
        if any(p in removed for p in dag.nodes[node_id].parents):
            removed.add(node_id)
    return TrDag.from_nodes(n for i, n in dag.nodes.items() if i not in removed)


def split_replicas(rng: random.Random, dag: TrDag, cuts: int, *, recent: float = 1.0) -> tuple[TrDag, TrDag]:
    """Two replicas that each lack ``cuts`` random messages (at most) and all their descendants.

    ``recent`` in ``(0, 1]`` restricts the cuts to the newest fraction of depths, where real replicas differ.
    """
    lowest = int(dag.max_depth * (1 - recent))
    candidates = sorted(i for i, d in dag.depths.items() if d > max(lowest, 0))
    replicas = []
    for _ in range(2):
        removed = set(rng.sample(candidates, min(cuts, len(candidates))))
        replicas.append(_without_descendants(dag, removed))
    return replicas[0], replicas[1]


def diverge_replicas(
    rng: random.Random, dag: TrDag, new_a: int, new_b: int, *, branch: float = 0.2
) -> tuple[TrDag, TrDag]:
    """Two replicas that share ``dag`` and then each grew ``new_a`` / ``new_b`` messages the other lacks."""
    nodes = sorted(dag.nodes.values(), key=lambda n: dag.depths[n.id])
    parents = {p for n in nodes for p in n.parents}
    tips = [n.id for n in nodes if n.id not in parents]
    return (
        dag.extend(_grow(rng, list(nodes), list(tips), new_a, branch=branch, max_parents=3, writer=b"a")),
        dag.extend(_grow(rng, list(nodes), list(tips), new_b, branch=branch, max_parents=3, writer=b"b")),
    )


@dataclass(frozen=True)
class PairReport:
    """What one run of :func:`run_pair` cost."""

    rounds: int
    bytes_sent: tuple[int, int]  # everything each side sent
    push_bytes: tuple[int, int]  # of which pushed messages

    @property
    def overhead(self) -> int:
        """Bytes spent finding the difference: everything except the pushed messages."""
        return sum(self.bytes_sent) - sum(self.push_bytes)


Tamper = Callable[[Message], Message]


def _wire(message: Message, tamper: Tamper | None) -> tuple[Message, int, int]:
    """The message as the peer decodes it, its size and the size of its pushes."""
    if tamper is not None:
        message = tamper(message)
    raw = encode(message)
    pushes = 0
    if isinstance(message, Step) and message.pushes:
        pushes = len(raw) - len(encode(dataclasses.replace(message, pushes=())))
    return decode(raw), len(raw), pushes


def run_pair(alice: Session, bob: Session, *, tamper_bob: Tamper | None = None, max_rounds: int = 1000) -> PairReport:
    """Run two sessions to the end in lockstep; ``tamper_bob`` rewrites what Bob sends (a lying peer)."""
    sent, pushed = [0, 0], [0, 0]
    queues: list[list[Message]] = [[alice.start()], [bob.start()]]
    rounds = 0
    while any(queues) and rounds < max_rounds:
        rounds += 1
        delivered: list[list[Message]] = [[], []]
        for side, tamper in ((0, None), (1, tamper_bob)):
            for message in queues[side]:
                wired, size, push_size = _wire(message, tamper)
                sent[side] += size
                pushed[side] += push_size
                delivered[1 - side].append(wired)
        queues = [
            [reply for m in delivered[0] for reply in alice.receive(m)],
            [reply for m in delivered[1] for reply in bob.receive(m)],
        ]
    return PairReport(rounds, (sent[0], sent[1]), (pushed[0], pushed[1]))


def sessions(rng: random.Random, a: TrDag, b: TrDag) -> tuple[Session, Session]:
    """A pair of sessions over two replicas, with nonces from ``rng`` and content ids checked."""
    return (
        Session(ReconcileRole.INITIATOR, a, rng.randbytes(32), content_id=content_id),
        Session(ReconcileRole.RESPONDER, b, rng.randbytes(32), content_id=content_id),
    )
