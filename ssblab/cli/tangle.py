"""``ssblab tangle --data SOURCE --root MSGID``: one thread in causal order, on the local engine (the default) or
on Spark (``--engine spark``, or ``--master URL``): the same output either way.

``SOURCE`` is anything `ssblab.open_dataset` opens: a Parquet dataset (read where it lies, only the columns the
thread needs), or any source `ssblab import` reads (verified on the way in, and kept in the cache of
`ssblab.pipeline.cache` for the next verb on the same bytes).
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime

from ssblab.cli.options import data_arguments, dataset_of
from ssblab.core.errors import InvalidRef
from ssblab.core.refs import is_message_id
from ssblab.tangles.thread import causal_sort, check_tangle, heads, lamport_depths

__all__ = ["register"]


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    tangle = verbs.add_parser("tangle", help="print a thread (or another tangle) in causal order")
    data_arguments(tangle)
    tangle.add_argument("--root", required=True, help="the root message id (%%….sha256)")
    tangle.add_argument("--name", default="thread", help="the tangle: thread (root/branch) or a content.tangles key")
    tangle.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    tangle.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    if not is_message_id(args.root):
        raise InvalidRef(f"--root: {args.root!r} is not a message id (%<base64>=.sha256)")
    tangle = dataset_of(args).tangles().thread(args.root, args.name)
    order, depths, report = causal_sort(tangle), lamport_depths(tangle), check_tangle(tangle)
    if args.json:
        print(json.dumps({
            "root": tangle.root, "tangle": tangle.name, "order": order, "depths": depths,
            "heads": heads(tangle), "missing": report.missing, "is_trdag": report.is_trdag,
        }))
        return 0
    if not report.root_present:
        print(f"(root {tangle.root} is not in the data)")
    for message_id in order:
        when = datetime.fromtimestamp(tangle.timestamps[message_id] / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
        depth = depths.get(message_id)
        print(f"{'?' if depth is None else depth:>4}  {when}  {message_id}  {tangle.authors.get(message_id, '')}")
    for missing, by in report.missing.items():
        print(f"missing: {missing} (linked from {len(by)} message{'s' if len(by) != 1 else ''})")
    print(f"{len(order)} messages, heads: {', '.join(heads(tangle))}")
    return 0
