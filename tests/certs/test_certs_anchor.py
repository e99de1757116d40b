"""Certificates against a signed ``merkle-anchor`` message (issue 19, item 15): a genuine c1 with a c6 from an
attacker's tree used to verify, since the two agree on the diamonds they share; against the author's anchor it
fails, as does every anchor that is not the author's, not signed, or too small."""

from __future__ import annotations

import pytest

from ssblab import Keypair, create_message
from ssblab.certs import (
    ANCHOR_TYPE,
    CertificateError,
    CertRule,
    FeedTree,
    anchor_content,
    check_consistent,
    read_anchor,
    verify_order,
)
from tests.signed import signed_posts

ALICE, MALLORY = Keypair.generate(bytes([21]) * 32), Keypair.generate(bytes([22]) * 32)
FEED = signed_posts(ALICE, 8)
TREE = FeedTree.from_ids(m.id for m in FEED)
ANCHOR_MSG = create_message(ALICE, anchor_content(TREE), previous=FEED[-1], timestamp=2_000)


def _rule(call: object) -> CertRule:
    with pytest.raises(CertificateError) as caught:
        call()  # type: ignore[operator]
    return caught.value.rule


def test_genuine_certificates_verify_against_the_signed_anchor() -> None:
    anchor = read_anchor(ANCHOR_MSG.value, feed=ALICE.id)
    assert (anchor.author, anchor.sequence, anchor.message_id) == (ALICE.id, 9, ANCHOR_MSG.id)
    assert ANCHOR_MSG.content["type"] == ANCHOR_TYPE and ANCHOR_MSG.content["leaves"] == 8
    verify_order(TREE.certificate(1), TREE.certificate(6), anchor)


def test_a_genuine_c1_with_a_c6_from_an_attackers_tree_fails() -> None:
    forged = FeedTree.from_ids([*(m.id for m in FEED[:2]), *(f"%forged{i}" for i in range(6))])
    c1, c6 = TREE.certificate(1), forged.certificate(6)
    check_consistent(c1, c6)  # they agree on D_0 and D_1: agreement alone proves nothing
    assert _rule(lambda: verify_order(c1, c6, read_anchor(ANCHOR_MSG.value, feed=ALICE.id))) is CertRule.ANCHOR


def test_anchors_that_do_not_vouch() -> None:
    small = create_message(ALICE, anchor_content(TREE, 1), previous=FEED[-1], timestamp=2_000)
    assert _rule(lambda: verify_order(TREE.certificate(1), TREE.certificate(6), read_anchor(small.value))) \
        is CertRule.ANCHOR  # covers 2 messages; index 6 needs D_3
    tampered = {**ANCHOR_MSG.value, "content": anchor_content(FeedTree.from_ids(["%a", "%b"]), 1)}
    early = create_message(ALICE, anchor_content(FeedTree.from_ids(m.id for m in FEED[:4])), previous=FEED[2],
                           timestamp=1_500)  # at sequence 4, naming 4 messages: it cannot include itself
    wrong_type = create_message(ALICE, {"type": "post", "text": "x"}, previous=FEED[-1], timestamp=2_000)
    bad_hash = create_message(ALICE, {**anchor_content(TREE), "diamonds": ["AAAA", "B", "C", "D"]},
                              previous=FEED[-1], timestamp=2_000)
    for value, feed in ((ANCHOR_MSG.value, MALLORY.id), (tampered, None), (early.value, None),
                        (wrong_type.value, None), (bad_hash.value, None), ({"not": "a message"}, None)):
        assert _rule(lambda v=value, f=feed: read_anchor(v, feed=f)) is CertRule.ANCHOR
