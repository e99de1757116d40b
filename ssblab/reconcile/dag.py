"""Transitive-reduction DAGs (trDAGs) with the depth labels of seed 001.

Strategy. A message is anything with an id and its parents' ids (:class:`Node`; ``payload`` carries the real
message bytes for the shell). The root is the one message without parents, at depth 0; every other message
sits at ``max(depth of its parents) + 1``, its Lamport timestamp, which is the same on every replica because
parents
are part of the message. A replica only admits a message once all its parents are present (the draft's rule:
no edge may point outside the graph), so depths are always computable and sets stay ancestor-closed.

Invariants of :class:`TrDag`: exactly one root; every parent of every node is in the DAG; ``depths`` holds
every node. Instances are never mutated: :meth:`TrDag.extend` returns a new one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ssblab.reconcile.errors import Check, ReconcileError

__all__ = ["Id", "Node", "TrDag", "as_id", "make_node"]

Id = bytes | str


def as_id(value: Id) -> bytes:
    """Ids may be given as ``str`` (SSB's ``%...sha256``) or ``bytes``; the protocol carries bytes."""
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


@dataclass(frozen=True)
class Node:
    """A message: its id, its parents' ids (its edges, in the message) and opaque payload bytes."""

    id: bytes
    parents: tuple[bytes, ...]
    payload: bytes = b""


def make_node(node_id: Id, parents: Iterable[Id] = (), payload: bytes = b"") -> Node:
    """A :class:`Node` from ``str`` or ``bytes`` ids."""
    return Node(as_id(node_id), tuple(as_id(p) for p in parents), payload)


@dataclass(frozen=True)
class TrDag:
    """One replica's ancestor-closed set of messages of a trDAG, with their depths."""

    root: bytes
    nodes: Mapping[bytes, Node]
    depths: Mapping[bytes, int]

    @classmethod
    def from_nodes(cls, nodes: Iterable[Node]) -> TrDag:
        """Build from messages in any order.

        Raises:
            ReconcileError: no root or a second root, a repeated id, or a parent that is not among the nodes.
        """
        pending = list(nodes)
        roots = [n for n in pending if not n.parents]
        if len(roots) != 1:
            raise ReconcileError(Check.SECOND_ROOT, f"a trDAG has exactly one root, found {len(roots)}")
        root = roots[0]
        base = cls(root.id, {root.id: root}, {root.id: 0})
        return base.extend(n for n in pending if n is not root)

    def extend(self, nodes: Iterable[Node]) -> TrDag:
        """A new DAG with these messages added (in any order: parents may come later in ``nodes``).

        Raises:
            ReconcileError: a parentless node, an id already present or repeated, or a missing parent.
        """
        new_nodes, depths = dict(self.nodes), dict(self.depths)
        waiting: dict[bytes, list[Node]] = defaultdict(list)
        missing: dict[bytes, int] = {}
        for node in nodes:
            if node.id in new_nodes or node.id in missing:
                raise ReconcileError(Check.DUPLICATE_MESSAGE, f"message {node.id!r} is already present")
            if not node.parents:
                raise ReconcileError(Check.SECOND_ROOT, f"message {node.id!r} has no parents")
            unknown = {p for p in node.parents if p not in depths}
            missing[node.id] = len(unknown)
            for parent in unknown:
                waiting[parent].append(node)
            new_nodes[node.id] = node
        ready = [new_nodes[i] for i, count in missing.items() if count == 0]
        while ready:
            node = ready.pop()
            depths[node.id] = 1 + max(depths[p] for p in node.parents)
            for child in waiting.pop(node.id, ()):
                missing[child.id] -= 1
                if missing[child.id] == 0:
                    ready.append(child)
        stuck = [i for i in missing if i not in depths]
        if stuck:
            detail = f"{len(stuck)} messages lack a parent, e.g. {stuck[0]!r}"
            raise ReconcileError(Check.MISSING_PARENT, detail)
        return TrDag(self.root, new_nodes, depths)

    @property
    def max_depth(self) -> int:
        return max(self.depths.values())

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def by_depth(self) -> dict[int, list[Node]]:
        """The seed's ``split``: the messages of each depth (depth 0 is the root alone)."""
        buckets: dict[int, list[Node]] = defaultdict(list)
        for node_id, depth in self.depths.items():
            buckets[depth].append(self.nodes[node_id])
        return dict(buckets)
