"""The pure content extractors behind the derived tables (no Spark)."""

from __future__ import annotations

import pytest

from ssblab.pipeline import extract

MSG = "%" + "A" * 43 + "=.sha256"
MSG2 = "%" + "E" * 43 + "=.sha256"
FEED = "@" + "I" * 43 + "=.ed25519"
BLOB = "&" + "M" * 43 + "=.sha256"


def test_links_finds_every_ref_with_its_path() -> None:
    content = {"type": "post", "root": MSG, "branch": [MSG2, "x"], "mentions": [{"link": FEED}, {"link": BLOB}],
               "odd key": {"it's": MSG}, "text": f"not a ref: {MSG}", "n": 3, "flag": None}
    assert list(extract.links(content)) == [
        (MSG, "message", "$.root"), (MSG2, "message", "$.branch[0]"), (FEED, "feed", "$.mentions[0].link"),
        (BLOB, "blob", "$.mentions[1].link"), (MSG, "message", "$['odd key']['it\\'s']")]


def test_links_ignores_malformed_refs() -> None:
    assert list(extract.links({"a": "%short.sha256", "b": "@" + "C" * 43 + "=.sha256", "c": "&"})) == []


def test_post_row_normalises_branch_channel_and_mentions() -> None:
    content = {"type": "post", "text": "hi", "root": MSG, "branch": MSG2, "channel": "#ssb",
               "mentions": [{"link": FEED, "name": "x"}, BLOB, 5]}
    assert extract.post_row(content) == ("hi", MSG, [MSG2], "ssb", [FEED, BLOB])
    assert extract.post_row({"type": "post", "text": 5, "mentions": "no"}) == (None, None, None, None, None)


def test_vote_contact_about_rows() -> None:
    assert extract.vote_row({"vote": {"link": MSG, "value": 1, "expression": "Like"}}) == (MSG, 1, "Like")
    assert extract.vote_row({"vote": "x"}) == (None, None, None)
    assert extract.contact_row({"contact": FEED, "following": True}) == (FEED, True, None)
    assert extract.contact_row({"following": True}) is None
    assert extract.about_row({"about": FEED, "image": {"link": BLOB}, "name": "a"}) == (FEED, "a", BLOB, None)
    assert extract.about_row({"about": 3}) is None


def test_tangle_edges_from_threads_and_tangles() -> None:
    content = {"root": MSG, "branch": [MSG2, "junk"],
               "tangles": {"group": {"root": MSG2, "previous": None}, "bad": {"root": "x"}}}
    assert list(extract.tangle_edges(content)) == [("thread", MSG, MSG2), ("group", MSG2, None)]
    assert list(extract.tangle_edges({"root": MSG})) == [("thread", MSG, None)]
    assert list(extract.tangle_edges({"root": 5})) == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"contact": "@x", "following": True}, ("@x", True, None)),
        ({"contact": "@x", "following": "yes"}, ("@x", False, None)),  # only exactly true follows
        ({"contact": "@x", "blocking": 1}, ("@x", None, True)),  # JS-truthy blocks, as ssb-friends reads it
        ({"contact": "@x", "flagged": True}, ("@x", None, True)),
        ({"contact": "@x", "blocking": False, "following": False}, ("@x", False, False)),
        ({"contact": "@x", "blocking": ""}, ("@x", None, False)),
    ],
)
def test_contact_rows_read_states_as_ssb_friends_does(content: dict, expected: tuple) -> None:
    assert extract.contact_row({"type": "contact", **content}) == expected
