"""The numbers the SSB paper publishes in its appendix A (Tarr, "Scalable Secure Scuttlebutt"), as DataFrames.

Source: Tarr, Lavoie, Meyer, Tschudin, "Secure Scuttlebutt: An Information-Centric Protocol for Subjective
and Decentralized Community Applications" (2019), appendix A. Every table is a single run of a random
simulation (A.5: 100 networks per row; A.3.3 and A.8: one run), so a reproduction agrees within sampling
error, not digit for digit. Column names match those of the ``simulate_*`` functions so the two frames
line up side by side.
"""

from __future__ import annotations

import pandas as pd

from ssblab.sim._graph import SimulationParameterError

__all__ = ["PAPER_TABLES", "paper_table"]

# A.5, "edges, P(connected), average, stdev": 1,000 peers, 100 networks per row.
_RANDOM_NETWORKS = (
    (1.0, 0.05, 57.26, 19.385365614297818),
    (1.1, 0.46, 23.33, 2.549725475418886),
    (1.2, 0.69, 18.1, 1.6763054614240047),
    (1.3, 0.7, 15.08, 1.188949115816149),
    (1.4, 0.8, 13.52, 1.2765578717786399),
    (1.5, 0.91, 12.33, 0.8130805618141443),
    (1.6, 0.9, 11.45, 0.82915619758885),
    (1.7, 0.96, 10.59, 0.8011866199581761),
    (1.8, 0.97, 9.83, 0.6333245613427602),
    (1.9, 0.99, 9.29, 0.4958830507287036),
    (2.0, 1.0, 8.72, 0.5306599664568481),
    (3.0, 1.0, 6.91, 0.2861817604250792),
    (5.0, 1.0, 5.39, 0.48774993593029137),
    (10.0, 1.0, 4.59, 0.4918333050943186),
    (20.0, 1.0, 4.0, 0.0),
)

# A.3.3, "round, dR, dT": 10,000 peers, one run.
_GOSSIP = (
    (1, 9, 10),
    (2, 51, 61),
    (3, 293, 354),
    (4, 1195, 1549),
    (5, 3903, 5452),
    (6, 3875, 9327),
    (7, 666, 9993),
    (8, 7, 10000),
)

# A.8, "K, peers, hops, avg, msgs, inefficiency": one network per K.
_FLOODING = (
    (1, 1000, 14, 6.657, 999, 1.0),
    (2, 1000, 7, 3.657, 2981, 2.984),
    (3, 1000, 6, 2.944, 4947, 4.952),
    (4, 1000, 5, 2.842, 6913, 6.92),
    (5, 1000, 5, 2.605, 8861, 8.87),
    (6, 1000, 5, 2.515, 10803, 10.814),
    (7, 1000, 4, 2.388, 12731, 12.744),
    (8, 1000, 4, 2.361, 14671, 14.686),
    (9, 1000, 4, 2.306, 16605, 16.622),
    (10, 1000, 4, 2.193, 18487, 18.506),
    (11, 1000, 4, 2.201, 20357, 20.377),
    (12, 1000, 4, 2.136, 22237, 22.259),
    (13, 1000, 4, 2.118, 24163, 24.187),
    (14, 1000, 4, 2.118, 25993, 26.019),
    (15, 1000, 4, 2.027, 27877, 27.905),
    (16, 1000, 4, 2.008, 29709, 29.739),
    (17, 1000, 4, 2.046, 31567, 31.599),
    (18, 1000, 4, 1.994, 33393, 33.426),
    (19, 1000, 4, 1.94, 35281, 35.316),
    (20, 1000, 4, 1.933, 37135, 37.172),
)

# A.8/A.9 worked example: three peers, each connected to the other two, A broadcasts. Flooding sends 4
# (A twice, B and C once each) where 2 are necessary; EBT sends the 2 and B, C swap notes; when A--C breaks,
# C is repaired through B in one round trip.
_EBT = ((3, 4, 2, 2, 1.0),)

PAPER_TABLES: dict[str, pd.DataFrame] = {
    "random_networks": pd.DataFrame(_RANDOM_NETWORKS, columns=["edges", "p_connected", "mean", "stdev"]),
    "gossip": pd.DataFrame(_GOSSIP, columns=["round", "dR", "dT"]),
    "flooding": pd.DataFrame(_FLOODING, columns=["K", "peers", "hops", "avg", "msgs", "inefficiency"]),
    "ebt": pd.DataFrame(_EBT, columns=["peers", "flood_msgs", "ebt_msgs", "ebt_notes", "repair_round_trips_max"]),
}


def paper_table(name: str) -> pd.DataFrame:
    """The paper's published numbers for one experiment, as a fresh DataFrame (safe to modify).

    Names: ``random_networks`` (A.5), ``gossip`` (A.3.3), ``flooding`` (A.8), ``ebt`` (the three-peer
    example of A.8/A.9). Request skipping (A.5) has no published numbers, only the claim that it sends "a
    great deal less" clock elements, so there is no table for it.

    Raises:
        SimulationParameterError: for any other name, listing the known ones.

    Examples:
        >>> paper_table("flooding").loc[1, "msgs"]
        np.int64(2981)
    """
    if name not in PAPER_TABLES:
        known = ", ".join(sorted(PAPER_TABLES))
        raise SimulationParameterError("paper_table", f"no published table {name!r}; known: {known}")
    return PAPER_TABLES[name].copy()
