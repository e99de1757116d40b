"""The ``ssblab-gallery`` directive: every chart of the executed tutorials, as a grid of cards linking back.

While the tutorials are read, each image output of a notebook cell (the charts' SVG, see `ssblab.viz.render`) is
noted with its page and section; when the gallery page is written, those notes become figures. A chart added to a
tutorial shows up in the gallery by itself.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective

KEY = "ssblab_gallery"  # env attribute: docname -> [(image uri, candidates, section title)]
PAGES = "ssblab_gallery_pages"  # env attribute: the pages that hold a gallery


class gallery_placeholder(nodes.General, nodes.Element):
    """Where the gallery goes, filled in once every tutorial has been read."""


class Gallery(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        _pages(self.env).add(self.env.docname)
        return [gallery_placeholder()]


def _notes(env: BuildEnvironment) -> dict[str, list[tuple[str, dict[str, str], str]]]:
    if not hasattr(env, KEY):
        setattr(env, KEY, {})
    return getattr(env, KEY)  # type: ignore[no-any-return]


def _pages(env: BuildEnvironment) -> set[str]:
    if not hasattr(env, PAGES):
        setattr(env, PAGES, set())
    return getattr(env, PAGES)  # type: ignore[no-any-return]


def _section_title(node: nodes.Node) -> str:
    while node is not None and not isinstance(node, nodes.section):
        node = node.parent
    return node[0].astext() if node is not None else ""


def collect(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    charts = [(image["uri"], dict(image.get("candidates", {})), _section_title(image))
              for output in doctree.findall(nodes.Element) if "cell_output" in output["classes"]
              for image in output.findall(nodes.image) if image["uri"].endswith(".svg")]
    if charts:
        _notes(app.env)[docname] = charts


def purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _notes(env).pop(docname, None)
    _pages(env).discard(docname)


def merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    _notes(env).update({name: charts for name, charts in _notes(other).items() if name in docnames})
    _pages(env).update(_pages(other) & docnames)


def fill(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for placeholder in list(doctree.findall(gallery_placeholder)):
        grid = nodes.container(classes=["ssblab-gallery"])
        for page in sorted(_notes(app.env)):
            title = app.env.titles[page].astext()
            for uri, candidates, section in _notes(app.env)[page]:
                figure = nodes.figure(ids=[f"chart-{len(grid.children) + 1}"])
                image = nodes.image(uri=uri, candidates=candidates, alt=f"{title}: {section}")
                link = nodes.reference(text=f"{title} — {section}",
                                       refuri=app.builder.get_relative_uri(docname, page))
                figure += image
                figure += nodes.caption("", "", link)
                grid += figure
        placeholder.replace_self(grid)


def outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """The gallery pages, whenever a page was read again: its charts may have changed."""
    return sorted(_pages(env)) if added | changed | removed else []


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(gallery_placeholder)
    app.add_directive("ssblab-gallery", Gallery)
    app.connect("doctree-read", collect)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("doctree-resolved", fill)
    app.connect("env-get-outdated", outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
