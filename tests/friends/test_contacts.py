"""Contact messages become edges by ssb-friends 4.4's rules (contacts.js), quirks included."""

from __future__ import annotations

from typing import Any

import pytest

from ssblab.friends import BLOCK, FOLLOW, UNFOLLOW, ContactState, contact_edges, contact_of, is_feed

A, B, C = ("@" + x * 43 + "=.ed25519" for x in "AQg")  # canonical: the last character carries no spare bits


def msg(author: str, content: Any) -> dict[str, Any]:
    return {"author": author, "content": content}


def contact(author: str, dest: str, **fields: Any) -> dict[str, Any]:
    return msg(author, {"type": "contact", "contact": dest, **fields})


@pytest.mark.parametrize(
    ("fields", "weight"),
    [
        ({"following": True}, FOLLOW),
        ({"following": False}, UNFOLLOW),
        ({"blocking": True}, BLOCK),
        ({"blocking": False}, UNFOLLOW),  # an unblock is an unfollow too
        ({"blocking": True, "following": True}, BLOCK),
        ({"blocking": False, "following": True}, FOLLOW),
        ({"flagged": True}, BLOCK),  # the legacy flag blocks
        ({"following": "true"}, UNFOLLOW),  # following must be exactly true
        ({"following": 1}, UNFOLLOW),
        ({"blocking": "yes"}, BLOCK),  # blocking is JavaScript-truthy
        ({"blocking": []}, BLOCK),
        ({"blocking": {}}, BLOCK),
        ({"blocking": 0}, UNFOLLOW),
        ({"blocking": ""}, UNFOLLOW),
        ({}, UNFOLLOW),
    ],
)
def test_weight_of_each_contact_shape(fields: dict[str, Any], weight: int) -> None:
    got = contact_of(contact(A, B, **fields))
    assert got is not None
    assert got[:2] == (A, B)
    assert got[2].weight == weight


def test_type_is_not_checked() -> None:
    """contacts.js reads content.contact of every message, whatever its type."""
    got = contact_of(msg(A, {"type": "about", "contact": B, "following": True}))
    assert got == (A, B, ContactState(following=True, blocking=False))


@pytest.mark.parametrize(
    "message",
    [
        msg(A, "c2VjcmV0.box"),  # private: boxed content has no contact
        msg(A, None),
        msg(A, [B]),
        msg(A, {"type": "contact", "following": True}),
        contact(A, "%" + "B" * 43 + "=.sha256", following=True),  # a message id is not a feed
        contact(A, "@" + "Q" * 43 + "=.ed25519x", following=True),
        contact(A, B, following=True) | {"author": "not a feed"},
        contact(A, "@" + "B" * 42 + "C=.ed25519", following=True),  # non-canonical base64 (ssb-ref checks)
        contact(A, 42, following=True),
    ],
)
def test_ignored_messages(message: dict[str, Any]) -> None:
    assert contact_of(message) is None


def test_feed_regex_keeps_ssb_refs_unescaped_dot() -> None:
    assert is_feed("@" + "A" * 43 + "=Xed25519")
    assert is_feed("@" + "A" * 43 + "=.sha256")
    assert not is_feed("@" + "A" * 43 + "=\ned25519")
    assert not is_feed("@" + "A" * 43 + "=.ed25519\n")  # JavaScript's $ does not match before a newline


def test_latest_message_per_pair_wins_and_first_seen_order_is_kept() -> None:
    edges = contact_edges(
        [
            contact(A, B, following=True),
            contact(A, C, following=True),
            msg(B, {"type": "post", "text": "hi"}),
            contact(A, B, blocking=True),
            contact(A, B, blocking=False),
            contact(A, A, following=True),  # self-contacts stay, as in the JS graph
        ]
    )
    assert list(edges) == [(A, B), (A, C), (A, A)]
    assert [s.weight for s in edges.values()] == [UNFOLLOW, FOLLOW, FOLLOW]


def test_state_round_trips_through_weight() -> None:
    for weight in (FOLLOW, BLOCK, UNFOLLOW):
        assert ContactState.from_weight(weight).weight == weight
