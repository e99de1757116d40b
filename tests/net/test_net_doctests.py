"""The Examples sections of the net modules run as doctests, so the documented API stays true."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from ssblab.net import address, boxstream, muxrpc, packetstream, shs


@pytest.mark.parametrize("module", [address, boxstream, muxrpc, packetstream, shs], ids=lambda m: m.__name__)
def test_doctests(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
