"""Signed feeds of awkward contents for the archive's property tests (shared by the round-trip and route tests).

Contents mix unicode (astral characters and lone surrogates), floats, integers beyond 2**53, nested arrays,
integer-like keys that V8 moves first, keys-as-data types and both key orders of ``type``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ssblab.core.keys import Keypair
from ssblab.core.message import Message, create_message

KEYPAIR = Keypair.generate(bytes(range(32)))


def sign_feed(contents: list[Any], timestamps: list[float] | None = None) -> list[Message]:
    feed: list[Message] = []
    for i, content in enumerate(contents):
        stamp = timestamps[i] if timestamps else 1_600_000_000_000 + i
        feed.append(create_message(KEYPAIR, content, previous=feed[-1] if feed else None, timestamp=stamp))
    return feed


JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
)
KEY = st.text(max_size=6) | st.integers(0, 2**33).map(str)  # integer-like keys: V8 moves them first
JSON = st.recursive(
    JSON_LEAF, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEY, inner, max_size=4), max_leaves=15
)


@st.composite
def contents(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["post", "vote", "git-update", "npm-packages", "x-\u00e9\U0001f600"]))
    body = draw(st.dictionaries(KEY.filter(lambda k: k != "type"), JSON, max_size=5))
    return {"type": kind, **body} if draw(st.booleans()) else {**body, "type": kind}
