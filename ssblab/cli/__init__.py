"""The ``ssblab`` command line: one module per group of verbs, each a thin shell over the library.

Start-up is what a user feels first, so ``ssblab --help`` imports no verb module: the verbs and their one-line
help are listed here (`VERBS`), and only the module of the verb being run is imported (and with it, that verb's
dependencies). A verb whose dependencies are not installed exits 2 with the extra to install.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence

from ssblab import __version__
from ssblab.cli.extras import MissingExtra, advice
from ssblab.core.errors import SsbError

__all__ = ["VERBS", "build_parser", "main", "run"]

PIPE_CLOSED = 141  # the status a shell gives a command stopped by a closed pipe (128 + SIGPIPE)
# verb: (the module under ssblab.cli that registers it, its one-line help)
VERBS: dict[str, tuple[str, str]] = {
    "keys": ("keys", "create or show an identity (ssb-keys secret file)"),
    "generate": ("data", "generate a realistic, signed SSB network as JSONL (seeded)"),
    "import": ("data", "validate messages from JSONL, a log.offset, ssb-db2 or an archive into a store"),
    "export": ("data", "write a store's messages out as JSONL, or any source as a Parquet dataset"),
    "verify": ("data", "verify every message of JSONL, a log.offset, ssb-db2, a store or an archive"),
    "demo": ("demo", "run the main job on the embedded default data"),
    "serve": ("peer", "serve a store to SSB peers (history, EBT, blobs, ping)"),
    "replicate": ("peer", "pull feeds (and blobs) from a remote peer into a store"),
    "archive": ("archive", "build, verify, decode or inspect ssb-archive blobs"),
    "graph": ("graph", "the follow graph: ssb-friends hops, statistics"),
    "moderation": ("graph", "moderation scenarios over the follow graph"),
    "tangle": ("tangle", "print a thread (or another tangle) in causal order"),
}


def _verb_of(argv: Sequence[str]) -> str | None:
    """The verb named on the command line (the first word that is not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the full arguments of the verb in ``argv`` (of every verb when ``argv`` is None) and the
    others listed by name and help only."""
    parser = argparse.ArgumentParser(
        prog="ssblab",
        description="Secure Scuttlebutt data analysis and interop: keys, data, verification, stores, graphs.",
    )
    parser.add_argument("--version", action="version", version=f"ssblab {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    wanted = VERBS.get(_verb_of(argv) or "") if argv is not None else None
    modules = list(dict.fromkeys(m for m, _ in VERBS.values())) if argv is None else [wanted[0]] if wanted else []
    for module in modules:
        importlib.import_module(f"ssblab.cli.{module}").register(verbs)
    for name, (module, text) in VERBS.items():
        if module not in modules:
            verbs.add_parser(name, help=text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser(argv).parse_args(argv)
        return int(args.run(args) or 0)
    except SsbError as exc:
        print(f"ssblab: error [{exc.code}]: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        missing = MissingExtra(f"this verb needs {exc.name}: {advice(exc.name or '')}")
        print(f"ssblab: error [{missing.code}]: {missing}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader left (`ssblab … | head`): stop quietly, as a shell's pipeline expects
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        return PIPE_CLOSED
    except (OSError, KeyboardInterrupt) as exc:
        print(f"ssblab: error: {exc}", file=sys.stderr)
        return 2


def run() -> int:
    """The ``ssblab`` program (`main` for this process's arguments), ending without the collector's last walk.

    Why: at exit, an interpreter that loaded Arrow, DuckDB, pandas and scipy walked all their objects for cycles:
    0.1 to 0.2 s of a 0.7 s verb. The process is ending, so `gc.freeze` moves every object out of the collector's
    reach; they are freed all the same. (Not in `main`: a caller's process goes on.)
    """
    code = main()
    gc.freeze()
    return code
