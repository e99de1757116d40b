from __future__ import annotations

import pytest

from ssblab import Keypair, Message, create_message


def make_feed(keypair: Keypair, count: int, start: int = 0, previous: Message | None = None) -> list[Message]:
    """``count`` signed posts continuing ``previous``."""
    out: list[Message] = []
    for i in range(count):
        previous = create_message(keypair, {"type": "post", "text": f"post {start + i}"},
                                  previous=previous, timestamp=1_000 + start + i)
        out.append(previous)
    return out


@pytest.fixture
def alice() -> Keypair:
    return Keypair.generate(bytes([7]) * 32)


@pytest.fixture
def bob() -> Keypair:
    return Keypair.generate(bytes([8]) * 32)
