"""kill -9 at any moment leaves a store that reopens consistent (no gaps, heads match, nothing half-written)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import orjson
import pytest

from ssblab import Keypair
from ssblab.pipeline.verify import verify_path
from ssblab.store import Store
from tests.signed import signed_posts

WRITER = """
import sys
from ssblab.store import Store
from ssblab.pipeline.sources import read_source
with Store(sys.argv[1]) as store:
    store.append(read_source(sys.argv[2]), on_batch=lambda n: print(n, flush=True))
"""


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.03, 0.1])
def test_kill_9_mid_import_leaves_a_consistent_store(tmp_path, delay: float) -> None:
    feeds = [signed_posts(Keypair.generate(bytes([i]) * 32), 1200) for i in range(1, 6)]
    lines = [orjson.dumps(m.value) for group in zip(*feeds, strict=True) for m in group]
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    store_dir = tmp_path / "store"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(store_dir), str(source)],
                              stdout=subprocess.PIPE)
    assert writer.stdout.readline().strip() == b"2000"  # one batch committed, more to come
    time.sleep(delay)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()

    with Store(store_dir) as store:
        stored = store.count()
        assert 2000 <= stored < len(lines)
        heads = store.heads()
        for feed in feeds:  # every feed is a gap-free prefix that ends at its head
            head = heads.get(feed[0].author)
            n = head.sequence if head else 0
            assert [m.id for m in store.feed(feed[0].author)] == [m.id for m in feed[:n]]
        assert sum(h.sequence for h in heads.values()) == stored
        resumed = store.append([m for group in feeds for m in group])
        assert resumed.valid == len(lines) - stored and resumed.duplicates == stored and resumed.ok
    assert verify_path(store_dir).valid == len(lines)
