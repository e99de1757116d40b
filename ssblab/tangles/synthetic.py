"""Seeded random message DAGs shaped like SSB data, without keys or signatures (for tests and benchmarks).

Strategy: ``rng`` (passed in) picks each message's author with ssb-fixtures' power law (``floor(u**2 * n)``:
feed 0 is the most active), and with probability ``reference_rate`` one or two references to recent messages
(replies, votes and mentions mostly name messages from the last few hundred). Messages come out in a causal
order: each feed's sequences count up from 1 and every reference names an earlier message.
"""

from __future__ import annotations

import base64
import hashlib
import random
from collections.abc import Iterator

from ssblab.tangles.clocks import CausalMessage

__all__ = ["message_dag"]


def _id(seed: int, index: int, prefix: str, suffix: str) -> str:
    digest = hashlib.sha256(f"ssblab.tangles/{seed}/{index}".encode()).digest()
    return prefix + base64.b64encode(digest).decode() + suffix


def message_dag(
    rng: random.Random,
    messages: int,
    feeds: int,
    *,
    reference_rate: float = 0.5,
    mean_age: float = 300.0,
    seed_tag: int = 0,
) -> Iterator[CausalMessage]:
    """``messages`` messages of ``feeds`` feeds with SSB-looking ids (``%…=.sha256``, ``@…=.ed25519``).

    Args:
        rng: the one source of randomness.
        messages: how many to produce.
        feeds: how many authors.
        reference_rate: probability that a message references others (1 or 2 of them).
        mean_age: mean distance back (in messages) of a reference; ages are exponential.
        seed_tag: mixed into the ids, so two DAGs can have disjoint ids.
    """
    authors = [_id(seed_tag, -1 - f, "@", ".ed25519") for f in range(feeds)]
    next_seq = [1] * feeds
    ids: list[str] = []
    for i in range(messages):
        feed = int(rng.random() ** 2 * feeds)
        refs: tuple[str, ...] = ()
        if ids and rng.random() < reference_rate:
            count = 1 if rng.random() < 0.8 else 2
            ages = {min(len(ids) - 1, int(rng.expovariate(1 / mean_age))) for _ in range(count)}
            refs = tuple(ids[-1 - age] for age in sorted(ages))
        ids.append(_id(seed_tag, i, "%", ".sha256"))
        yield CausalMessage(ids[-1], authors[feed], next_seq[feed], refs)
        next_seq[feed] += 1
