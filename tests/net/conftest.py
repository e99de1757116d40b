"""Shared fixtures for the network-layer tests: where the vectors and the npm peers live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_MODULES = REPO / "interop" / "node_modules"
SHARED_VECTORS = REPO.parent / "shared" / "vectors"


@pytest.fixture(scope="session")
def shs_vectors() -> list[dict[str, Any]]:
    """test-secret-handshake data.json: the npm package first, then ../shared, else skip."""
    candidates = [
        NODE_MODULES / "test-secret-handshake" / "data.json",
        SHARED_VECTORS / "test-secret-handshake" / "data.json",
    ]
    path = next((p for p in candidates if p.exists()), None)
    if path is None:
        pytest.skip("test-secret-handshake data.json not found (run `npm ci --prefix interop`)")
    records: list[dict[str, Any]] = json.loads(path.read_text())
    return records


@pytest.fixture(scope="session")
def node_bin() -> Path:
    """interop/node_modules/.bin, or skip when the npm peers are not installed."""
    path = NODE_MODULES / ".bin"
    if not path.is_dir():
        pytest.skip("interop/node_modules is not installed (run `npm ci --ignore-scripts --prefix interop`)")
    return path
