"""Feed validation as a state machine: heads after each step, forks, duplicates, tails, HMAC networks."""

from __future__ import annotations

import pytest

from ssblab import FeedState, FeedValidator, InvalidMessage, Keypair, create_message, validate_feed, validate_next
from ssblab.core.message import Message
from ssblab.core.validate import Duplicate, ForkFound

ALICE = Keypair.generate(bytes([21]) * 32)
BOB = Keypair.generate(bytes([22]) * 32)
HMAC = "hzUz4WE4y+96ZiKqhACK3Z3/zuLD6PYTHOZUbbDmass="


def feed(keypair: Keypair, n: int, hmac_key: str | None = None) -> list[Message]:
    out: list[Message] = []
    for i in range(n):
        out.append(create_message(keypair, {"type": "post", "text": str(i)}, previous=out[-1] if out else None,
                                  timestamp=100 + i, hmac_key=hmac_key))
    return out


def test_reducer_state_after_each_step() -> None:
    msgs = feed(ALICE, 3)
    state = None
    for i, msg in enumerate(msgs, 1):
        state = validate_next(state, msg)
        assert state == FeedState(ALICE.id, i, msg.id, 100 + i - 1)
    with pytest.raises(Duplicate):
        validate_next(state, msgs[-1])
    with pytest.raises(InvalidMessage) as info:
        validate_next(None, msgs[1])
    assert info.value.code == "first-message" and info.value.sequence == 2


def test_gap_is_not_fatal_but_fork_is() -> None:
    msgs = feed(ALICE, 4)
    head = validate_next(validate_next(None, msgs[0]), msgs[1])
    with pytest.raises(InvalidMessage) as gap:
        validate_next(head, msgs[3])
    assert gap.value.code == "sequence-order" and not gap.value.fatal
    rival = create_message(ALICE, {"type": "post", "text": "rival"}, previous=msgs[0], timestamp=7)
    with pytest.raises(ForkFound) as fork:
        validate_next(head, rival)  # same sequence as the head, another id, properly signed
    assert fork.value.fatal and fork.value.fork.known_id == msgs[1].id and fork.value.code == "fork"


def test_validator_stops_only_the_feed_with_a_fatal_error() -> None:
    a, b = feed(ALICE, 4), feed(BOB, 3)
    forged = Message.from_value({**a[1].value, "timestamp": 1})
    validator = FeedValidator()
    results = [validator.push(m) for m in (a[0], b[0], forged, b[1], a[2], b[2], b[2], a[0])]
    assert results == [True, True, False, True, False, True, False, False]
    codes = [e.code for e in validator.report.errors]
    assert codes == ["signature", "feed-stopped", "feed-stopped"]  # a stopped feed takes nothing, not even copies
    assert validator.report.duplicates == 1  # b[2] twice
    assert validator.report.heads[BOB.id].sequence == 3 and validator.report.heads[ALICE.id].sequence == 1


def test_tail_of_a_feed_from_a_trusted_previous() -> None:
    msgs = feed(ALICE, 6)
    report = validate_feed([m.value for m in msgs[3:]], previous=msgs[2].value)
    assert report.ok and report.valid == 3 and report.heads[ALICE.id].sequence == 6
    state = FeedState.of(msgs[2])
    assert validate_feed(msgs[3:], previous=state).ok
    wrong = validate_feed(msgs[4:], previous=msgs[2])
    assert [e.code for e in wrong.errors] == ["sequence-order", "sequence-order"]


def test_hmac_networks() -> None:
    msgs = feed(ALICE, 2, hmac_key=HMAC)
    assert validate_feed(msgs, hmac_key=HMAC).ok
    report = validate_feed(msgs)
    assert [e.code for e in report.errors] == ["signature", "feed-stopped"]
    with pytest.raises(InvalidMessage) as info:
        validate_feed(msgs, hmac_key="short")
    assert info.value.code == "hmac-key"


def test_mixed_inputs_and_unparseable_items() -> None:
    msgs = feed(ALICE, 3)
    items = [msgs[0].value, msgs[1].encoded, {"key": msgs[2].id, "value": msgs[2].value}, b"{oops", None]
    report = validate_feed(items)
    assert report.valid == 3 and [e.code for e in report.errors] == ["json", "not-object"]
    assert report.to_json()["invalid"] == 2
