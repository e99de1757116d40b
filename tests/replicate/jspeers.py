"""Real JS peers for the interop tests: ssb-server@16 on loopback over an ssb-fixtures dataset, node scripts.

Every process started here is stopped in a ``finally`` (SIGTERM, then SIGKILL after 10 s), so a failing test
never leaves a server behind.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from ssblab.core.keys import Keypair
from ssblab.net.address import MultiserverAddress
from tests.jsref import NODE_MODULES, ssb_fixtures

SSB_SERVER = NODE_MODULES / "ssb-server" / "bin.js"
STARTUP_TIMEOUT = 60.0


def require_js() -> None:
    if not SSB_SERVER.exists() or not (NODE_MODULES / "ssb-client").is_dir():
        pytest.skip("ssb-server/ssb-client are not installed (run `npm ci --ignore-scripts --prefix interop`)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited early: {log.read_text()[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"nothing listens on {port} within {STARTUP_TIMEOUT} s: {log.read_text()[-2000:]}")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def fixtures_dataset(directory: Path, seed: int, messages: int, authors: int) -> Path:
    """An ssb-fixtures dataset in ``directory`` (made once; ssb-fixtures would append to an existing log)."""
    log = directory / "flume" / "log.offset"
    if not log.exists():
        ssb_fixtures(directory, seed, messages, authors)
    return log


@contextmanager
def ssb_server(data: Path, legacy: bool = True) -> Iterator[tuple[MultiserverAddress, SigningKey]]:
    """``ssb-server start`` over ``data`` on a free loopback port; yields its address and master key.

    ``legacy`` turns ssb-replicate's createHistoryStream replication on (EBT is always on)."""
    port = free_port()
    incoming = {"host": "127.0.0.1", "port": port, "scope": ["device", "local", "public"], "transform": "shs"}
    config = {"connections": {"incoming": {"net": [incoming]}, "outgoing": {"net": [{"transform": "shs"}]}},
              "local": False, "gossip": {"local": False, "pub": False, "autoconnect": False},
              "replicate": {"legacy": legacy}}
    (data / "config").write_text(json.dumps(config))
    log = data / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(["node", str(SSB_SERVER), "start", "--path", str(data), "--config",
                                    str(data / "config")], stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process, log)
        master = Keypair.from_secret_file(data / "secret")
        yield MultiserverAddress("127.0.0.1", port, master.public), SigningKey(master.seed)
    finally:
        stop(process)


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
