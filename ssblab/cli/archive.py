"""``ssblab archive build|verify|decode|inspect``: ssb-archive blobs of a store's feeds (docs/archive-format.md)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ssblab.archive import block as blocks
from ssblab.archive.bundle import DEFAULT_BLOCK_SIZE, archive_content, build_archives, bundle_of
from ssblab.archive.dictionaries import Dictionaries, Fetch
from ssblab.archive.errors import ArchiveError, MissingBlob
from ssblab.archive.flat import KIND_NAMES, Bundle
from ssblab.archive.folder import write_archives
from ssblab.archive.verify import verify_by_rebuild, verify_fetched
from ssblab.core.encoding import encode_compact
from ssblab.core.keys import Keypair
from ssblab.core.message import Message, create_message
from ssblab.core.refs import b64
from ssblab.store import Store
from ssblab.store.blobs import BlobStore

__all__ = ["register"]


def register(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    archive = verbs.add_parser("archive", help="build, verify, decode or inspect ssb-archive blobs")
    sub = archive.add_subparsers(dest="archive_verb", required=True, metavar="build|verify|decode|inspect")
    build = sub.add_parser("build", help="archive a feed of a store into blobs and an archive message content")
    build.add_argument("--store", type=Path, required=True)
    build.add_argument("--feed", required=True, help="the feed id (@….ed25519)")
    build.add_argument("--block-size", type=int, default=DEFAULT_BLOCK_SIZE)
    build.add_argument("--out", type=Path, required=True,
                       help="folder for blobs/ and archive.json (archive-2.json… when the feed needs several Bundles)")
    build.add_argument("--base", type=Path, help="an earlier archive.json whose dictionaries to extend (in --out)")
    build.add_argument("--publish", type=Path, help="the feed's secret: also append the archive message to the store")
    build.set_defaults(run=_build)
    for name, run, text in (
        ("verify", _verify, "verify an archive: rebuild from the store, or check the fetched blobs"),
        ("decode", _decode, "decode an archive's messages to Parquet or JSONL"),
        ("inspect", _inspect, "print sketches, dictionaries and sizes"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("archive", help="an archive.json, or the id of an archive message in --store")
        cmd.add_argument("--blobs", type=Path, help="the blobs folder (default: ARCHIVE's folder/blobs)")
        cmd.add_argument("--store", type=Path, help="a store: its messages and blobs")
        cmd.set_defaults(run=run)
        if name == "verify":
            cmd.add_argument("--mode", choices=["auto", "rebuild", "fetched"], default="auto")
        if name == "decode":
            cmd.add_argument("--format", choices=["parquet", "jsonl"], required=True)
            cmd.add_argument("--out", type=Path, required=True)
        if name == "inspect":
            cmd.add_argument("--json", action="store_true")


def _fetcher(blobs: BlobStore) -> Fetch:
    return lambda digest: blobs.get(f"&{b64(digest)}.sha256")


def _build(args: argparse.Namespace) -> int:
    blobs = BlobStore(args.out / "blobs")
    with Store(args.store) as store:
        feed = list(store.feed(args.feed))
        base = None
        if args.base:
            base = Dictionaries.load(bundle_of(json.loads(args.base.read_text()))[0].dictionaries, _fetcher(blobs))
        archives, _ = build_archives([feed], args.block_size, base)
        files = write_archives(archives, args.out)
        own = [blob for a in archives for blob in (*a.blocks, a.bundle_blob)]
        size = sum(map(len, archives[0].dictionaries)) + sum(map(len, own))
        count = sum(len(a.blocks) for a in archives)
        print(f"{len(feed)} messages in {count} blocks, {size:,} bytes -> {', '.join(map(str, files))}")
        if args.publish:
            _publish(store, args, [archive_content(a.bundle_blob) for a in archives])
    return 0


def _publish(store: Store, args: argparse.Namespace, contents: list[dict[str, Any]]) -> None:
    """Append one archive message per Bundle to the feed, in order (a long feed needs several, §8.1)."""
    keypair = Keypair.from_secret_file(args.publish)
    if keypair.id != args.feed:
        raise ArchiveError(f"--publish: the secret is {keypair.id}, not the archived feed {args.feed}")
    for content in contents:
        state = store.head(keypair.id)
        head = store.get(state.id) if state is not None else None
        msg = create_message(keypair, content, previous=head, timestamp=time.time() * 1000)
        store.append([msg])
        print(f"published {msg.id}")


def _load(args: argparse.Namespace) -> tuple[Bundle, Fetch, Store | None]:
    store = Store(args.store) if args.store else None
    if Path(args.archive).is_file():
        content: Any = json.loads(Path(args.archive).read_text())
        folder = args.blobs or Path(args.archive).parent / "blobs"
    elif store is not None and (msg := store.get(args.archive)) is not None:
        content, folder = msg.content, args.blobs or store.blobs.root
    else:
        raise ArchiveError(f"{args.archive}: neither an archive.json file nor an archive message in --store")
    fetchers = [_fetcher(BlobStore(folder))] + ([_fetcher(store.blobs)] if store else [])
    return bundle_of(content)[0], lambda d: next((b for f in fetchers if (b := f(d)) is not None), None), store


def _verify(args: argparse.Namespace) -> int:
    bundle, fetch, store = _load(args)
    try:
        return _verify_with(args, bundle, fetch, store)
    finally:
        if store is not None:
            store.close()


def _verify_with(args: argparse.Namespace, bundle: Bundle, fetch: Fetch, store: Store | None) -> int:
    feed_id = f"@{b64(bundle.author)}.ed25519"
    feed = list(store.feed(feed_id)) if store else []
    last = bundle.blocks[-1].sketch
    first = bundle.blocks[0].sketch.sequence_base
    has_all = bool(feed) and feed[0].sequence <= first and last.sequence_base + last.length - 1 <= feed[-1].sequence
    mode = args.mode if args.mode != "auto" else ("rebuild" if has_all else "fetched")
    if mode == "rebuild":
        result = verify_by_rebuild(bundle, feed, fetch)
    else:
        known = {m.sequence: m.id for m in feed}
        result = verify_fetched(bundle, fetch, known.get, store.hmac_key if store else None)
    span = f"sequences {result.first_sequence}..{result.last_sequence}"
    print(f"ok ({mode}): {result.messages} messages of {result.feed}, {span}, {result.blocks} blocks")
    return 0


def _block_blobs(bundle: Bundle, fetch: Fetch) -> list[bytes]:
    out = []
    for i, ref in enumerate(bundle.blocks):
        data = fetch(ref.blob_id)
        if data is None:
            raise MissingBlob(f"block {i}: blob &{b64(ref.blob_id)}.sha256 is not available")
        out.append(data)
    return out


def _decode(args: argparse.Namespace) -> int:
    bundle, fetch, store = _load(args)
    if store is not None:
        store.close()
    dicts = Dictionaries.load(bundle.dictionaries, fetch)
    data = _block_blobs(bundle, fetch)
    if args.format == "parquet":
        import pyarrow.parquet as pq

        from ssblab.archive.arrow import MESSAGES_SCHEMA, iter_batches

        with pq.ParquetWriter(args.out, MESSAGES_SCHEMA, compression="zstd") as writer:
            for batch in iter_batches(data, dicts):
                writer.write_batch(batch)
    else:
        with open(args.out, "wb") as out:
            for i, blob in enumerate(data):
                encodings, _ = blocks.encodings(blocks.decode_block(blob, dicts, f"block {i}"), dicts)
                out.writelines(_compact(e) for e in encodings)
    print(f"wrote {sum(ref.sketch.length for ref in bundle.blocks)} messages to {args.out}")
    return 0


def _compact(encoded: bytes) -> bytes:
    """One JSONL line: the compact ``JSON.stringify(value)`` of a rebuilt message (as ``ssblab generate`` writes)."""
    return encode_compact(Message.from_json(encoded).value) + b"\n"


def _inspect(args: argparse.Namespace) -> int:
    bundle, fetch, store = _load(args)
    if store is not None:
        store.close()
    report: dict[str, Any] = {"feed": f"@{b64(bundle.author)}.ed25519", "blocks": [], "dictionaries": {}}
    for i, ref in enumerate(bundle.blocks):
        data = fetch(ref.blob_id)
        s = ref.sketch
        report["blocks"].append({
            "index": i, "blob": f"&{b64(ref.blob_id)}.sha256", "bytes": None if data is None else len(data),
            "sequences": [s.sequence_base, s.sequence_base + s.length - 1], "messages": s.length,
            "timestamps": [s.first_timestamp, s.last_timestamp], "last": blocks.message_ref(ref.last_message_hash),
        })  # fmt: skip
    dicts = Dictionaries.load(bundle.dictionaries, fetch)
    for kind, chain in enumerate(dicts.chains):
        report["dictionaries"][KIND_NAMES[kind]] = {
            "entries": len(chain.entries), "head": None if chain.head is None else f"&{b64(chain.head.blob_id)}.sha256",
        }  # fmt: skip
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return 0
    print(f"feed {report['feed']}: {len(bundle.blocks)} blocks")
    for b in report["blocks"]:
        first, last = b["sequences"]
        print(f"  block {b['index']}: sequences {first}..{last}, {b['bytes']:,} bytes, {b['blob']}")
    for name, d in report["dictionaries"].items():
        print(f"  {name:10} {d['entries']:>7,} entries  {d['head']}")
    return 0
