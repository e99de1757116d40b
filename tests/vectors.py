"""Where the conformance vectors live: the npm packages first (any machine installs them), then ../shared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "interop" / "node_modules"
SHARED_VECTORS = ROOT.parent / "shared" / "vectors"


def _candidates(npm_path: str | None, shared_path: str) -> list[Path]:
    return ([NODE_MODULES / npm_path] if npm_path else []) + [SHARED_VECTORS / shared_path]


def optional_json(npm_path: str | None, shared_path: str) -> Any | None:
    """The parsed vector file, or None when no copy is on this machine (parametrized tests then skip)."""
    path = next((p for p in _candidates(npm_path, shared_path) if p.exists()), None)
    return json.loads(path.read_text(encoding="utf-8")) if path else None


def find_vector(npm_path: str | None, shared_path: str) -> Path:
    """The path of a vector file, or skip the test saying how to get it."""
    candidates = _candidates(npm_path, shared_path)
    for path in candidates:
        if path.exists():
            return path
    hint = "`make test` installs interop/" if npm_path else "this vector is not published on npm"
    pytest.skip(f"vector data not found ({', '.join(map(str, candidates))}); {hint}")


def load_json(npm_path: str | None, shared_path: str) -> Any:
    return json.loads(find_vector(npm_path, shared_path).read_text(encoding="utf-8"))
