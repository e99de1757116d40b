"""``ssblab keys new|show``: identities in the ssb-keys secret file format."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ssblab.core.keys import Keypair

__all__ = ["register"]


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    keys = verbs.add_parser("keys", help="create or show an identity (ssb-keys secret file)")
    sub = keys.add_subparsers(dest="keys_verb", required=True, metavar="new|show")
    new = sub.add_parser("new", help="write a new secret file and print its feed id")
    new.add_argument("path", type=Path, help="where to write the secret (never overwritten)")
    new.set_defaults(run=_new)
    show = sub.add_parser("show", help="print the feed id (and public key) of a secret file")
    show.add_argument("path", type=Path)
    show.add_argument("--json", action="store_true", help="print {id, public, curve}")
    show.set_defaults(run=_show)


def _new(args: argparse.Namespace) -> int:
    keypair = Keypair.generate()
    args.path.parent.mkdir(parents=True, exist_ok=True)
    keypair.write_secret_file(args.path)
    print(keypair.id)
    return 0


def _show(args: argparse.Namespace) -> int:
    keypair = Keypair.from_secret_file(args.path)
    if args.json:
        obj = keypair.to_secret_object()
        print(json.dumps({"id": obj["id"], "public": obj["public"], "curve": obj["curve"]}))
    else:
        print(keypair.id)
    return 0
