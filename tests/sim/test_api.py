"""The public surface of ssblab.sim: names, and no Spark dependency."""

from __future__ import annotations

import subprocess
import sys

import ssblab.sim
from ssblab.core.errors import SsbError


def test_all_lists_exactly_the_public_api() -> None:
    assert sorted(ssblab.sim.__all__) == [
        "SimulationParameterError",
        "paper_table",
        "simulate_ebt",
        "simulate_flooding",
        "simulate_gossip",
        "simulate_random_networks",
        "simulate_request_skipping",
    ]
    for name in ssblab.sim.__all__:
        assert getattr(ssblab.sim, name).__module__.startswith("ssblab.sim")


def test_parameter_error_is_an_ssb_error_and_a_value_error() -> None:
    assert issubclass(ssblab.sim.SimulationParameterError, SsbError)
    assert issubclass(ssblab.sim.SimulationParameterError, ValueError)


def test_importing_sim_loads_no_spark() -> None:
    code = "import sys, ssblab.sim; sys.exit(any(m.split('.')[0] == 'pyspark' for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
