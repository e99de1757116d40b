"""The cross-implementation shs1 suite (npm ``shs1-test``) against our handshake, both roles.

The harness spawns tests/net/shs1_peer.py once per case (45 server cases, misbehaving clients included, and
the client cases) and checks every byte it writes, including that it writes nothing after a bad message.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PEER = Path(__file__).with_name("shs1_peer.py")
REPO = Path(__file__).resolve().parents[2]


def peer_executable(tmp_path: Path) -> Path:
    """The harness runs a file, not a command line: wrap our interpreter and script in one."""
    wrapper = tmp_path / "shs1-peer"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" "{PEER}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


@pytest.mark.interop
@pytest.mark.parametrize(("command", "passed"), [
    ("shs1testserver", "Passed the server test suite"),
    ("shs1testclient", "Passed the client test suite"),
])
@pytest.mark.parametrize("seed", ["ssblab-1"])
def test_shs1_suite(node_bin: Path, tmp_path: Path, command: str, passed: str, seed: str) -> None:
    harness = node_bin / command
    if not harness.exists():
        pytest.skip(f"{command} not installed in interop/node_modules")
    run = subprocess.run([str(harness), str(peer_executable(tmp_path)), seed], capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert passed in run.stdout
