"""Seeded reproductions of the simulation tables in appendix A of the SSB paper (Tarr's notes).

One module per experiment, each a pure function of its parameters and an explicit ``rng`` (a
``numpy.random.Generator`` or an int seed) returning a pandas DataFrame; :func:`paper_table` gives the
published numbers with the same column names. Only numpy, pandas and scipy are used (no pyspark).
"""

from __future__ import annotations

from ssblab.sim._graph import SimulationParameterError
from ssblab.sim.ebt import simulate_ebt
from ssblab.sim.flooding import simulate_flooding
from ssblab.sim.gossip import simulate_gossip
from ssblab.sim.paper import paper_table
from ssblab.sim.random_networks import simulate_random_networks
from ssblab.sim.request_skipping import simulate_request_skipping

__all__ = [
    "SimulationParameterError",
    "paper_table",
    "simulate_ebt",
    "simulate_flooding",
    "simulate_gossip",
    "simulate_random_networks",
    "simulate_request_skipping",
]
