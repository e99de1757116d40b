from __future__ import annotations

import pytest

from ssblab import Keypair


@pytest.fixture
def alice() -> Keypair:
    return Keypair.generate(bytes([7]) * 32)


@pytest.fixture
def bob() -> Keypair:
    return Keypair.generate(bytes([8]) * 32)
