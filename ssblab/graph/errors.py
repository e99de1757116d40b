"""The graph analyses' errors (part of the one `SsbError` tree, with stable codes)."""

from __future__ import annotations

from ssblab.core.errors import SsbError

__all__ = ["DatasetError", "GraphError"]


class GraphError(SsbError):
    """A question the follow graph cannot answer as asked (a bad id, a negative hop limit, …)."""

    code = "graph"


class DatasetError(SsbError):
    """The data holds no table the analysis needs (no contacts, no abouts, no messages)."""

    code = "graph-data"
