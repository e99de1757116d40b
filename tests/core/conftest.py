"""The `route` fixture: run a test through the compiled fast paths and through the pure-Python rules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ssblab.core import compiled, encoding, message

USERS = (encoding, message)  # the modules that take the compiled paths


@pytest.fixture(params=["compiled", "pure"])
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "compiled" and compiled.speedups is None:
        pytest.skip("ssblab.core._speedups is not built (installed without a C compiler)")
    if request.param == "pure":
        for module in USERS:
            monkeypatch.setattr(module, "_speedups", None)
    yield request.param
