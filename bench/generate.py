"""Generation speed of ``ssblab.generate``: messages per second, with and without private messages.

Run from the repository root: ``.venv/bin/python -m bench.generate [--messages 20000] [--authors 200]``. Prints
one row per configuration: messages per second of generation alone, of generation plus writing JSONL, and the
bare ceiling of ``create_message`` on the same machine (one feed, a fixed short post), which bounds what any
generator built on the core can reach. Add ``--million`` to time a full 1,000,000-message write (minutes).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ssblab.core import Keypair, create_message
from ssblab.generate import generate_network, write_jsonl


def rate(count: int, run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return count / (time.perf_counter() - started)


def signing_ceiling(count: int) -> float:
    keypair = Keypair.generate(bytes(32))

    def sign_all() -> None:
        previous = None
        for i in range(count):
            previous = create_message(keypair, {"type": "post", "text": "hello"}, previous=previous, timestamp=i + 1)

    return rate(count, sign_all)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--authors", type=int, default=200)
    parser.add_argument("--million", action="store_true", help="also write 1,000,000 messages to a temp file")
    args = parser.parse_args()
    n, authors = args.messages, args.authors
    print(f"create_message ceiling: {signing_ceiling(n):,.0f} msgs/s")
    for label, fraction in (("default mix", None), ("no private", 0.0), ("all private", 1.0)):
        options = {} if fraction is None else {"private_fraction": fraction}
        speed = rate(n, lambda o=options: sum(1 for _ in generate_network(authors, n, 1, **o)))
        print(f"{label:>12}: {speed:,.0f} msgs/s ({n} messages, {authors} authors)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "net.jsonl"
        speed = rate(n, lambda: write_jsonl(generate_network(authors, n, 1), out))
        print(f"{'+ jsonl':>12}: {speed:,.0f} msgs/s, {out.stat().st_size / n:,.0f} bytes/message")
        if args.million:
            started = time.perf_counter()
            summary = write_jsonl(generate_network(10_000, 1_000_000, 1), out)
            elapsed = time.perf_counter() - started
            print(f"1,000,000 messages, 10,000 authors: {elapsed:,.0f} s, {summary.bytes / 2**20:,.0f} MiB, "
                  f"{summary.feeds} feeds, shares {({k: round(v, 3) for k, v in summary.shares().items()})}")


if __name__ == "__main__":
    main()
