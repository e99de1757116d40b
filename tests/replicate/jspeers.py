"""Real JS peers for the interop tests: ssb-server@16 on loopback over an ssb-fixtures dataset, node scripts.

Every process started here is stopped in a ``finally`` (SIGTERM, then SIGKILL after 10 s), so a failing test
never leaves a server behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ssblab.net.address import MultiserverAddress
from tests.jsref import NODE_MODULES, ssb_fixtures
from tests.ssbserver import free_port, require_js, ssb_server, stop, wait_for_port

__all__ = ["fixtures_dataset", "free_port", "require_js", "run_node_script", "ssb_server", "ssblab_serve"]

def fixtures_dataset(directory: Path, seed: int, messages: int, authors: int) -> Path:
    """An ssb-fixtures dataset in ``directory`` (made once; ssb-fixtures would append to an existing log)."""
    log = directory / "flume" / "log.offset"
    if not log.exists():
        ssb_fixtures(directory, seed, messages, authors)
    return log


@contextmanager
def ssblab_serve(store: Path, identity: Path, extra: Sequence[str] = ()) -> Iterator[MultiserverAddress]:
    """``python -m ssblab serve`` as a subprocess; yields the address it prints."""
    port = free_port()
    log = store.parent / f"{store.name}-serve.log"
    with log.open("wb") as err:
        process = subprocess.Popen([sys.executable, "-m", "ssblab", "serve", "--store", str(store), "--identity",
                                    str(identity), "--listen", f"127.0.0.1:{port}", *extra],
                                   stdout=subprocess.PIPE, stderr=err)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode().strip()
        if not line:
            raise RuntimeError(f"ssblab serve printed no address: {log.read_text()[-2000:]}")
        wait_for_port(port, process, log)
        from ssblab.net.address import parse_multiserver
        yield parse_multiserver(line)
    finally:
        stop(process)


def run_node_script(script: str, args: Sequence[str], timeout: float = 120.0) -> str:
    """Run a node script text with the interop packages on NODE_PATH; its stdout."""
    done = subprocess.run(["node", "-e", script, "--", *args], capture_output=True, timeout=timeout,
                          env={**os.environ, "NODE_PATH": str(NODE_MODULES)}, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"node script failed ({done.returncode}): {done.stderr.decode()[:2000]}")
    return done.stdout.decode()
