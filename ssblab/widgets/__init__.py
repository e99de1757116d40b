"""Notebook widgets: feed browser, follow-graph explorer, moderation what-if panel, thread viewer, archive inspector.

Every widget is a plain model (state and pure computations, tested without a browser or Jupyter) with a
``widget()`` method that builds its thin ipywidgets view. Names resolve on first use, so ``import ssblab.widgets``
loads neither ipywidgets nor pandas nor pyspark: those come with the ``notebooks`` (and ``spark``) extras.

Examples:
    >>> from ssblab.widgets import GraphExplorer, GraphSnapshot  # doctest: +SKIP
    >>> GraphExplorer(GraphSnapshot.from_network(net), root).widget()  # doctest: +SKIP
"""

from __future__ import annotations

from ssblab.core.lazy import lazy_names

# name -> the submodule that defines it. Each widget's module adds its public names here.
_HOME = {
    "GraphSnapshot": "snapshot",
    "short_id": "snapshot",
    "radial_layout": "drawing",
    "node_states": "drawing",
    "FeedBrowser": "feed_browser",
    "FeedSummary": "feed_browser",
    "GraphExplorer": "graph_explorer",
    "WidgetError": "common",
    "hop_counts": "graph_explorer",
    "ModerationPanel": "moderation_panel",
    "clique_attack": "scenarios",
    "ThreadViewer": "thread_viewer",
    "ViewerError": "common",
    "ArchiveInspector": "archive_inspector",
}

__all__ = sorted(_HOME)

__getattr__, __dir__ = lazy_names(__name__, _HOME)
