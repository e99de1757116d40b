"""The ``ssblab`` command line: one verb per module, each a thin shell over the library."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ssblab import SsbError, __version__
from ssblab.cli import archive, data, demo, graph, keys, peer, tangle


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ssblab",
        description="Secure Scuttlebutt data analysis and interop: keys, data, verification, stores.",
    )
    parser.add_argument("--version", action="version", version=f"ssblab {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for module in (keys, data, demo, peer, archive, graph, tangle):
        module.register(verbs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except SsbError as exc:
        print(f"ssblab: error [{exc.code}]: {exc}", file=sys.stderr)
        return 2
    except (OSError, KeyboardInterrupt) as exc:
        print(f"ssblab: error: {exc}", file=sys.stderr)
        return 2
