"""Graph verbs: ``graph hops|stats`` and ``moderation whatif``, over a Parquet dataset or any source, on the local
engine (the default) or on Spark (``--engine spark``, or ``--master URL``): the same output either way."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ssblab.cli.options import data_arguments, dataset_of
from ssblab.core.errors import InvalidRef
from ssblab.friends import DEFAULT_SERVER_MAX, is_feed

__all__ = ["register"]


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    graph = verbs.add_parser("graph", help="the follow graph: ssb-friends hops, statistics")
    sub = graph.add_subparsers(dest="graph_verb", required=True, metavar="hops|stats")
    hops = sub.add_parser("hops", help="print {feed: hops} as ssb-friends 4.4 (ssb-server 16) reports them")
    data_arguments(hops)
    hops.add_argument("--root", required=True, help="the start feed (@….ed25519)")
    hops.add_argument("--max-hops", type=int, default=DEFAULT_SERVER_MAX,
                      help=f"friends.hops' max (default {DEFAULT_SERVER_MAX}, ssb-server's configured hops)")
    hops.add_argument("--server-max", type=int,
                      help="the root is the server's own id with this configured friends.hops (filters as it does)")
    hops.add_argument("--json", action="store_true", help="print one JSON object {feed: hops}")
    hops.set_defaults(run=_hops)
    stats = sub.add_parser("stats", help="feeds, follows, degrees, components, top PageRank")
    data_arguments(stats)
    stats.add_argument("--top", type=int, default=10, help="how many top PageRank feeds (default 10)")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(run=_stats)

    moderation = verbs.add_parser("moderation", help="moderation scenarios over the follow graph")
    msub = moderation.add_subparsers(dest="moderation_verb", required=True, metavar="whatif")
    whatif = msub.add_parser("whatif", help="which feeds leave the root's replication set after new blocks")
    data_arguments(whatif)
    whatif.add_argument("--root", required=True)
    whatif.add_argument("--block", nargs="+", default=[], metavar="ID", help="feeds the root would block")
    whatif.add_argument("--block-by", nargs=2, action="append", default=[], metavar=("BLOCKER", "ID"),
                        help="a block by another feed (repeatable)")
    whatif.add_argument("--feed", help="also list the viewers whose hops of this feed change")
    whatif.add_argument("--max-hops", type=int, default=DEFAULT_SERVER_MAX)
    whatif.add_argument("--json", action="store_true")
    whatif.set_defaults(run=_whatif)


def _feed(value: str, option: str) -> str:
    if not is_feed(value):
        raise InvalidRef(f"{option}: {value!r} is not a feed id (@<base64>=.ed25519)")
    return value


def _network(args: argparse.Namespace) -> Any:
    return dataset_of(args).graph()


def _hops(args: argparse.Namespace) -> int:
    root = _feed(args.root, "--root")
    found = _network(args).hops(root, args.max_hops, server_max=args.server_max)
    if args.json:
        print(json.dumps(found, sort_keys=True))
    else:
        for feed, value in sorted(found.items(), key=lambda item: (abs(item[1]), -item[1], item[0])):
            print(f"{value:>3} {feed}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    stats = _network(args).stats(top=args.top)
    if args.json:
        print(json.dumps(stats))
        return 0
    print(f"{stats['feeds']} feeds, {stats['follows']} follows, {stats['mutual_follows']} mutual pairs")
    if stats["feeds"]:  # no feeds, no degrees (null in --json)
        print(f"degree: max in {stats['degree']['max_in']}, max out {stats['degree']['max_out']}, "
              f"mean out {stats['degree']['mean_out']:.2f}")
    for key in ("components", "strong_components"):
        print(f"{key.replace('_', ' ')}: {stats[key]['count']} (largest {stats[key]['largest']})")
    for row in stats["pagerank"]:
        print(f"  {row['pagerank']:.5f} {row['id']}")
    return 0


def _whatif(args: argparse.Namespace) -> int:
    root = _feed(args.root, "--root")
    blocks = [(root, _feed(b, "--block")) for b in args.block]
    blocks += [(_feed(a, "--block-by"), _feed(b, "--block-by")) for a, b in args.block_by]
    feed = None if args.feed is None else _feed(args.feed, "--feed")
    result = _network(args).whatif(root, blocks, max_hops=args.max_hops, feed=feed)
    if args.json:
        print(json.dumps({"root": root, "leaving": result.leaving,
                          "changes": {f: list(c) for f, c in result.changes.items()},
                          "views": {v: list(c) for v, c in result.views.items()}}))
        return 0
    print(f"{len(result.leaving)} feeds leave the replication set of {root}:")
    for leaving in result.leaving:
        print(f"  {leaving}")
    for viewer, (old, new) in result.views.items():
        print(f"{viewer} sees {feed} at {old} -> {new}")
    return 0
