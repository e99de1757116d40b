"""datasets/README.md (the dataset card) states what a fresh build of the default network gives, byte for byte."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson

from ssblab import datasets

CARD = Path(__file__).resolve().parents[2] / "datasets" / "README.md"


def test_the_card_states_the_bytes_and_the_counts() -> None:
    card = CARD.read_text()
    data = datasets.default_jsonl().read_bytes()
    digest = re.search(r"\| JSONL \| ([\d,]+) bytes, sha256 `([0-9a-f]{64})`", card)
    assert digest, "the card's JSONL row (size and sha256) is missing"
    assert int(digest[1].replace(",", "")) == len(data)
    assert digest[2] == hashlib.sha256(data).hexdigest()
    kinds = Counter()
    for line in data.splitlines():
        content = orjson.loads(line)["content"]
        kinds["private" if isinstance(content, str) else content["type"]] += 1
    stated = dict(re.findall(r"(\w+) ([\d,]+)", re.search(r"\| messages by type \| (.*) \|", card)[1]))
    assert {k: int(v.replace(",", "")) for k, v in stated.items()} == dict(kinds)
    spec = datasets.default_spec()
    assert f"{spec['authors']} authors, {spec['messages']:,} messages, seed {spec['seed']}" in card


def test_the_cards_shell_recipe_gives_the_same_bytes(tmp_path: Path) -> None:
    out = tmp_path / "default.jsonl"
    subprocess.run([sys.executable, "-m", "ssblab", "generate", "--spec", str(datasets.spec_path()), "--out", str(out)],
                   check=True, capture_output=True)
    assert "ssblab generate --spec datasets/default.json" in CARD.read_text()
    assert out.read_bytes() == datasets.default_jsonl().read_bytes()
