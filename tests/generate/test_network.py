"""The generator: deterministic bytes, valid feeds, ssb-fixtures' distributions, sound links, private-box."""

from __future__ import annotations

import doctest
import itertools
import time
from collections import Counter
from pathlib import Path

import pytest

from ssblab.core import Keypair, Message, unbox, validate_feed
from ssblab.generate import (
    GeneratedNetwork,
    InvalidSpec,
    NetworkSpec,
    generate_network,
    message_kind,
    write_jsonl,
)
from ssblab.generate import frequencies as freq
from ssblab.generate import network as network_module

HMAC = "Z0e2zyrmHeit5ydNjaw2bLlrHBwx9UcivTAAGquwQ+Y="
AUTHORS, MESSAGES = 40, 3000


@pytest.fixture(scope="module")
def network() -> GeneratedNetwork:
    return GeneratedNetwork(NetworkSpec(AUTHORS, MESSAGES, seed=11))


@pytest.fixture(scope="module")
def messages(network: GeneratedNetwork) -> list[Message]:
    return list(network.messages())


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    paths = [tmp_path / f"{i}.jsonl" for i in range(3)]
    for path, seed in zip(paths, (5, 5, 6), strict=True):
        write_jsonl(generate_network(12, 400, seed), path)
    first, again, other = (p.read_bytes() for p in paths)
    assert first == again
    assert first != other
    assert first.count(b"\n") == 400


def test_every_message_validates_without_forks(messages: list[Message]) -> None:
    report = validate_feed(messages)
    assert report.ok, report.errors[:3]
    assert (report.valid, report.forks, report.duplicates) == (MESSAGES, [], 0)
    assert len({m.id for m in messages}) == MESSAGES


def test_hmac_network_validates_only_with_its_key() -> None:
    msgs = list(generate_network(5, 60, 2, hmac_key=HMAC))
    assert validate_feed(msgs, hmac_key=HMAC).ok
    assert not validate_feed(msgs).ok


def test_log_order_timestamps_increase_and_feeds_start_with_an_about(messages: list[Message]) -> None:
    stamps = [m.timestamp for m in messages]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert stamps[0] > NetworkSpec(1, 1, 0).start_time_ms
    firsts = [m for m in messages if m.sequence == 1]
    assert all(m.content["type"] == "about" and m.content["about"] == m.author for m in firsts)
    assert all("name" in m.content for m in firsts)


def test_author_activity_follows_the_power_law(messages: list[Message]) -> None:
    per_author = sorted(Counter(m.author for m in messages).values(), reverse=True)
    top_tenth = sum(per_author[: AUTHORS // 10]) / MESSAGES
    # floor(u**2 * n): the top 10% write 0.1**0.5 = 32% of the messages, against 10% for equal authors.
    assert 0.25 < top_tenth < 0.40
    uniform = Counter(m.author for m in generate_network(AUTHORS, MESSAGES // 3, 11, activity_skew=1.0))
    assert sum(sorted(uniform.values(), reverse=True)[: AUTHORS // 10]) / (MESSAGES // 3) < 0.2


def test_type_proportions_match_ssb_fixtures(messages: list[Message]) -> None:
    kinds = Counter(message_kind(m) for m in messages)
    public = 1 - freq.DEFAULT_PRIVATE_FRACTION
    total = sum(freq.PUBLIC_TYPE_COUNTS.values())
    expected = {k: public * n / total for k, n in freq.PUBLIC_TYPE_COUNTS.items()}
    expected["private"] = freq.DEFAULT_PRIVATE_FRACTION
    firsts = sum(1 for m in messages if m.sequence == 1)  # every feed opens with an about
    for kind, share in expected.items():
        extra = firsts if kind == "about" else 0
        assert kinds[kind] == pytest.approx(share * (MESSAGES - firsts) + extra, abs=0.03 * MESSAGES), kind
    assert set(kinds) == set(expected)


def test_replies_and_votes_link_to_earlier_public_posts(messages: list[Message]) -> None:
    posts: dict[str, Message] = {}
    replies = 0
    for msg in messages:
        content = msg.content
        if isinstance(content, dict) and content["type"] == "vote":
            assert content["vote"]["link"] in posts
            assert content["vote"]["value"] in (1, -1)
        if isinstance(content, dict) and content["type"] == "post":
            if "root" in content:
                replies += 1
                root, branch = posts[content["root"]], posts[content["branch"]]
                assert "root" not in root.content
                assert branch.content.get("root", branch.id) == root.id
            posts[msg.id] = msg
    assert replies == pytest.approx(freq.POST_REPLY * len(posts), rel=0.1)


def test_threads_have_a_heavy_tail(messages: list[Message]) -> None:
    sizes = Counter(m.content["root"] for m in messages if not m.is_private and "root" in m.content)
    assert max(sizes.values()) >= 5 * (sum(sizes.values()) / len(sizes))


def _contact_kind(content: dict[str, object]) -> str:
    if "following" in content:
        return "follow" if content["following"] is True else "unfollow"
    return "block" if content["blocking"] is True else "unblock"


def test_contacts_never_target_their_author_and_undo_only_what_was_done(messages: list[Message]) -> None:
    relation: dict[tuple[str, str], str] = {}
    seen = Counter()
    for msg in messages:
        content = msg.content
        if not isinstance(content, dict) or content["type"] != "contact":
            continue
        pair = (msg.author, content["contact"])
        assert pair[1] != msg.author
        kind = _contact_kind(content)
        if kind in ("unfollow", "unblock"):
            assert relation.get(pair) == kind[2:]
        relation[pair] = kind
        seen[kind] += 1
    assert set(seen) == {"follow", "unfollow", "block", "unblock"}
    assert seen["follow"] > seen["block"] > seen["unblock"]


def test_abouts_carry_names_images_and_descriptions(messages: list[Message]) -> None:
    abouts = [m.content for m in messages if isinstance(m.content, dict) and m.content["type"] == "about"]
    fields = Counter(f for a in abouts for f in ("name", "image", "description") if f in a)
    assert min(fields.values()) > 0
    images = [a["image"] for a in abouts if "image" in a]
    links = [i if isinstance(i, str) else i["link"] for i in images]
    assert all(link.startswith("&") and link.endswith(".sha256") for link in links)


def test_name_others_makes_abouts_name_other_feeds_and_costs_nothing_when_off() -> None:
    def given_names(messages: list[Message]) -> list[tuple[str, str]]:
        return [(m.author, m.content["about"]) for m in messages if isinstance(m.content, dict)
                and m.content["type"] == "about" and m.content["about"] != m.author and "name" in m.content]

    plain = list(generate_network(AUTHORS, MESSAGES, seed=11))
    naming = list(generate_network(AUTHORS, MESSAGES, seed=11, name_others=0.5))
    given = given_names(naming)
    abouts = sum(1 for m in naming if isinstance(m.content, dict) and m.content["type"] == "about")
    assert len(given) > max(3 * len(given_names(plain)), (abouts - AUTHORS) // 4)
    assert all(author != about for author, about in given)
    explicit_zero = generate_network(AUTHORS, MESSAGES, seed=11, name_others=0.0)
    assert [m.id for m in explicit_zero] == [m.id for m in plain]  # off: no extra draw, the same network


def test_private_messages_open_for_each_recipient_and_nobody_else(
    network: GeneratedNetwork, messages: list[Message]
) -> None:
    private = [m for m in messages if m.is_private][:60]
    counts = Counter()
    for msg in private:
        opened = {kp.id: unbox(msg.content, kp) for kp in network.keypairs}
        readers = {feed for feed, plain in opened.items() if plain is not None}
        recps = opened[msg.author]["recps"]
        assert recps[0] == msg.author and 1 <= len(recps) <= 7
        assert readers == set(recps)
        assert all(opened[feed] == opened[msg.author] for feed in readers)
        assert opened[msg.author]["type"] == "post"
        counts[len(recps)] += 1
    assert len(counts) >= 5  # recipient counts spread over 1..7


def test_text_exercises_unicode_and_the_latin1_id_quirk(messages: list[Message]) -> None:
    non_ascii = [m for m in messages if not m.encoded.isascii()]
    assert len(non_ascii) > MESSAGES // 20
    assert any(any(ord(ch) > 0xFFFF for ch in m.encoded.decode()) for m in non_ascii)  # surrogate pairs in JS


def test_jsonl_lines_read_back_as_the_same_messages(tmp_path: Path) -> None:
    msgs = list(generate_network(6, 200, 4))
    summary = write_jsonl(msgs, tmp_path / "net.jsonl")
    lines = (tmp_path / "net.jsonl").read_bytes().splitlines()
    assert [Message.from_json(line).id for line in lines] == [m.id for m in msgs]
    assert (summary.messages, summary.feeds) == (200, len({m.author for m in msgs}))
    assert sum(summary.by_kind.values()) == 200 and summary.bytes == sum(len(line) + 1 for line in lines)


def test_secrets_belong_to_the_authors(tmp_path: Path) -> None:
    network = GeneratedNetwork(NetworkSpec(3, 5, seed=9))
    paths = network.write_secrets(tmp_path)
    assert [p.name for p in paths] == ["secret", "secret-1", "secret-2"]
    assert [Keypair.from_secret_file(p).id for p in paths] == network.ids
    assert network.keypair(network.ids[2]) == network.keypairs[2]
    with pytest.raises(FileExistsError):
        network.write_secrets(tmp_path)


def test_all_private_and_long_posts_stay_under_the_size_limit() -> None:
    msgs = list(generate_network(9, 400, 8, private_fraction=1.0))
    assert validate_feed(msgs).ok
    assert sum(m.is_private for m in msgs) == 400 - len({m.author for m in msgs})


@pytest.mark.parametrize(("authors", "count"), [(1, 50), (2, 50), (3, 0)])
def test_tiny_networks(authors: int, count: int) -> None:
    msgs = list(generate_network(authors, count, 1, private_fraction=0.5))
    assert len(msgs) == count and validate_feed(msgs).ok


def test_generation_streams() -> None:
    started = time.perf_counter()
    first = list(itertools.islice(generate_network(1000, 10**9, 1), 3))
    assert len(first) == 3 and time.perf_counter() - started < 10


def test_docstring_examples_run() -> None:
    assert doctest.testmod(network_module).failed == 0


@pytest.mark.parametrize(
    "options",
    [{"authors": 0}, {"messages": -1}, {"private_fraction": 1.5}, {"activity_skew": 0}, {"window": 0},
     {"hmac_key": "not base64"}, {"name_others": -0.1}, {"name_others": 2}],
)
def test_bad_specs_are_refused(options: dict[str, object]) -> None:
    spec = {"authors": 3, "messages": 10, "seed": 1, **options}
    with pytest.raises(InvalidSpec, match="NetworkSpec"):
        NetworkSpec(**spec)  # type: ignore[arg-type]
