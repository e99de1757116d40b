"""Shared archive fixtures: one small generated network, split into feeds (public, private and every type)."""

from __future__ import annotations

from collections import defaultdict

import pytest

from ssblab.core.message import Message
from ssblab.generate import generate_network


@pytest.fixture(scope="session")
def network() -> list[Message]:
    return list(generate_network(authors=6, messages=1500, seed=11))


@pytest.fixture(scope="session")
def feeds(network: list[Message]) -> list[list[Message]]:
    grouped: dict[str, list[Message]] = defaultdict(list)
    for msg in network:
        grouped[msg.author].append(msg)
    return list(grouped.values())
