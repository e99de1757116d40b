"""A real JS ``ssb-server@16`` on loopback for the interop tests, always stopped (SIGTERM, then SIGKILL after 10 s).

``--config`` is needed: ssb-server does not read ``DIR/config`` by itself. The config listens on 127.0.0.1 only,
with no LAN broadcast and no gossip, so a test's server talks to nothing but the test.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from ssblab.core.keys import Keypair
from ssblab.net.address import MultiserverAddress
from tests.jsref import NODE_MODULES

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
