"""A seeded generator of SSB networks: real keys, real signatures, ssb-fixtures' distributions, streaming.

Strategy: one `random.Random(seed)` drives everything, in one fixed order of calls, so a seed gives the same
bytes on every run and platform (no set or hash order is ever consulted). Keys come from
``sha256("ssblab.generate/<seed>/<index>")``. Each step picks an author with ssb-fixtures' power law
(``floor(u**2 * n)``: author 0 is the most active), advances a global clock by an exponential gap, draws a
message type, builds the content and signs it as the next message of the author's feed.

Memory stays flat in the number of messages: the generator keeps each feed's head, each author's current
follows and blocks (bounded by authors²), and a window of recent public posts for replies and votes. Replies
take their target from that window skewed towards the newest; a thread with more posts in the window is
likelier to be hit again, which gives the heavy-tailed thread sizes of real networks.

Invariants: messages come out in global log order (timestamps strictly increase, so within each feed too);
``root`` and ``branch`` and vote links name earlier public posts, and a ``root`` is always a thread root;
the first message of every feed is an about naming its author; private posts are boxed to 1-7 recipients,
the author first.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssblab.core.errors import InvalidMessage, SsbError
from ssblab.core.keys import Keypair
from ssblab.core.message import Message, create_message, hmac_key_bytes
from ssblab.core.private_box import box
from ssblab.generate import content as build
from ssblab.generate import frequencies as freq
from ssblab.generate.content import PostRef, Weighted, skewed_index
from ssblab.generate.text import TextSource

__all__ = [
    "DEFAULT_MEAN_GAP_MS",
    "DEFAULT_START_MS",
    "DEFAULT_WINDOW",
    "GeneratedNetwork",
    "InvalidSpec",
    "NetworkSpec",
    "derive_keypairs",
    "generate_network",
]

DEFAULT_START_MS = 1_577_836_800_000  # 2020-01-01T00:00:00Z
DEFAULT_MEAN_GAP_MS = 60_000.0  # one message a minute across the network: a million span about two years
DEFAULT_WINDOW = 4096
MAX_AUTHORS = 100_000  # 100 million authors once grew the generator to 13 GB before it wrote a message


class InvalidSpec(SsbError, ValueError):
    """A `NetworkSpec` that cannot describe a network (no authors, a fraction outside [0, 1], ...)."""

    code = "generate-spec"


@dataclass(frozen=True)
class NetworkSpec:
    """What to generate; equal specs give byte-identical networks.

    Attributes:
        authors: number of feeds (keypairs), at least 1.
        messages: number of messages in all.
        seed: the one source of randomness.
        hmac_key: a test network's HMAC key (32 bytes, or their base64), None for the main network.
        start_time_ms: timestamp of the first message.
        mean_gap_ms: mean time between consecutive messages of the network (exponential gaps).
        private_fraction: share of private messages (the rest follows ssb-fixtures' public type mix).
        activity_skew: the author power law ``floor(u**skew * n)``; 1 is uniform, larger is more skewed.
        window: how many recent public posts replies and votes choose from.
        name_others: share of abouts (after each feed's first) that give a name to another feed, one the author
            follows where there is one; 0, the default, draws nothing for it, so other networks stay as they were.
    """

    authors: int
    messages: int
    seed: int
    hmac_key: str | bytes | None = field(default=None, repr=False)
    start_time_ms: int = DEFAULT_START_MS
    mean_gap_ms: float = DEFAULT_MEAN_GAP_MS
    private_fraction: float = freq.DEFAULT_PRIVATE_FRACTION
    activity_skew: float = freq.ACTIVITY_SKEW
    window: int = DEFAULT_WINDOW
    name_others: float = 0.0

    def __post_init__(self) -> None:
        self._check_types()
        checks = (
            (self.authors >= 1, f"authors must be at least 1, got {self.authors}"),
            (self.authors <= MAX_AUTHORS, f"authors must be at most {MAX_AUTHORS:,} (every author's keys and "
                                          f"state stay in memory, ~1 KB each), got {self.authors:,}"),
            (self.messages >= 0, f"messages must not be negative, got {self.messages}"),
            (0 <= self.private_fraction <= 1, f"private_fraction must be in [0, 1]: {self.private_fraction}"),
            (self.activity_skew > 0, f"activity_skew must be positive, got {self.activity_skew}"),
            (self.mean_gap_ms >= 0, f"mean_gap_ms must not be negative, got {self.mean_gap_ms}"),
            (self.window >= 1, f"window must be at least 1, got {self.window}"),
            (0 <= self.name_others <= 1, f"name_others must be in [0, 1]: {self.name_others}"),
        )
        for ok, problem in checks:
            if not ok:
                raise InvalidSpec(f"NetworkSpec: {problem}")
        try:
            hmac_key_bytes(self.hmac_key)  # refuse a bad key now, not at the first message
        except InvalidMessage as exc:
            raise InvalidSpec(f"NetworkSpec: hmac_key: {exc}") from None

    def _check_types(self) -> None:
        """Numbers where numbers belong (a spec read from a JSON file may hold anything)."""
        for name, kinds in (("authors", int), ("messages", int), ("seed", int), ("start_time_ms", int),
                            ("window", int), ("mean_gap_ms", (int, float)), ("private_fraction", (int, float)),
                            ("activity_skew", (int, float))):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, kinds):
                raise InvalidSpec(f"NetworkSpec: {name} must be a number{' (an integer)' if kinds is int else ''},"
                                  f" got {value!r:.40}")


def derive_keypairs(seed: int, count: int) -> tuple[Keypair, ...]:
    """The authors' identities: ed25519 seeds ``sha256("ssblab.generate/<seed>/<i>")``."""
    seeds = (hashlib.sha256(f"ssblab.generate/{seed}/{i}".encode()).digest() for i in range(count))
    return tuple(Keypair.generate(s) for s in seeds)


class GeneratedNetwork:
    """A network description with its authors' keys; `messages` streams the log (again on every call)."""

    def __init__(self, spec: NetworkSpec) -> None:
        self.spec = spec
        self.keypairs = derive_keypairs(spec.seed, spec.authors)
        self._by_id = {kp.id: kp for kp in self.keypairs}

    @property
    def ids(self) -> list[str]:
        return [kp.id for kp in self.keypairs]

    def keypair(self, feed: str) -> Keypair:
        """The keypair of one of the network's authors (KeyError for a feed that is not one of them)."""
        return self._by_id[feed]

    def messages(self) -> Iterator[Message]:
        """The messages in global log order."""
        return _Generator(self.spec, self.keypairs).run()

    def write_secrets(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write every author's ssb-keys secret file, named as ssb-fixtures ``--allkeys`` does.

        Author 0 (the most active, like ssb-fixtures' database owner) gets ``secret``, author i ``secret-i``.
        Existing files are never overwritten (FileExistsError).
        """
        Path(directory).mkdir(parents=True, exist_ok=True)
        paths = [Path(directory) / ("secret" if i == 0 else f"secret-{i}") for i in range(len(self.keypairs))]
        for keypair, path in zip(self.keypairs, paths, strict=True):
            keypair.write_secret_file(path)
        return paths


def generate_network(authors: int, messages: int, seed: int, **options: Any) -> Iterator[Message]:
    """Stream a generated network's messages; ``options`` are the other `NetworkSpec` fields.

    Examples:
        >>> msgs = list(generate_network(authors=3, messages=5, seed=1))
        >>> len(msgs), msgs[0].sequence, msgs[0].content["type"]
        (5, 1, 'about')
    """
    return GeneratedNetwork(NetworkSpec(authors, messages, seed, **options)).messages()


class _PostWindow:
    """The latest public posts in a ring buffer; picks skew towards the newest."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list[PostRef] = []
        self.next = 0  # where the next post goes once the ring is full

    def add(self, post: PostRef) -> None:
        if len(self.items) < self.capacity:
            self.items.append(post)
        else:
            self.items[self.next] = post
            self.next = (self.next + 1) % self.capacity

    def pick(self, rng: random.Random, skew: float) -> PostRef | None:
        if not self.items:
            return None
        age = skewed_index(rng, len(self.items), skew)  # 0 is the newest
        size = len(self.items)
        newest = (self.next - 1) % size if size == self.capacity else size - 1
        return self.items[(newest - age) % size]


class _Generator:
    """The mutable state of one generation run (per-feed heads, social graph, post window, clock)."""

    def __init__(self, spec: NetworkSpec, keypairs: tuple[Keypair, ...]) -> None:
        self.spec = spec
        self.keypairs = keypairs
        self.ids = [kp.id for kp in keypairs]
        self.hmac_key = hmac_key_bytes(spec.hmac_key)
        self.rng = random.Random(spec.seed)
        self.text = TextSource(self.rng)
        self.heads: list[Message | None] = [None] * spec.authors
        self.follows: list[dict[int, None]] = [{} for _ in keypairs]  # dicts: ordered, unlike sets
        self.blocks: list[dict[int, None]] = [{} for _ in keypairs]
        self.posts = _PostWindow(spec.window)
        self.clock = spec.start_time_ms
        public = 1.0 - spec.private_fraction
        total = sum(freq.PUBLIC_TYPE_COUNTS.values())
        weights = {kind: public * count / total for kind, count in freq.PUBLIC_TYPE_COUNTS.items()}
        self.types = Weighted({**weights, "private": spec.private_fraction})
        self.contacts = Weighted(freq.CONTACT_KINDS)

    def run(self) -> Iterator[Message]:
        for _ in range(self.spec.messages):
            yield self.step()

    def step(self) -> Message:
        rng = self.rng
        author = skewed_index(rng, len(self.ids), self.spec.activity_skew)
        self.clock += 1 + int(rng.expovariate(1 / self.spec.mean_gap_ms)) if self.spec.mean_gap_ms else 1
        head = self.heads[author]
        content = self._first_about(author) if head is None else self._content(author)
        msg = create_message(self.keypairs[author], content, previous=head, timestamp=self.clock,
                             hmac_key=self.hmac_key)
        self.heads[author] = msg
        if isinstance(content, dict) and content["type"] == "post":
            self.posts.add(PostRef(msg.id, content.get("root")))
        return msg

    def _content(self, author: int) -> dict[str, Any] | str:
        kind = self.types.draw(self.rng)
        if kind == "vote":
            target = self.posts.pick(self.rng, freq.VOTE_SKEW)
            if target is not None:
                return build.vote_content(self.rng, target)
        elif kind == "contact" and len(self.ids) > 1:
            return self._contact(author)
        elif kind == "about":
            return self._about(author)
        elif kind == "private":
            return self._private(author)
        reply_to = self.posts.pick(self.rng, freq.REPLY_SKEW) if self.rng.random() < freq.POST_REPLY else None
        return build.post_content(self.rng, self.text, reply_to=reply_to, pick_feed=self._popular_feed)

    def _popular_feed(self) -> str:
        return self.ids[skewed_index(self.rng, len(self.ids), freq.POPULARITY_SKEW)]

    def _other_author(self, author: int) -> int:
        """A popular author other than ``author`` (needs at least two authors)."""
        while True:
            other = skewed_index(self.rng, len(self.ids), freq.POPULARITY_SKEW)
            if other != author:
                return other

    def _contact(self, author: int) -> dict[str, Any]:
        """Follow, unfollow, block or unblock; an un-* with nothing to undo becomes a follow or block."""
        kind = self.contacts.draw(self.rng)
        follows, blocks = self.follows[author], self.blocks[author]
        if kind == "unfollow" and follows:
            target = list(follows)[self.rng.randrange(len(follows))]
        elif kind == "unblock" and blocks:
            target = list(blocks)[self.rng.randrange(len(blocks))]
        else:
            kind = {"unfollow": "follow", "unblock": "block"}.get(kind, kind)
            target = self._other_author(author)
        # One relation per pair and the latest message wins (ssb-friends): following and blocking exclude.
        follows.pop(target, None)
        blocks.pop(target, None)
        if kind in ("follow", "block"):
            (follows if kind == "follow" else blocks)[target] = None
        return build.contact_content(kind, self.ids[target])

    def _first_about(self, author: int) -> dict[str, Any]:
        """New feeds introduce themselves: a name, and half of the time a picture."""
        fields = ("name", "image") if self.rng.random() < 0.5 else ("name",)
        return build.about_content(self.rng, self.text, self.ids[author], fields)

    def _about(self, author: int) -> dict[str, Any]:
        if self.spec.name_others and len(self.ids) > 1 and self.rng.random() < self.spec.name_others:
            follows = list(self.follows[author])
            other = follows[self.rng.randrange(len(follows))] if follows else self._other_author(author)
            return build.about_content(self.rng, self.text, self.ids[other], ("name",))
        about = author
        if self.rng.random() < freq.ABOUT_OTHER:
            about = self.rng.randrange(len(self.ids))
        return build.about_content(self.rng, self.text, self.ids[about], build.ABOUT_FIELDS.draw(self.rng))

    def _private(self, author: int) -> str:
        """A private root post for the author and 0-6 others, boxed with randomness from the run's rng."""
        count = self.rng.randint(1, min(len(self.ids), freq.MAX_RECIPIENTS))
        recipients = [author]
        while len(recipients) < count:
            other = self._other_author(author)
            if other not in recipients:
                recipients.append(other)
        recps = [self.ids[i] for i in recipients]
        content = build.private_post_content(
            self.rng, self.text, recipients=recps, pick_feed=self._popular_feed
        )
        return box(content, recps, self.rng.randbytes)
