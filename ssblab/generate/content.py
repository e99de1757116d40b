"""Message contents as SSB clients write them: post, vote, contact, about, and private posts (before boxing).

Pure functions of an rng and what they link to; the generator (network.py) decides who writes what to whom.
Key order follows the clients (``type`` first), so a generated message looks like one from Patchwork or
Manyverse byte for byte, not only field for field. Blob ids are random 32-byte hashes: no blob bytes exist.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Generic, TypeVar

from ssblab.core.refs import b64
from ssblab.generate import frequencies as freq
from ssblab.generate.text import TextSource

__all__ = [
    "ABOUT_FIELDS",
    "ABOUT_IMAGE_SHAPES",
    "BLOB_TYPES",
    "MENTION_KINDS",
    "POST_SIZES",
    "PRIVATE_TEXT_BUDGET",
    "PUBLIC_TEXT_BUDGET",
    "Content",
    "K",
    "PostRef",
    "Weighted",
    "about_content",
    "blob_ref",
    "contact_content",
    "post_content",
    "private_post_content",
    "skewed_index",
    "somewhat_gaussian",
    "vote_content",
]

K = TypeVar("K", bound=Hashable)
Content = dict[str, Any]
PUBLIC_TEXT_BUDGET = 6000  # UTF-8 bytes of text: with mentions and envelope, well under 8192 units
PRIVATE_TEXT_BUDGET = 4000  # boxing grows the content by 4/3 (base64) plus 49 bytes per recipient


class Weighted(Generic[K]):
    """A categorical distribution from a ``{outcome: weight}`` table, drawn with one rng call."""

    def __init__(self, table: Mapping[K, float]) -> None:
        self.outcomes: tuple[K, ...] = tuple(table)
        self._cum = list(accumulate(table.values()))

    def draw(self, rng: random.Random) -> K:
        return rng.choices(self.outcomes, cum_weights=self._cum)[0]


POST_SIZES = Weighted(freq.POST_SIZES)
MENTION_KINDS = Weighted(freq.MENTION_KINDS)
BLOB_TYPES = Weighted(freq.BLOB_TYPES)
ABOUT_FIELDS = Weighted(freq.ABOUT_FIELDS)
ABOUT_IMAGE_SHAPES = Weighted(freq.ABOUT_IMAGE_SHAPES)


def skewed_index(rng: random.Random, count: int, skew: float) -> int:
    """ssb-fixtures' paretoSample: ``floor(u**skew * count)``; index 0 is the most likely."""
    return int(rng.random() ** skew * count)


def somewhat_gaussian(rng: random.Random) -> float:
    """The mean of two uniforms (ssb-fixtures' sizes of blobs and images): a triangle on [0, 1)."""
    return (rng.random() + rng.random()) / 2


def blob_ref(rng: random.Random) -> str:
    return f"&{b64(rng.randbytes(32))}.sha256"


@dataclass(frozen=True, slots=True)
class PostRef:
    """A public post that replies and votes can link to: its id and its thread's root (None for a root)."""

    key: str
    root: str | None


def post_content(
    rng: random.Random,
    text: TextSource,
    *,
    reply_to: PostRef | None,
    pick_feed: Callable[[], str],
    budget: int = PUBLIC_TEXT_BUDGET,
) -> Content:
    """``{type: "post", text, channel?, root?, branch?, mentions?}``; a reply joins ``reply_to``'s thread."""
    content: Content = {"type": "post", "text": text.post_text(rng, POST_SIZES.draw(rng), budget)}
    if rng.random() < freq.POST_CHANNEL:
        content["channel"] = text.words(rng, 1)[0]
    if reply_to is not None:
        content["root"] = reply_to.root or reply_to.key
        content["branch"] = reply_to.key
    if rng.random() < freq.POST_MENTIONS:
        content["mentions"] = [_mention(rng, text, pick_feed) for _ in range(rng.randint(1, 4))]
    return content


def _mention(rng: random.Random, text: TextSource, pick_feed: Callable[[], str]) -> Content:
    kind = MENTION_KINDS.draw(rng)
    if kind == "author":
        return {"link": pick_feed(), "name": text.name(rng)}
    if kind == "channel":
        return {"link": "#" + text.words(rng, 1)[0]}
    mention: Content = {"link": blob_ref(rng), "type": BLOB_TYPES.draw(rng),
                        "size": round(somewhat_gaussian(rng) * 2e6)}
    if rng.random() < freq.MENTION_BLOB_NAME:
        mention["name"] = text.phrase(rng)
    return mention


def private_post_content(
    rng: random.Random, text: TextSource, *, recipients: list[str], pick_feed: Callable[[], str]
) -> Content:
    """A private post before boxing: a root post with ``recps`` (the author first, as clients do)."""
    content = post_content(rng, text, reply_to=None, pick_feed=pick_feed, budget=PRIVATE_TEXT_BUDGET)
    content["recps"] = recipients
    return content


def vote_content(rng: random.Random, target: PostRef) -> Content:
    """A like (value 1) or, 5% of the time, a dislike (value -1), as ssb-fixtures does."""
    if rng.random() < freq.VOTE_NEGATIVE:
        return {"type": "vote", "vote": {"link": target.key, "value": -1, "expression": "Dislike"}}
    return {"type": "vote", "vote": {"link": target.key, "value": 1, "expression": "Like"}}


def contact_content(kind: str, contact: str) -> Content:
    """``follow``/``unfollow`` set ``following``, ``block``/``unblock`` set ``blocking``."""
    field = "following" if kind in ("follow", "unfollow") else "blocking"
    return {"type": "contact", "contact": contact, field: kind in ("follow", "block")}


def about_content(rng: random.Random, text: TextSource, about: str, fields: tuple[str, ...]) -> Content:
    """``{type: "about", about, name?, image?, description?}``."""
    content: Content = {"type": "about", "about": about}
    if "name" in fields:
        content["name"] = text.name(rng)
    if "image" in fields:
        content["image"] = _image(rng)
    if "description" in fields:
        content["description"] = text.sentences(rng, rng.randint(1, 5))
    return content


def _image(rng: random.Random) -> str | Content:
    shape = ABOUT_IMAGE_SHAPES.draw(rng)
    if shape == "string":
        return blob_ref(rng)
    if shape == "small_object":
        return {"link": blob_ref(rng)}
    return {"link": blob_ref(rng), "type": BLOB_TYPES.draw(rng), "size": round(somewhat_gaussian(rng) * 2e6),
            "width": round(somewhat_gaussian(rng) * 1600), "height": round(somewhat_gaussian(rng) * 1600)}
