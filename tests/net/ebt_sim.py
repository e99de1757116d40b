"""Seeded simulator for the EBT reducer: N in-memory peers, random interleavings, convergence checks.

Each simulated peer is one :class:`EbtState`, a dict store ``{author: {sequence: message}}`` and the clocks it
persisted for other peers. The simulator plays the shell: it executes effects (queues notes and messages on
per-direction FIFO links, validates appends), and turns what arrives back into events. Which link delivers next,
when appends complete, when a timer fires and when a peer publishes are drawn from a seeded ``random.Random``,
so a failing seed replays exactly: ``EBT_SIM_SEED=17 pytest tests/net/test_ebt_sim.py`` or
``python -m tests.net.ebt_sim --seed 17 --scenario loop`` (prints the trace).

After every step the simulator checks the reducer's invariant that a peer receives each feed eagerly from at most
one connection.
"""

from __future__ import annotations

import argparse
import itertools
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ssblab.net.ebt import (
    Append,
    Appended,
    AppendFailed,
    EbtState,
    Effect,
    EndStream,
    Event,
    MessageReceived,
    NotesReceived,
    PeerConnected,
    PeerDisconnected,
    PersistClock,
    Replicate,
    SendMessage,
    SendMessages,
    SendNotes,
    Tick,
    receiving_peer,
    step,
)

Message = dict[str, Any]
TIMEOUT = 3.0
MAX_ACTIONS = 200_000


def make_message(author: str, sequence: int, valid: bool = True) -> Message:
    """A stand-in for a classic message: enough for the reducer (author, sequence) and the fake validator."""
    return {"author": author, "sequence": sequence, "content": {"type": "test", "n": sequence}, "valid": valid}


@dataclass
class SimPeer:
    """One simulated node: reducer state, store, persisted peer clocks, pending appends."""

    id: str
    state: EbtState
    store: dict[str, dict[int, Message]]
    clocks: dict[str, dict[str, int]] = field(default_factory=dict)
    appends: deque[tuple[str, Message]] = field(default_factory=deque)

    def latest(self, author: str) -> int:
        return max(self.store.get(author, {}), default=0)


class Network:
    """The simulated shell for all peers; ``trace`` collects one line per event for replaying a seed."""

    def __init__(self, seed: int, *, use_stored_clocks: bool = True, trace: bool = False) -> None:
        self.rng = random.Random(seed)
        self.now = 0.0
        self.peers: dict[str, SimPeer] = {}
        self.links: dict[tuple[str, str], deque[tuple[str, Any]]] = {}
        self.use_stored_clocks = use_stored_clocks
        self.publish_budget = 0
        self.note_entries = 0
        self.append_failures = 0
        self.messages_delivered = 0
        self.tracing = trace
        self.trace: list[str] = []

    # -- building ----------------------------------------------------------------------------------------------

    def add_peer(self, peer_id: str, feeds: dict[str, int], wants: list[str], *, partial: int = 0) -> SimPeer:
        """A peer holding ``feeds`` ({author: how many messages}); ``partial`` drops that many from each start."""
        store = {a: {s: make_message(a, s) for s in range(partial + 1, n + 1)} for a, n in feeds.items()}
        state = EbtState.initial({a: n for a, n in feeds.items() if n}, timeout=TIMEOUT, local_id=peer_id)
        peer = self.peers[peer_id] = SimPeer(peer_id, state, store)
        for feed in wants:
            self.dispatch(peer, Replicate(feed, True))
        return peer

    def connect(self, client: str, server: str) -> None:
        """Open a stream: the server gets ``PeerConnected`` first, as the muxrpc call arrives there."""
        self.links[(client, server)] = deque()
        self.links[(server, client)] = deque()
        for me, other, role in ((server, client, "server"), (client, server, "client")):
            peer = self.peers[me]
            stored = dict(peer.clocks.get(other, {})) if self.use_stored_clocks else {}
            self.dispatch(peer, PeerConnected(other, stored, self.now, role))  # type: ignore[arg-type]

    def disconnect(self, a: str, b: str) -> None:
        if (a, b) not in self.links:
            return
        del self.links[(a, b)], self.links[(b, a)]
        self.dispatch(self.peers[a], PeerDisconnected(b, self.now))
        self.dispatch(self.peers[b], PeerDisconnected(a, self.now))

    # -- the shell ---------------------------------------------------------------------------------------------

    def dispatch(self, peer: SimPeer, event: Event) -> None:
        if self.tracing:
            self.trace.append(f"{self.now:8.3f} {peer.id} <- {event}")
        peer.state, effects = step(peer.state, event)
        check_single_receiver(peer.state)
        for effect in effects:
            self.execute(peer, effect)

    def execute(self, peer: SimPeer, effect: Effect) -> None:
        if self.tracing:
            self.trace.append(f"{self.now:8.3f} {peer.id} -> {effect}")
        link = self.links.get((peer.id, getattr(effect, "peer", "")))
        if isinstance(effect, SendNotes) and link is not None:
            self.note_entries += len(effect.notes)
            link.append(("notes", dict(effect.notes)))
        elif isinstance(effect, SendMessages) and link is not None:
            log = peer.store.get(effect.author, {})
            link.extend(("msg", log[s]) for s in range(effect.from_sequence, effect.to_sequence + 1) if s in log)
        elif isinstance(effect, SendMessage) and link is not None:
            link.append(("msg", effect.message))
        elif isinstance(effect, Append):
            peer.appends.append((effect.peer, effect.message))  # type: ignore[arg-type]
        elif isinstance(effect, PersistClock):
            peer.clocks[effect.peer] = dict(effect.clock)
        elif isinstance(effect, EndStream):
            self.disconnect(peer.id, effect.peer)

    def finish_append(self, peer: SimPeer) -> None:
        """The validator: the next sequence of the feed, and not a message marked invalid."""
        source, msg = peer.appends.popleft()
        author, seq = msg["author"], msg["sequence"]
        assert seq > peer.latest(author), f"{peer.id}: Append of {author}:{seq}, which is already stored"
        if seq != peer.latest(author) + 1 or not msg["valid"]:
            self.append_failures += 1
            self.dispatch(peer, AppendFailed(source, author, "invalid message"))
            return
        peer.store.setdefault(author, {})[seq] = msg
        self.dispatch(peer, Appended(author, seq, msg, self.now))

    def publish(self, peer: SimPeer) -> None:
        seq = peer.latest(peer.id) + 1
        msg = make_message(peer.id, seq)
        peer.store.setdefault(peer.id, {})[seq] = msg
        self.publish_budget -= 1
        self.dispatch(peer, Appended(peer.id, seq, msg, self.now))

    # -- running -----------------------------------------------------------------------------------------------

    def actions(self) -> list[Callable[[], None]]:
        busy: list[Callable[[], None]] = [lambda k=key: self.deliver(*k) for key, q in self.links.items() if q]
        busy += [lambda p=p: self.finish_append(p) for p in self.peers.values() if p.appends]
        if self.publish_budget > 0:
            busy += [lambda p=p: self.publish(p) for p in self.peers.values() if p.id in p.state.wanted]
        return busy

    def deliver(self, src: str, dst: str) -> None:
        kind, value = self.links[(src, dst)].popleft()
        if kind == "notes":
            self.dispatch(self.peers[dst], NotesReceived(src, value, self.now))
        else:
            self.messages_delivered += 1
            self.dispatch(self.peers[dst], MessageReceived(src, value["author"], value["sequence"], value, self.now))

    def tick(self, jump: float) -> None:
        self.now += jump
        for peer in self.peers.values():
            self.dispatch(peer, Tick(self.now))

    def run(self, max_actions: int | None = None) -> None:
        """Random actions until quiet, with timer ticks (and long waits when quiet, so timeouts fire)."""
        limit = MAX_ACTIONS if max_actions is None else max_actions
        quiet_ticks = 0
        for _ in range(limit):
            busy = self.actions()
            if not busy:
                if max_actions is not None or quiet_ticks >= 2:
                    return
                quiet_ticks += 1
                self.tick(TIMEOUT * 2)
                continue
            quiet_ticks = 0
            self.now += self.rng.uniform(0.0, 0.02)
            if self.rng.random() < 0.01:
                self.tick(self.rng.uniform(0.0, TIMEOUT))
            self.rng.choice(busy)()
        if max_actions is None:
            raise AssertionError(f"no quiescence after {limit} actions (livelock?)")


def check_single_receiver(state: EbtState) -> None:
    """At most one live connection is eager towards us for each feed."""
    seen: dict[str, str] = {}
    for peer_id, peer in state.peers.items():
        for feed, rep in (peer.replicating or {}).items():
            if rep.rx and not peer.ended:
                assert feed not in seen, f"feed {feed} received from both {seen[feed]} and {peer_id}"
                seen[feed] = peer_id


def assert_converged(net: Network, feeds: list[str], skip: set[tuple[str, str]] = frozenset()) -> None:  # type: ignore[assignment]
    """Every peer that wants a feed holds the longest valid log of it that any peer has."""
    for feed in feeds:
        logs = [p.store.get(feed, {}) for p in net.peers.values() if (p.id, feed) not in skip]
        full = max(logs, key=len)
        for peer in net.peers.values():
            if feed in peer.state.wanted and (peer.id, feed) not in skip:
                assert peer.store.get(feed, {}) == full, (
                    f"{peer.id} has {sorted(peer.store.get(feed, {}))} of {feed}, expected 1..{len(full)}"
                )


# -- scenarios (each returns the network for further checks) --------------------------------------------------


def scenario_two(net: Network) -> None:
    net.publish_budget = 5
    net.add_peer("alice", {"alice": net.rng.randint(0, 8)}, ["alice", "bob"])
    net.add_peer("bob", {"bob": net.rng.randint(0, 8)}, ["alice", "bob"])
    net.connect("alice", "bob")
    net.run()
    assert_converged(net, ["alice", "bob"])


def _mesh(net: Network, names: list[str], edges: list[tuple[str, str]], publish: int) -> None:
    net.publish_budget = publish
    for name in names:
        net.add_peer(name, {name: net.rng.randint(0, 6)}, names)
    for a, b in edges:
        net.connect(a, b)
    net.run()
    assert_converged(net, names)


def scenario_three(net: Network) -> None:
    names = ["alice", "bob", "carol"]
    _mesh(net, names, [("alice", "bob"), ("bob", "carol"), ("carol", "alice")], publish=6)


def scenario_chain(net: Network) -> None:
    names = ["a", "b", "c", "d", "e"]
    _mesh(net, names, list(itertools.pairwise(names)), publish=6)


def scenario_loop(net: Network) -> None:
    names = ["a", "b", "c", "d"]
    _mesh(net, names, [*itertools.pairwise(names), ("d", "a")], publish=6)


def scenario_disconnect(net: Network) -> None:
    """A triangle loses one edge mid-replication; the feeds still reach everyone through the third peer."""
    net.publish_budget = 4
    names = ["alice", "bob", "carol"]
    for name in names:
        net.add_peer(name, {name: net.rng.randint(3, 10)}, names)
    for a, b in [("alice", "bob"), ("bob", "carol"), ("carol", "alice")]:
        net.connect(a, b)
    net.run(max_actions=net.rng.randint(0, 60))
    net.disconnect(*net.rng.choice([("alice", "bob"), ("bob", "carol"), ("carol", "alice")]))
    net.run()
    assert_converged(net, names)


def scenario_reconnect(net: Network) -> None:
    """Links of a four-peer mesh drop and come back (with persisted clocks) while peers publish."""
    names = ["a", "b", "c", "d"]
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("a", "c")]
    net.publish_budget = 10
    for name in names:
        net.add_peer(name, {name: net.rng.randint(0, 5)}, names)
    for a, b in edges:
        net.connect(a, b)
    for _ in range(4):
        net.run(max_actions=net.rng.randint(5, 80))
        for a, b in net.rng.sample(edges, 2):
            net.disconnect(a, b)
        net.run(max_actions=net.rng.randint(0, 30))
        for a, b in edges:
            if (a, b) not in net.links:
                net.connect(a, b)
    net.run()
    assert_converged(net, names)


def scenario_handover(net: Network) -> None:
    """carol receives alice's feed from one of two full copies; that connection drops midway and nobody publishes
    again: the other copy must take over without any new note arriving (JS stalls here)."""
    net.add_peer("alice", {"alice": 12}, ["alice"])
    net.add_peer("bob", {"alice": 12}, ["alice"])
    carol = net.add_peer("carol", {}, ["alice"])
    net.connect("carol", "alice")
    net.connect("carol", "bob")
    net.run(max_actions=net.rng.randint(4, 30))
    source = receiving_peer(carol.state, "alice")
    if source is not None:
        net.disconnect("carol", source)
    net.run()
    assert_converged(net, ["alice"])


def scenario_write_error(net: Network) -> None:
    """bob holds a corrupt copy of alice's feed: carol rejects it, blocks alice's feed from bob, gets it from alice."""
    net.add_peer("alice", {"alice": 6}, ["alice"])
    bob = net.add_peer("bob", {"alice": 6}, ["alice"])
    bob.store["alice"][3] = make_message("alice", 3, valid=False)
    net.add_peer("carol", {}, ["alice"])
    net.connect("carol", "bob")
    net.run()
    assert sorted(net.peers["carol"].store.get("alice", {})) == [1, 2]
    net.connect("carol", "alice")
    net.run()
    assert_converged(net, ["alice"], skip={("bob", "alice")})
    assert net.append_failures >= 1


def scenario_partial(net: Network) -> None:
    """JS test/partial.js: bob lacks the start of alice's feed, so carol only gets it once she meets alice."""
    net.add_peer("alice", {"alice": 3}, ["alice"])
    net.add_peer("bob", {"alice": 3}, ["alice", "carol"], partial=1)
    net.add_peer("carol", {}, ["alice", "bob"])
    net.connect("bob", "carol")
    net.run()
    assert net.peers["carol"].store.get("alice", {}) == {}
    net.connect("carol", "alice")
    net.run()
    assert_converged(net, ["alice"], skip={("bob", "alice")})


def reconnect_note_entries(seed: int, use_stored_clocks: bool, feeds: int = 12, changed: int = 2) -> int:
    """Sync two peers twice, publish on a few feeds, reconnect: the note entries of that last session."""
    net = Network(seed, use_stored_clocks=use_stored_clocks)
    names = [f"f{i:02d}" for i in range(feeds)]
    net.add_peer("alice", {n: net.rng.randint(1, 5) for n in names}, names)
    net.add_peer("bob", {}, names)
    for _ in range(2):
        net.connect("bob", "alice")
        net.run()
        net.disconnect("bob", "alice")
    alice = net.peers["alice"]
    for author in net.rng.sample(names, changed):
        seq = alice.latest(author) + 1
        alice.store[author][seq] = make_message(author, seq)
        net.dispatch(alice, Appended(author, seq, alice.store[author][seq], net.now))
    before = net.note_entries
    net.connect("bob", "alice")
    net.run()
    assert_converged(net, names)
    return net.note_entries - before


def messages_needed(net: Network) -> int:
    """How many messages the peers had to receive: everything they hold that they did not publish."""
    return sum(len(log) for peer in net.peers.values() for author, log in peer.store.items() if author != peer.id)


SCENARIOS: dict[str, Callable[[Network], None]] = {
    "two": scenario_two,
    "three": scenario_three,
    "chain": scenario_chain,
    "loop": scenario_loop,
    "disconnect": scenario_disconnect,
    "handover": scenario_handover,
    "reconnect": scenario_reconnect,
    "write-error": scenario_write_error,
    "partial": scenario_partial,
}


def main() -> None:
    parser = argparse.ArgumentParser(description="Replay one seeded EBT simulation and print its trace.")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="three")
    args = parser.parse_args()
    net = Network(args.seed, trace=True)
    try:
        SCENARIOS[args.scenario](net)
    finally:
        print("\n".join(net.trace))


if __name__ == "__main__":
    main()
