"""The ``ssblab-cli`` directive: the command-line reference, generated from the verbs' own argparse parsers.

Every module of `ssblab.cli` that has a ``register(verbs)`` function is a verb: each registers its parsers into
a fresh ``ssblab`` parser here, and every parser, down to nested sub-verbs, becomes a section with its
description and its ``--help`` text. A new verb module appears in the reference without an edit to the docs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

HELP_COLUMNS = "78"  # argparse wraps to $COLUMNS: fixed, so the page does not depend on the building terminal


def verb_modules() -> list[ModuleType]:
    """The modules of `ssblab.cli` that register a verb, by name."""
    import ssblab.cli

    names = sorted(info.name for info in pkgutil.iter_modules(ssblab.cli.__path__) if not info.name.startswith("_"))
    modules = [importlib.import_module(f"ssblab.cli.{name}") for name in names]
    return [module for module in modules if callable(getattr(module, "register", None))]


def verb_parser(module: ModuleType) -> argparse.ArgumentParser:
    """A top-level ``ssblab`` parser holding only the verbs that ``module`` registers."""
    parser = argparse.ArgumentParser(prog="ssblab")
    module.register(parser.add_subparsers(dest="verb", metavar="VERB"))
    return parser


def children(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The sub-parsers directly below ``parser``, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from dict.fromkeys(action.choices.values())  # aliases map to the same parser once


def _help(parser: argparse.ArgumentParser) -> str:
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        return parser.format_help()
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


class CliReference(SphinxDirective):
    """``.. ssblab-cli::`` — one section per verb and sub-verb."""

    def run(self) -> list[nodes.Node]:
        sections: list[nodes.Node] = []
        for module in verb_modules():
            self.env.note_dependency(module.__file__ or "")
            sections.extend(self._section(parser) for parser in children(verb_parser(module)))
        return sections

    def _section(self, parser: argparse.ArgumentParser) -> nodes.section:
        slug = "cli-" + parser.prog.replace(" ", "-")
        section = nodes.section(ids=[slug])
        section += nodes.title(text=parser.prog)
        if parser.description:
            section += nodes.paragraph(text=parser.description)
        section += nodes.literal_block(text=_help(parser), language="text", classes=["ssblab-cli-help"])
        for child in children(parser):
            section += self._section(child)
        return section


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("ssblab-cli", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
