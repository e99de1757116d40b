"""Certificate size against the hash-chain walk, as a function of the message index.

Run from the repository root: ``.venv/bin/python -m bench.certs [--max-exp 20]``. One row per index: the
certificate's hashes and encoded bytes (logarithmic), and what proving the same order from message 0 costs
with ``previous`` backlinks (linear: one message per link; the byte column counts only the 32-byte hash per
link, a lower bound, since the verifier needs every message in between).
"""

from __future__ import annotations

import argparse
import time

from ssblab.certs import Anchor, FeedTree, encode, leaf_hash, verify_order

HASH_BYTES = 32


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-exp", type=int, default=18, help="feed of 2**max_exp messages")
    args = parser.parse_args()
    n = 1 << args.max_exp
    started = time.perf_counter()
    tree = FeedTree.from_leaves(leaf_hash(i.to_bytes(8, "big")) for i in range(n))
    print(f"feed of {n} messages, tree built in {time.perf_counter() - started:.2f} s")
    header = ("k", "j", "cert hashes", "cert bytes", "chain links", "chain bytes >=")
    print(" ".join(f"{h:>14}" for h in header))
    first = tree.certificate(0)
    # the diamonds the feed's merkle-anchor message carries (read_anchor checks a signed one; here the tree's own)
    anchor = Anchor("@bench", n + 1, "%bench", tuple(tree.diamond(h) for h in range(args.max_exp + 1)))
    for k in sorted(k for k in {1, 3, 10, 100, 1000, 10_000, 100_000, 1_000_000, n - 1} if k < n):
        cert = tree.certificate(k)
        verify_order(first, cert, anchor)
        row = (k, cert.height, cert.hash_count, len(encode(cert)), k, k * HASH_BYTES)
        print(" ".join(f"{v:>14}" for v in row))


if __name__ == "__main__":
    main()
