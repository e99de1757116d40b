"""The `route` fixture: run a test through the compiled fast paths and through the pure-Python rules."""

from __future__ import annotations

import pytest

from ssblab.core import compiled


@pytest.fixture(params=["compiled", "pure"])
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "compiled" and compiled.built() is None:
        pytest.skip("ssblab.core._speedups is not built (installed without a C compiler)")
    if request.param == "pure":
        monkeypatch.setenv(compiled.PURE_PYTHON, "1")
    else:
        monkeypatch.delenv(compiled.PURE_PYTHON, raising=False)
    return str(request.param)
