"""Tangles and causal order: threads as trDAGs (seed 001) and a happened-before index (seed 000 §6.4).

`Tangles` is the one API over a dataset, on the local engine (DuckDB, Arrow, numpy) or on Spark, with the same
answers: ``ssblab.open_dataset(path).tangles()`` gives one. Underneath: `thread` (one tangle's checks, depths and
order), `causal` (the happened-before index), `queries` (the SQL both engines run), and each engine's longest
paths (`local`, `spark`). Names resolve on first use, so importing the package loads neither numpy nor pyspark.
"""

from __future__ import annotations

from ssblab.core.lazy import lazy_names

__all__ = [
    "CausalError",
    "CausalIndex",
    "CausalMessage",
    "Tangle",
    "TangleReport",
    "Tangles",
    "UnknownMessage",
    "build_index",
    "causal_sort",
    "check_tangle",
    "clock",
    "concurrent",
    "extend_index",
    "happened_before",
    "heads",
    "lamport_depths",
    "message_dag",
    "ssb_sort",
    "tangle_from_edges",
]

_HOME = {
    **dict.fromkeys(["Tangle", "TangleReport", "causal_sort", "check_tangle", "heads", "lamport_depths",
                     "ssb_sort", "tangle_from_edges"], "thread"),
    **dict.fromkeys(["CausalError", "CausalIndex", "CausalMessage", "UnknownMessage", "build_index", "clock",
                     "concurrent", "extend_index", "happened_before"], "causal"),
    "Tangles": "analysis",
    "message_dag": "synthetic",
}

__getattr__, __dir__ = lazy_names(__name__, _HOME)
