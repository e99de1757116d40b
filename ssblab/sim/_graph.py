"""Shared pieces of the simulations: the parameter error, RNG coercion and the graph kernels.

Strategy: every network is an undirected edge list held in numpy arrays and turned into a
``scipy.sparse`` CSR adjacency once; breadth-first distances come from ``scipy.sparse.csgraph``, so no
simulation walks a graph node by node in Python. Invariants: adjacency matrices are symmetric with
unit weights and no duplicate entries (the JavaScript reference keeps edges as object keys, which also
merges duplicates); distances of unreachable peers are ``-1``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import shortest_path

from ssblab.core.errors import SsbError

__all__ = [
    "SimulationParameterError",
    "adjacency",
    "bfs_distances",
    "check_fractions",
    "check_positive",
    "coerce_rng",
]


class SimulationParameterError(SsbError, ValueError):
    """A simulation was asked for parameters outside the range its model is defined on."""

    code = "sim-parameter"

    def __init__(self, where: str, rule: str) -> None:
        super().__init__(f"{where}: {rule}")
        self.where = where
        self.rule = rule


def coerce_rng(rng: np.random.Generator | int | None, where: str) -> np.random.Generator:
    """Accept a Generator or an integer seed; refuse ``None`` so every run is repeatable by construction."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise SimulationParameterError(where, f"rng must be a numpy Generator or an int seed, got {rng!r}")


def check_positive(where: str, **values: float) -> None:
    """Raise when any named count or rate is not strictly positive."""
    for name, value in values.items():
        if not value > 0:
            raise SimulationParameterError(where, f"{name} must be > 0, got {value!r}")


def check_fractions(where: str, name: str, values: Iterable[float]) -> tuple[float, ...]:
    """Return the values as a tuple after checking each is a positive number (a mean edge count)."""
    out = tuple(float(v) for v in values)
    if not out:
        raise SimulationParameterError(where, f"{name} must not be empty")
    for v in out:
        check_positive(where, **{name: v})
    return out


def adjacency(n: int, src: np.ndarray, dst: np.ndarray) -> csr_matrix:
    """Symmetric 0/1 adjacency of the undirected multigraph ``src[i] -- dst[i]``, duplicates merged."""
    rows = np.concatenate([src, dst])
    cols = np.concatenate([dst, src])
    ones = np.ones(rows.size, dtype=np.int8)
    matrix = coo_matrix((ones, (rows, cols)), shape=(n, n)).tocsr()
    matrix.data[:] = 1
    return matrix


def bfs_distances(graph: csr_matrix, origin: int) -> np.ndarray:
    """Hop distance from ``origin`` to every peer, ``-1`` where unreachable."""
    dist = shortest_path(graph, method="D", unweighted=True, indices=origin)
    out = np.full(dist.shape, -1, dtype=np.int64)
    finite = np.isfinite(dist)
    out[finite] = dist[finite].astype(np.int64)
    return out
