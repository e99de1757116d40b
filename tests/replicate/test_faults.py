"""A malicious or broken peer can never put an invalid message in the store: the feed is dropped from that peer
with an error naming the rule, its valid prefix stays; an unreachable peer is a clean, bounded error."""

from __future__ import annotations

import asyncio
import base64
import copy
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from ssblab.core.encoding import encode
from ssblab.core.keys import Keypair
from ssblab.core.message import Message, create_message
from ssblab.net.address import MultiserverAddress
from ssblab.net.errors import HandshakeError
from ssblab.replicate.hub import LiveStore
from ssblab.replicate.result import ReplicationResult
from ssblab.replicate.runner import ReplicateOptions, replicate
from ssblab.replicate.scheduler import Want
from ssblab.store import Store
from tests.signed import signed_posts

from .helpers import served
from .malicious import malicious_peer, silent_peer

AUTHOR = Keypair.generate(bytes([21]) * 32)
PEER = SigningKey(bytes([22]) * 32)
ME = SigningKey(bytes([23]) * 32)


def chain(count: int, start: Message | None = None, text: str = "post") -> list[Message]:
    return signed_posts(AUTHOR, count, start, text=text)


GOOD = chain(5)


def pull(store: Store, values: list[object], after: str = "end", stall: float = 5.0) -> ReplicationResult:
    async def main() -> ReplicationResult:
        async with malicious_peer(PEER, values, after) as address:
            options = ReplicateOptions(feeds=(Want(AUTHOR.id, None, "test"),), stall=stall, timeout=5)
            return await replicate(address, LiveStore(store), ME, options)

    return asyncio.run(asyncio.wait_for(main(), 30))


def stored(store: Store) -> list[str]:
    return [m.id for m in store.feed(AUTHOR.id)]


def forged_signature() -> dict[str, object]:
    value = copy.deepcopy(GOOD[2].value)
    value["content"]["text"] = "not what was signed"
    return value


def oversized() -> dict[str, object]:
    """A correctly signed third message over the 8192 limit (create_message refuses to make one)."""
    value = {"previous": GOOD[1].id, "author": AUTHOR.id, "sequence": 3, "timestamp": 1002, "hash": "sha256",
             "content": {"type": "post", "text": "x" * 9000}}
    signature = base64.b64encode(AUTHOR.sign(encode(value))).decode()
    return {**value, "signature": f"{signature}.sig.ed25519"}


def wrong_author() -> dict[str, object]:
    return create_message(Keypair.generate(bytes([24]) * 32), {"type": "post", "text": "x"}, timestamp=1).value


@pytest.mark.parametrize(("third", "code"), [
    (forged_signature(), "signature"),
    (GOOD[3].value, "sequence-order"),  # skips sequence 3
    (chain(1, GOOD[1], "other")[0].value, "fork"),  # a second signed message claiming sequence 3... as 3
    (oversized(), "size"),
    (wrong_author(), "wrong-author"),
    ({"not": "a message"}, "order"),
    ("a string", "not-object"),
])
def test_bad_message_drops_the_feed_and_keeps_the_prefix(tmp_path: Path, third: object, code: str) -> None:
    store = Store(tmp_path / "s")
    if code == "fork":  # a fork is only visible against what we hold: we hold 1..3 and are offered 4 after 3'
        store.append(GOOD[:3])
        fork = chain(2, GOOD[1], "other")
        values = [fork[1].value]
        result = pull(store, values)
        assert stored(store) == [m.id for m in GOOD[:3]]
    else:
        result = pull(store, [GOOD[0].value, GOOD[1].value, third, GOOD[3].value])
        assert stored(store) == [m.id for m in GOOD[:2]]
    assert [e.feed for e in result.errors] == [AUTHOR.id]
    assert result.errors[0].code == code, result.errors[0]
    assert AUTHOR.id in str(result.errors[0])


@pytest.mark.parametrize(("after", "code"), [("stall", "stalled"), ("hangup", "connection-closed"),
                                           ("garbage", "connection-closed")])
def test_broken_stream_keeps_the_prefix(tmp_path: Path, after: str, code: str) -> None:
    store = Store(tmp_path / "s")
    result = pull(store, [m.value for m in GOOD[:2]], after, stall=1.0)
    assert stored(store) == [m.id for m in GOOD[:2]]
    assert [(e.feed, e.code) for e in result.errors] == [(AUTHOR.id, code)]


def test_wrong_network_key_wrong_server_key_and_silence_are_clean_timeouts(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    store.append(GOOD)

    async def attempt(address: MultiserverAddress, network_key: bytes | None = None) -> None:
        options = ReplicateOptions(feeds=(Want(AUTHOR.id, None, "t"),), timeout=1.0,
                                   **({"network_key": network_key} if network_key else {}))
        await replicate(address, LiveStore(Store(tmp_path / "r")), ME, options)

    async def main() -> None:
        async with served(store, PEER) as (address, _):
            with pytest.raises(HandshakeError):
                await attempt(address, bytes(32))
            with pytest.raises(HandshakeError):
                await attempt(MultiserverAddress(address.host, address.port, bytes(ME.verify_key)))
        async with silent_peer() as port:
            started = asyncio.get_running_loop().time()
            with pytest.raises(HandshakeError, match=r"no answer within 1\.0 s"):
                await attempt(MultiserverAddress("127.0.0.1", port, bytes(PEER.verify_key)))
            assert asyncio.get_running_loop().time() - started < 3

    asyncio.run(asyncio.wait_for(main(), 30))


@pytest.mark.slow
def test_kill_9_mid_run_then_resume(tmp_path: Path) -> None:
    """``ssblab replicate`` killed with SIGKILL mid-run, then rerun: the replica equals the source exactly."""
    import json
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    from ssblab.generate import GeneratedNetwork, NetworkSpec

    from .helpers import ids_by_feed
    from .jspeers import ssblab_serve

    net = GeneratedNetwork(NetworkSpec(authors=20, messages=6000, seed=3))
    with Store(tmp_path / "source") as source:
        source.append(net.messages())
        expected = ids_by_feed(source)
    net.write_secrets(tmp_path / "keys")
    feeds = tmp_path / "feeds.json"
    feeds.write_text(json.dumps(net.ids))
    replica = tmp_path / "replica"
    with ssblab_serve(tmp_path / "source", tmp_path / "keys" / "secret") as address:
        command = [sys.executable, "-m", "ssblab", "replicate", "--store", str(replica), "--remote", str(address),
                   "--feeds", str(feeds), "--json"]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        count, deadline = 0, time.monotonic() + 60
        while count == 0 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
            if (replica / "ssblab.sqlite3").exists():
                with sqlite3.connect(replica / "ssblab.sqlite3") as db:
                    try:
                        count = db.execute("SELECT count(*) FROM messages").fetchone()[0]
                    except sqlite3.OperationalError:
                        count = 0
        process.send_signal(signal.SIGKILL)
        process.wait()
        with Store(replica) as killed:  # reopening needs no repair: whole batches or nothing
            kept = killed.count()
        assert 0 < count <= kept < 6000, "the kill should land mid-run"
        done = subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    with Store(replica) as store:
        assert ids_by_feed(store) == expected
    assert report["messages"] == 6000 - kept and report["errors"] == []  # no duplicates, no gaps
