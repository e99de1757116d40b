"""How close a reproduction must come to the paper: sampling error of two independent random experiments.

The paper's figures are statistics of random runs (A.5: 100 networks per row; A.3.3 and A.8: one run). Our
seeded runs are a second, independent sample of the same model, so paper and reproduction differ by
sampling error alone when the model is right. Each check bounds the difference by ``Z`` standard errors of
that difference:

* a proportion from ``n1`` and ``n2`` trials: binomial, ``sqrt(p (1 - p) (1/n1 + 1/n2))`` with the pooled p;
* a mean of ``n1`` vs ``n2`` trials: ``s * sqrt(1/n1 + 1/n2)`` with our sample standard deviation ``s``;
* a standard deviation: its standard error at each sample size, by resampling our trials (bootstrap). The
  rounds distributions near ``m = 1.4`` have long right tails that a bootstrap only sees if our sample
  holds them, so the A.5 test runs 500 networks per row (5 times the paper's 100);
* a single run (A.3.3, A.8) against our ``R`` runs: a prediction interval, ``s * sqrt(1 + 1/R)``;
* a small integer that is often constant (A.8 ``hops``): the paper's value must be one our runs produced,
  or lie in the prediction interval (the K = 1 tree heights spread over 12..18).

``Z = 4``: a row then fails by chance with probability about 6e-5 (normal tails), under 1% over the
~150 figures checked; over four other seeds the largest gap seen was 2.6 standard errors. A wrong model
misses by far more: synchronous gossip rounds by 6 (round 1) to 38 (round 4) standard errors, A.8
connections to any peer instead of earlier ones by 11 to 25 on ``msgs``, A.5 rounds without the final
empty round by 18. When every one of our trials gives the same
value the standard error is 0 and the paper's value must equal it exactly. Runs are seeded, so the
verdicts are repeatable.
"""

from __future__ import annotations

import numpy as np

Z = 4.0


def se_proportion(p1: float, n1: int, p2: float, n2: int) -> float:
    """Standard error of the difference of two binomial proportions, pooled."""
    pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
    return float(np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2)))


def se_mean(samples: np.ndarray, n_paper: int) -> float:
    """Standard error of (paper mean of ``n_paper`` trials) minus (mean of our samples)."""
    s = float(np.std(samples, ddof=1))
    return s * float(np.sqrt(1 / n_paper + 1 / samples.size))


def se_stdev(samples: np.ndarray, n_paper: int, seed: int = 0, replicates: int = 2000) -> float:
    """Standard error of the difference of two population standard deviations, by bootstrap."""
    rng = np.random.default_rng(seed)

    def spread(n: int) -> float:
        draws = rng.choice(samples, size=(replicates, n), replace=True)
        return float(draws.std(axis=1, ddof=0).std(ddof=1))

    return float(np.hypot(spread(n_paper), spread(samples.size)))


def se_single_run(samples: np.ndarray) -> float:
    """Standard error of one new run against the mean of our runs (prediction interval)."""
    s = float(np.std(samples, ddof=1))
    return s * float(np.sqrt(1 + 1 / samples.size))


def assert_close(what: str, paper: float, ours: float, se: float) -> None:
    """Fail unless ``|paper - ours| <= Z * se`` (exact equality when ``se`` is 0)."""
    gap = abs(paper - ours)
    assert gap <= Z * se + 1e-9, f"{what}: paper {paper} vs reproduced {ours:.4f} (gap {gap:.4f}, se {se:.4f})"
