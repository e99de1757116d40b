"""Scenario data for the tutorials: the paper's §8.6 resource attack, injected into a generated network.

Strategy: the attack arrives as ordinary signed data, so the analyses see it exactly as they would see a real
one: ``size`` new feeds appear late, follow each other (a clique) and post a lot; one existing feed (the
``bridge``, a friend of the victim lured into following them) follows each of them, which puts the clique two hops
from the victim, inside its replication set. The messages are real (`ssblab.core.create_message`), chained onto the
bridge's feed where the generated network left it, so the combined log validates.

Invariants: deterministic (same network, arguments and ``seed``, same bytes); every timestamp is at or after
``start`` and increases along each feed; the new feeds' keys come from their own derivation
(``ssblab.widgets.clique/<seed>/<i>``), so they never collide with the network's authors.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from ssblab.core.keys import Keypair
from ssblab.core.message import Message, create_message
from ssblab.generate import GeneratedNetwork
from ssblab.widgets.common import WidgetError

__all__ = ["CliqueAttack", "clique_attack"]


SPAM = "Limited offer, follow for more! "  # filler of the attackers' posts: the point is their size


@dataclass(frozen=True)
class CliqueAttack:
    """The injected feeds and the messages that make the attack."""

    members: tuple[str, ...]
    bridge: str
    start: float  # ms: the first attack message
    messages: tuple[Message, ...]  # in log order, to append after the network's log


def _attackers(seed: int, size: int) -> list[Keypair]:
    return [Keypair.generate(hashlib.sha256(f"ssblab.widgets.clique/{seed}/{i}".encode()).digest())
            for i in range(size)]


def _last_message(network: GeneratedNetwork, feed: str) -> Message:
    last = None
    for msg in network.messages():
        if msg.author == feed:
            last = msg
    if last is None:
        raise WidgetError(f"clique attack: the bridge {feed!r} has no messages in the network to continue from")
    return last


def clique_attack(network: GeneratedNetwork, bridge: str, *, start: float, size: int = 5, posts: int = 40,
                  post_chars: int = 2_000, gap_ms: float = 60_000.0, seed: int = 86) -> CliqueAttack:
    """``size`` new feeds that follow each other and post ``posts`` long posts each, and the bridge's follows.

    Args:
        network: the network to attack (its log is the history the attack is appended to).
        bridge: an author of ``network`` who follows every attacker (a friend of the victim).
        start: the time of the first attack message (ms); pick it after the network's last message.
        size: how many attacker feeds (at least 3: a clique).
        posts: posts per attacker; ``post_chars`` their length.
        gap_ms: time between consecutive attack messages.
        seed: derives the attackers' keys.
    """
    if size < 3:
        raise WidgetError(f"clique attack: a clique needs at least 3 feeds, got size={size}")
    keys = _attackers(seed, size)
    members = tuple(k.id for k in keys)
    clock = (start + i * gap_ms for i in itertools.count())
    messages = list(_attacker_feeds(keys, members, posts, post_chars, clock))
    previous = _last_message(network, bridge)
    keypair = network.keypair(bridge)
    for member in members:
        previous = create_message(keypair, {"type": "contact", "contact": member, "following": True},
                                  previous=previous, timestamp=next(clock))
        messages.append(previous)
    return CliqueAttack(members, bridge, start, tuple(messages))


def _attacker_feeds(keys: list[Keypair], members: tuple[str, ...], posts: int, post_chars: int,
                    clock: Iterator[float]) -> Iterator[Message]:
    """Each attacker names itself, follows the others, then posts; feeds interleave round by round."""
    text = (SPAM * (post_chars // len(SPAM) + 1))[:post_chars]
    contents: list[list[dict[str, object]]] = []
    for i, key in enumerate(keys):
        own = [{"type": "about", "about": key.id, "name": f"deal-{i + 1}"}]
        own += [{"type": "contact", "contact": other, "following": True} for other in members if other != key.id]
        own += [{"type": "post", "text": f"{text} #{n + 1}"} for n in range(posts)]
        contents.append(own)
    heads: list[Message | None] = [None] * len(keys)
    for step in range(max(len(c) for c in contents)):
        for i, key in enumerate(keys):
            if step < len(contents[i]):
                msg = create_message(key, contents[i][step], previous=heads[i], timestamp=next(clock))
                heads[i] = msg
                yield msg
