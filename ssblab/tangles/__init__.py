"""Tangles and causal order: threads as trDAGs (seed 001) and a happened-before index (seed 000 §6.4).

Names resolve on first use, so importing the package loads neither numpy (the causal index) nor pyspark
(:mod:`ssblab.tangles.spark`).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "CausalError",
    "CausalIndex",
    "CausalMessage",
    "Tangle",
    "TangleReport",
    "UnknownMessage",
    "build_index",
    "causal_depths",
    "causal_sort",
    "check_tangle",
    "clock",
    "concurrent",
    "dangling_links",
    "dangling_references",
    "extend_index",
    "happened_before",
    "heads",
    "lamport_depths",
    "local_causal_index",
    "message_dag",
    "ssb_sort",
    "tangle_depths",
    "tangle_from_edges",
    "tangle_heads",
    "tangle_links",
]

_HOME = {
    **dict.fromkeys(["Tangle", "TangleReport", "causal_sort", "check_tangle", "heads", "lamport_depths",
                     "ssb_sort", "tangle_from_edges"], "thread"),
    **dict.fromkeys(["CausalError", "CausalIndex", "CausalMessage", "UnknownMessage", "build_index", "clock",
                     "concurrent", "extend_index", "happened_before"], "causal"),
    **dict.fromkeys(["causal_depths", "dangling_links", "dangling_references", "local_causal_index",
                     "tangle_depths", "tangle_heads", "tangle_links"], "spark"),
    "message_dag": "synthetic",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
