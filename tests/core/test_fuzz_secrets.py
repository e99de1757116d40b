"""Secret files from outside (issue 19): any text either is a keypair or an `InvalidSecret` whose message quotes
no part of the private key."""

from __future__ import annotations

import contextlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from ssblab.core.errors import InvalidSecret
from ssblab.core.keys import Keypair

KEYPAIR = Keypair.generate(bytes([5]) * 32)
TEXT = KEYPAIR.to_secret_text()
PRIVATE = KEYPAIR.to_secret_object()["private"].removesuffix(".ed25519")
PIECES = {PRIVATE[i:i + 8] for i in range(len(PRIVATE) - 8)}


def _mutate(seed: int) -> str:
    rng = random.Random(seed)
    chars = list(TEXT)
    at = TEXT.index(PRIVATE) + rng.randrange(len(PRIVATE))  # inside the key, where mistakes hurt most
    for _ in range(rng.randint(1, 3)):
        action = rng.randrange(4)
        if action == 0:
            del chars[at:at + rng.randint(1, 40)]
        elif action == 1:
            chars[at] = rng.choice('"\\\x00\x01{}[],:é\udc00A')
        elif action == 2:
            chars.insert(at, rng.choice(['"', "\\u", "\\udc00", "\n", "#"]))
        else:
            del chars[rng.randrange(len(chars)):]
        if len(chars) < 2:
            break
        at = min(at, len(chars) - 1)
    return "".join(chars)


def _judge(text: str) -> None:
    try:
        keypair = Keypair.from_secret_text(text)
    except InvalidSecret as exc:
        assert not any(piece in str(exc) for piece in PIECES), str(exc)
        return
    assert keypair.id == KEYPAIR.id  # a change that left the key intact (a comment, say)


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32))
def test_fuzz_damaged_secret_files(seed: int) -> None:
    _judge(_mutate(seed))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_random_secret_text(text: str) -> None:
    with contextlib.suppress(InvalidSecret):
        Keypair.from_secret_text(text)
