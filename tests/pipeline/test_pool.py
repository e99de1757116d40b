"""The local engine's pool: its workers make Arrow batches without ever loading pandas, whether forked or started
by a fork server, and a worker that inherited pandas keeps it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def probe(values: list[int]) -> tuple[int, bool]:
    """In a worker: an Arrow array of ``values`` (pyarrow's first conversion of a Python list), and whether pandas
    is loaded there."""
    import pyarrow as pa

    return len(pa.array(values, pa.int64())), "pandas" in sys.modules


def _run(preamble: str) -> str:
    script = f"""
import sys, threading
sys.path.insert(0, {str(REPO)!r})
{preamble}
from ssblab.pipeline.pool import pool_map, worker_pool
from tests.pipeline.test_pool import probe
with worker_pool(2) as pool:
    print(list(pool_map(pool, probe, [[1], [2, 3], []])), "pandas" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("preamble", ["", "threading.Thread(target=threading.Event().wait, daemon=True).start()"],
                         ids=["forked", "fork-server"])
def test_workers_never_load_pandas(preamble: str) -> None:
    assert _run(preamble) == "[(1, False), (2, False), (0, False)] False"


def test_a_worker_that_inherited_pandas_keeps_it() -> None:
    assert _run("import pandas") == "[(1, True), (2, True), (0, True)] True"
