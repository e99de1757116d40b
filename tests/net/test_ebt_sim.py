"""Seeded EBT simulations (``ebt_sim.py``): 100 seeds per scenario; ``EBT_SIM_SEED=N`` replays one seed with a trace."""

from __future__ import annotations

import os

import pytest

from tests.net.ebt_sim import SCENARIOS, Network, messages_needed, reconnect_note_entries, scenario_three

_REPLAY = os.environ.get("EBT_SIM_SEED")
SEEDS = [int(_REPLAY)] if _REPLAY else list(range(100))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_converges(name: str) -> None:
    for seed in SEEDS:
        net = Network(seed, trace=_REPLAY is not None)
        try:
            SCENARIOS[name](net)
        except AssertionError as exc:
            print("\n".join(net.trace))  # shown by pytest on failure when replaying a seed
            hint = (
                f"replay: EBT_SIM_SEED={seed} pytest {__file__} -k {name!r}, "
                f"or python -m tests.net.ebt_sim --seed {seed} --scenario {name}"
            )
            raise AssertionError(f"scenario {name}, seed {seed}: {exc}\n{hint}") from exc


@pytest.mark.parametrize("seed", SEEDS[:10])
def test_request_skipping_saves_notes_on_reconnect(seed: int) -> None:
    """Paper A.5: after two full syncs, a reconnect names only the feeds that changed (both ways)."""
    feeds, changed = 12, 2
    with_skipping = reconnect_note_entries(seed, use_stored_clocks=True, feeds=feeds, changed=changed)
    without = reconnect_note_entries(seed, use_stored_clocks=False, feeds=feeds, changed=changed)
    assert with_skipping == 2 * changed  # our note for each changed feed and the peer's answer
    assert without == 2 * feeds  # both sides name every feed


def test_eager_links_form_a_tree() -> None:
    """Paper A.9: in a triangle, flooding delivers every message twice; EBT's lazy links keep it near once."""
    delivered = needed = 0
    for seed in range(30):  # a property of the average: single seeds vary
        net = Network(seed)
        scenario_three(net)
        delivered += net.messages_delivered
        needed += messages_needed(net)
    assert needed <= delivered < 1.5 * needed
