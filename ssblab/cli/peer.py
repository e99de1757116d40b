"""``ssblab serve`` and ``ssblab replicate``: a store as an SSB peer, and pulling a remote's feeds into a store."""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import contextlib
import ctypes
import ctypes.util
import json
import signal
import sys
from pathlib import Path

from nacl.signing import SigningKey

from ssblab.cli.progress import progress
from ssblab.core.errors import SsbError
from ssblab.core.keys import Keypair
from ssblab.net.address import MultiserverAddress, parse_multiserver
from ssblab.net.shs import MAIN_NETWORK_KEY
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.limits import Limits
from ssblab.replicate.peer import ReplicaServer
from ssblab.replicate.policy import Policy
from ssblab.replicate.runner import MODES, ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want, feeds_from_file
from ssblab.store import Store

__all__ = ["register"]
_M_MMAP_THRESHOLD = -3  # glibc mallopt parameter


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = verbs.add_parser("serve", help="serve a store to SSB peers (history, blobs, ping)")
    serve.add_argument("--store", type=Path, required=True)
    serve.add_argument("--listen", default="127.0.0.1:8008", metavar="HOST:PORT")
    serve.add_argument("--identity", type=Path, required=True, help="the server's secret file (ssb-keys format)")
    serve.add_argument("--network-key", type=_network_key, default=MAIN_NETWORK_KEY, metavar="BASE64")
    serve.add_argument("--private", action="store_true", help="serve a feed only to identities its author follows")
    serve.add_argument("--max-connections", type=int, default=Policy.max_connections,
                       help=f"peers connected at once (default {Policy.max_connections}); when full, the peer idle "
                            "the longest gives its seat to a newcomer")
    serve.add_argument("--reserved", type=int, default=Policy.reserved,
                       help=f"of those, seats only for our own key and the feeds it follows (default "
                            f"{Policy.reserved})")
    serve.add_argument("--idle-timeout", type=float, default=Policy.idle_timeout, metavar="SECONDS",
                       help=f"close a peer with no call open for this long (default {Policy.idle_timeout:g} s)")
    serve.add_argument("--memory-budget", type=_mebibytes, default=Policy.max_buffered, metavar="MIB",
                       help=f"bytes held for all peers at once, partly received packets and unread stream items "
                            f"(default {Policy.max_buffered // 2**20} MiB); beyond it the peer holding the most "
                            "is dropped")
    serve.add_argument("--max-streams", type=int, default=Policy.max_streams, help="open streams per peer")
    serve.add_argument("--rate", type=float, default=Policy.rate,
                       help=f"calls per second per peer (default {Policy.rate:g}, bursts of 4 s worth); calls to "
                            f"methods not served have bursts of {Policy.rejected_burst}, then the peer is dropped")
    serve.set_defaults(run=_serve)

    rep = verbs.add_parser("replicate", help="pull feeds (and blobs) from a remote peer into a store")
    rep.add_argument("--store", type=Path, required=True)
    rep.add_argument("--remote", required=True, metavar="net:HOST:PORT~shs:KEY")
    rep.add_argument("--identity", type=Path, help="our secret file; without it a throwaway key")
    rep.add_argument("--mode", choices=MODES, default="auto",
                     help="auto (default): EBT where the remote speaks it, then history streams for the feeds EBT "
                     "left unserved; ebt: EBT only; history: createHistoryStream per feed")
    which = rep.add_mutually_exclusive_group()
    which.add_argument("--feeds", type=Path, help="feed ids: one per line, a JSON list, or follow-graph.json")
    which.add_argument("--hops", type=int, default=2, help="follow hops from the root (default 2)")
    rep.add_argument("--root", help="root of the hops (default: our identity if given, else the remote)")
    rep.add_argument("--network-key", type=_network_key, default=MAIN_NETWORK_KEY, metavar="BASE64")
    rep.add_argument("--blobs", action="store_true", help="also fetch blobs the stored messages mention")
    rep.add_argument("--live", action="store_true", help="stay connected and keep replicating")
    rep.add_argument("--json", action="store_true",
                     help="print {feeds, messages, blobs, seconds, mode, routes, unserved, stopped, errors}")
    rep.add_argument("--explain", action="store_true", help="print which feeds are wanted and why")
    rep.add_argument("--timeout", type=float, default=10.0, help="seconds for connect and handshake")
    rep.add_argument("--stall", type=float, default=30.0, help="seconds a stream may stay silent")
    rep.add_argument("--strict", action="store_true", help="refuse messages that break a strict JSON rule JS peers "
                     "accept (a lone surrogate): by default they are stored, as JS peers store them")
    limits = Limits()
    rep.add_argument("--max-messages", type=int, default=limits.max_messages,
                     help=f"stop after storing this many messages (default {limits.max_messages:,})")
    rep.add_argument("--max-bytes", type=int, default=limits.max_bytes,
                     help=f"stop after this many bytes of messages (default {limits.max_bytes:,})")
    rep.add_argument("--deadline", type=float, default=limits.deadline,
                     help=f"stop after this many seconds, live mode aside (default {limits.deadline:g})")
    rep.set_defaults(run=_replicate)


def _mebibytes(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 2**20:
        raise argparse.ArgumentTypeError(f"a memory budget is a positive number of MiB, got {text!r:.20}")
    return int(value * 2**20)


def _network_key(text: str) -> bytes:
    try:
        key = base64.b64decode(text, validate=True)
    except binascii.Error:
        key = b""
    if len(key) != 32:
        raise argparse.ArgumentTypeError(f"a network key is 32 bytes of base64 (got {len(text)} characters; "
                                         "the key is not shown)")
    return key


def _signing_key(path: Path | None) -> SigningKey:
    return SigningKey(Keypair.from_secret_file(path).seed) if path else SigningKey.generate()


def _return_large_blocks() -> None:
    """Make freed large blocks go back to the system. glibc raises its mmap threshold to the largest block freed, so
    after the first dropped peer's half-sent 16 MiB packet later buffers came from the heap and stayed in the
    process (RSS grew far past the memory budget and never fell); a fixed threshold keeps them mmap'd."""
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to pin
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, 128 * 1024)


def _serve(args: argparse.Namespace) -> int:
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        raise SsbError(f"--listen wants HOST:PORT, got {args.listen!r}", code="args")
    policy = Policy(max_connections=args.max_connections, max_streams=args.max_streams, rate=args.rate,
                    burst=max(1, int(args.rate * 4)), private=args.private, reserved=args.reserved,
                    idle_timeout=args.idle_timeout, max_buffered=args.memory_budget)
    key = _signing_key(args.identity)
    _return_large_blocks()

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
                               explain=args.explain, limits=_limits(args))
    explain_out = sys.stderr if args.json else sys.stdout

    def explain(wants: list[Want]) -> None:
        if args.explain:
            for want in wants:
                print(f"{want.feed}\t{'-' if want.hops is None else want.hops}\t{want.why}", file=explain_out)

    with Store(args.store, strict=args.strict) as store, progress("replicate") as bar:
        result = asyncio.run(replicate(parse_multiserver(args.remote), LiveStore(store), key, options,
                                       on_stored=bar.update, on_wants=explain))
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print("\n".join(result.summary()))
        for error in result.errors:
            print(f"error: {error}" + (f" ({error.stored} stored before)" if error.stored else ""), file=sys.stderr)
    return 0 if result.ok else 1


def _limits(args: argparse.Namespace) -> Limits:
    if args.max_messages < 1 or args.max_bytes < 1 or not args.deadline > 0:
        raise SsbError("--max-messages, --max-bytes and --deadline must be positive", code="args")
    return Limits(args.max_messages, args.max_bytes, args.deadline)
