"""``ssblab serve`` and ``ssblab replicate``: a store as an SSB peer, and pulling a remote's feeds into a store."""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import json
import signal
import sys
from pathlib import Path
from typing import Any

from nacl.signing import SigningKey

from ssblab.cli.progress import progress
from ssblab.core.errors import SsbError
from ssblab.core.keys import Keypair
from ssblab.net.address import MultiserverAddress, parse_multiserver
from ssblab.net.shs import MAIN_NETWORK_KEY
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.peer import ReplicaServer
from ssblab.replicate.policy import Policy
from ssblab.replicate.runner import MODES, ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want, feeds_from_file
from ssblab.store import Store

__all__ = ["register"]


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = verbs.add_parser("serve", help="serve a store to SSB peers (history, blobs, ping)")
    serve.add_argument("--store", type=Path, required=True)
    serve.add_argument("--listen", default="127.0.0.1:8008", metavar="HOST:PORT")
    serve.add_argument("--identity", type=Path, required=True, help="the server's secret file (ssb-keys format)")
    serve.add_argument("--network-key", type=_network_key, default=MAIN_NETWORK_KEY, metavar="BASE64")
    serve.add_argument("--private", action="store_true", help="serve a feed only to identities its author follows")
    serve.add_argument("--max-connections", type=int, default=Policy.max_connections)
    serve.add_argument("--max-streams", type=int, default=Policy.max_streams, help="open streams per peer")
    serve.add_argument("--rate", type=float, default=Policy.rate, help="calls per second per peer")
    serve.set_defaults(run=_serve)

    rep = verbs.add_parser("replicate", help="pull feeds (and blobs) from a remote peer into a store")
    rep.add_argument("--store", type=Path, required=True)
    rep.add_argument("--remote", required=True, metavar="net:HOST:PORT~shs:KEY")
    rep.add_argument("--identity", type=Path, help="our secret file; without it a throwaway key")
    rep.add_argument("--mode", choices=MODES, default="history")
    which = rep.add_mutually_exclusive_group()
    which.add_argument("--feeds", type=Path, help="feed ids: one per line, a JSON list, or follow-graph.json")
    which.add_argument("--hops", type=int, default=2, help="follow hops from the root (default 2)")
    rep.add_argument("--root", help="root of the hops (default: our identity if given, else the remote)")
    rep.add_argument("--network-key", type=_network_key, default=MAIN_NETWORK_KEY, metavar="BASE64")
    rep.add_argument("--blobs", action="store_true", help="also fetch blobs the stored messages mention")
    rep.add_argument("--live", action="store_true", help="stay connected and keep replicating")
    rep.add_argument("--json", action="store_true", help="print {feeds, messages, blobs, seconds, mode, errors}")
    rep.add_argument("--explain", action="store_true", help="print which feeds are wanted and why")
    rep.add_argument("--timeout", type=float, default=10.0, help="seconds for connect and handshake")
    rep.add_argument("--stall", type=float, default=30.0, help="seconds a stream may stay silent")
    rep.set_defaults(run=_replicate)


def _network_key(text: str) -> bytes:
    try:
        key = base64.b64decode(text, validate=True)
    except binascii.Error:
        key = b""
    if len(key) != 32:
        raise argparse.ArgumentTypeError(f"a network key is 32 bytes of base64, got {text!r}")
    return key


def _signing_key(path: Path | None) -> SigningKey:
    return SigningKey(Keypair.from_secret_file(path).seed) if path else SigningKey.generate()


def _serve(args: argparse.Namespace) -> int:
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        raise SsbError(f"--listen wants HOST:PORT, got {args.listen!r}", code="args")
    policy = Policy(max_connections=args.max_connections, max_streams=args.max_streams, rate=args.rate,
                    burst=max(1, int(args.rate * 4)), private=args.private)
    key = _signing_key(args.identity)

    async def main() -> None:
        with Store(args.store) as store:
            server = ReplicaServer(LiveStore(store), key, policy)
            listener = await server.start(host, int(port), args.network_key)
            bound = listener.sockets[0].getsockname()
            print(MultiserverAddress(bound[0], bound[1], bytes(key.verify_key)), flush=True)
            stop = asyncio.Event()
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, stop.set)
            await stop.wait()
            listener.close()
            for conn in list(server.sessions):
                await conn.close()

    asyncio.run(main())
    return 0


def _replicate(args: argparse.Namespace) -> int:
    key = _signing_key(args.identity)
    feeds = tuple(feeds_from_file(args.feeds)) if args.feeds else None
    root = args.root or (Keypair.from_secret_file(args.identity).id if args.identity else None)
    options = ReplicateOptions(mode=args.mode, feeds=feeds, hops=args.hops, root=root, blobs=args.blobs,
                               live=args.live, network_key=args.network_key, timeout=args.timeout, stall=args.stall,
                               explain=args.explain)
    explain_out = sys.stderr if args.json else sys.stdout

    def explain(wants: list[Want]) -> None:
        if args.explain:
            for want in wants:
                print(f"{want.feed}\t{'-' if want.hops is None else want.hops}\t{want.why}", file=explain_out)

    with Store(args.store) as store, progress("replicate") as bar:
        result = asyncio.run(replicate(parse_multiserver(args.remote), LiveStore(store), key, options,
                                       on_stored=bar.update, on_wants=explain))
    report: dict[str, Any] = result.to_json()
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{report['messages']} messages from {report['feeds']} feeds, {report['blobs']} blobs in "
              f"{report['seconds']} s ({args.mode})")
        for error in result.errors:
            print(f"error: {error}", file=sys.stderr)
    return 1 if result.errors else 0
