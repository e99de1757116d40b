"""Interop with real JS peers: ssblab pulls an ssb-fixtures dataset from ssb-server@16 (and its blobs), a JS
ssb-client reads ssblab's history streams and blobs, and ssb-server replicates from ``ssblab serve``."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from ssblab.core.keys import Keypair
from ssblab.net.address import MultiserverAddress
from ssblab.net.aio import connect
from ssblab.pipeline.sources import read_source
from ssblab.store import Store

from .helpers import ids_by_feed
from .jspeers import fixtures_dataset, require_js, run_node_script, ssb_server, ssblab_serve

pytestmark = [pytest.mark.interop, pytest.mark.slow]
MESSAGES, AUTHORS = 2500, 30
BLOB = b"ssblab interop blob\n" * 500

ADD_BLOB_JS = """
const ssbClient = require('ssb-client'); const pull = require('pull-stream'); const ssbKeys = require('ssb-keys')
const [remote, secretPath, b64] = process.argv.slice(1)
const keys = ssbKeys.loadSync(secretPath)
const caps = { shs: '1KHLiKZvAvjbY1ziZEHMXawbCEIM6qwjCDm3VYRan/s=' }
ssbClient(keys, { remote, caps, manifest: { blobs: { add: 'sink' }, publish: 'async' } }, (err, rpc) => {
  if (err) throw err
  pull(pull.values([Buffer.from(b64, 'base64')]), rpc.blobs.add((err, id) => {
    if (err) throw err
    rpc.publish({ type: 'post', text: 'a blob: ' + id, mentions: [{ link: id }] }, (err, msg) => {
      if (err) throw err
      console.log(JSON.stringify({ blob: id, key: msg.key })); rpc.close(true, () => process.exit(0))
    })
  }))
})
"""

READ_JS = """
const ssbClient = require('ssb-client'); const pull = require('pull-stream'); const ssbKeys = require('ssb-keys')
const [remote, feedsJson, blobId] = process.argv.slice(1)
const caps = { shs: '1KHLiKZvAvjbY1ziZEHMXawbCEIM6qwjCDm3VYRan/s=' }
const manifest = { createHistoryStream: 'source', blobs: { get: 'source', has: 'async' } }
ssbClient(ssbKeys.generate(), { remote, caps, manifest }, (err, rpc) => {
  if (err) throw err
  const out = { feeds: {} }
  pull(pull.values(JSON.parse(feedsJson)), pull.asyncMap((id, cb) => {
    pull(rpc.createHistoryStream({ id, keys: true }), pull.collect((err, msgs) => {
      if (err) return cb(err)
      out.feeds[id] = msgs.map(m => m.key); cb()
    }))
  }), pull.collect((err) => {
    if (err) throw err
    rpc.blobs.has(blobId, (err, has) => {
      if (err) throw err
      out.has = has
      pull(rpc.blobs.get(blobId), pull.collect((err, bufs) => {
        if (err) throw err
        out.blob = Buffer.concat(bufs).toString('base64')
        process.stdout.write(JSON.stringify(out) + '\\n', () => rpc.close(true, () => process.exit(0)))
      }))
    })
  }))
})
"""


def log_ids(log: Path) -> dict[str, list[str]]:
    feeds: dict[str, list[str]] = {}
    for item in read_source(log):
        assert item.message is not None
        feeds.setdefault(item.message.author, []).append(item.message.id)
    return feeds


async def server_log(address: MultiserverAddress, master: SigningKey) -> dict[str, list[str]]:
    """The JS server's whole log by feed, read as its master with createLogStream."""
    feeds: dict[str, list[tuple[int, str]]] = {}
    async with connect(address, master) as rpc:
        async for record in rpc.source("createLogStream", {"keys": True}):
            feeds.setdefault(record["value"]["author"], []).append((record["value"]["sequence"], record["key"]))
    return {feed: [key for _, key in sorted(items)] for feed, items in feeds.items()}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_js()
    directory = tmp_path_factory.mktemp("fixtures")
    fixtures_dataset(directory, seed=5, messages=MESSAGES, authors=AUTHORS)
    return directory


@pytest.fixture(scope="module")
def js_server(dataset: Path) -> Iterator[tuple[MultiserverAddress, SigningKey, Path]]:
    with ssb_server(dataset) as (address, master):
        yield address, master, dataset


def wait_indexed(address: MultiserverAddress, master: SigningKey, expected: int) -> dict[str, list[str]]:
    deadline = time.monotonic() + 60
    while True:
        log = asyncio.run(asyncio.wait_for(server_log(address, master), 60))
        if sum(map(len, log.values())) >= expected or time.monotonic() > deadline:
            return log
        time.sleep(0.5)


def test_ssblab_replicates_js_server_with_blobs(js_server: tuple[MultiserverAddress, SigningKey, Path],
                                               tmp_path: Path) -> None:
    address, master, data = js_server
    added = json.loads(run_node_script(ADD_BLOB_JS, [str(address), str(data / "secret"),
                                                     base64.b64encode(BLOB).decode()]))
    expected = wait_indexed(address, master, MESSAGES + 1)
    assert sum(map(len, expected.values())) >= MESSAGES + 1 and added["key"] in expected[master_id(master)]
    feeds = tmp_path / "feeds.json"
    feeds.write_text(json.dumps(sorted(expected)))
    command = [sys.executable, "-m", "ssblab", "replicate", "--store", str(tmp_path / "replica"), "--remote",
               str(address), "--feeds", str(feeds), "--blobs", "--json"]
    done = subprocess.run(command, capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    report = json.loads(done.stdout)
    assert report["errors"] == [] and report["blobs"] == 1 and report["mode"] == "history"
    with Store(tmp_path / "replica") as replica:
        assert ids_by_feed(replica) == expected
        assert replica.blobs.get(added["blob"]) == BLOB
    rerun = subprocess.run(command, capture_output=True, timeout=300, check=False)
    assert json.loads(rerun.stdout)["messages"] == 0  # resumable: nothing new to fetch


def master_id(master: SigningKey) -> str:
    return f"@{base64.b64encode(bytes(master.verify_key)).decode()}.ed25519"


def test_js_client_reads_ssblab_serve(dataset: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    with Store(store_dir) as store:
        store.append(read_source(dataset / "flume" / "log.offset"))
        blob = store.blobs.add(BLOB)
        expected = ids_by_feed(store)
    identity = tmp_path / "secret"
    Keypair.generate().write_secret_file(identity)
    with ssblab_serve(store_dir, identity) as address:
        out = json.loads(run_node_script(READ_JS, [str(address), json.dumps(sorted(expected)), blob]))
    assert out["feeds"] == expected and out["has"] is True
    assert hashlib.sha256(base64.b64decode(out["blob"])).digest() == base64.b64decode(blob[1:-7])
    assert expected == log_ids(dataset / "flume" / "log.offset")


@pytest.mark.parametrize("legacy", [True, False], ids=["legacy+ebt", "ebt-only"])
def test_js_server_replicates_from_ssblab_serve(dataset: Path, tmp_path: Path, legacy: bool) -> None:
    """ssb-server, whose identity follows every feed, pulls them all from ``ssblab serve`` (by EBT alone, or with
    legacy createHistoryStream replication as well)."""
    store_dir, js_dir = tmp_path / "store", tmp_path / "js"
    with Store(store_dir) as store:
        store.append(read_source(dataset / "flume" / "log.offset"))
        expected = ids_by_feed(store)
        blob = store.blobs.add(BLOB)
    identity, js_dir = tmp_path / "secret", tmp_path / "js"
    Keypair.generate().write_secret_file(identity)
    js_dir.mkdir()
    Keypair.generate().write_secret_file(js_dir / "secret")

    async def pull(js: MultiserverAddress, master: SigningKey, ours: MultiserverAddress
                   ) -> tuple[dict[str, list[str]], bool]:
        async with connect(js, master) as rpc:
            for feed in expected:  # ssb-friends turns follows into replication requests
                await rpc.call_async("publish", {"type": "contact", "contact": feed, "following": True}, timeout=10)
            await rpc.call_async("gossip.connect", str(ours), timeout=20)
            deadline, log = time.monotonic() + 120, {}
            while time.monotonic() < deadline:
                await asyncio.sleep(1)
                full = await server_log(js, master)
                log = {feed: ids for feed, ids in full.items() if feed != master_id(master)}
                if log == expected:
                    break
            await rpc.call_async("blobs.want", blob, timeout=30)  # ssb-blobs asks its peers: we answer
            return log, await rpc.call_async("blobs.has", blob, timeout=10)

    with ssblab_serve(store_dir, identity) as ours, ssb_server(js_dir, legacy) as (js, master):
        got, has_blob = asyncio.run(asyncio.wait_for(pull(js, master, ours), 180))
    assert got == expected and has_blob is True


def test_ssblab_replicates_js_server_by_ebt_within_hops(js_server: tuple[MultiserverAddress, SigningKey, Path],
                                                        tmp_path: Path) -> None:
    """``--mode ebt --hops 2``: exactly the feeds ssb-server itself replicates (its friends.hops <= 2), whole."""
    address, master, _ = js_server
    log = wait_indexed(address, master, MESSAGES)

    async def server_hops() -> dict[str, int]:
        async with connect(address, master) as rpc:
            hops: dict[str, int] = await rpc.call_async("friends.hops", {"start": address.feed_id, "max": 2},
                                                        timeout=30)
            return hops

    hops = asyncio.run(asyncio.wait_for(server_hops(), 60))
    command = [sys.executable, "-m", "ssblab", "replicate", "--store", str(tmp_path / "r"), "--remote", str(address),
               "--mode", "ebt", "--hops", "2", "--json"]
    done = subprocess.run(command, capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    report = json.loads(done.stdout)
    assert report["mode"] == "ebt" and report["errors"] == []
    with Store(tmp_path / "r") as replica:
        got = ids_by_feed(replica)
    assert set(got) == {feed for feed, value in hops.items() if 0 <= value <= 2 and feed in log}
    assert got == {feed: log[feed] for feed in got}
