"""The fast path of Swiss pairing (bot/tournaments/fast_dutch.py, matching.py): the library's own
Dutch engine with a warm-started exact maximum-weight matching pairs the rounds the unmodified
library pairs. Its speed is measured by bench/tournament_pairing.py, not here."""

from __future__ import annotations

import logging
import random
from typing import Any

import caissify_pairings
import networkx as nx
import pytest
from caissify_pairings import generate_pairings

from bot.tournaments import (
    Format,
    Player,
    Settings,
    Status,
    Tournament,
    fast_dutch,
    join,
    leave,
    new,
    pair_next_round,
    pairing,
    record_result,
    start,
)
from bot.tournaments.matching import Adj, Matcher, max_weight_matching


def layered_weight(rng: random.Random, fields: int = 12) -> int:
    """A weight shaped like the engine's: small values in far-apart bit fields (so many ties)."""
    return sum(rng.choice((0, 0, 1, 2, 3)) << (20 * k) for k in range(fields)) or 1


def random_graph(rng: random.Random, n: int, density: float) -> Adj:
    adj: Adj = {v: {} for v in range(n)}
    for u in range(n):
        for v in range(u + 1, n):
            if rng.random() < density:
                adj[u][v] = adj[v][u] = layered_weight(rng)
    return adj


def as_networkx(adj: Adj) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(adj)
    for u, nbrs in adj.items():
        for v, wt in nbrs.items():
            if u < v:
                g.add_edge(u, v, weight=wt)
    return g


def weight_of(adj: Adj, matching: set[tuple[int, int]]) -> int:
    return sum(adj[u][v] for u, v in matching)


def normal(matching: set[tuple[int, int]]) -> set[tuple[int, int]]:
    return {(min(u, v), max(u, v)) for u, v in matching}


def test_the_port_returns_networkx_matching_itself() -> None:
    for seed in range(150):
        rng = random.Random(seed)
        adj = random_graph(rng, rng.randint(1, 24), rng.choice((0.3, 0.7, 1.0)))
        for maxcardinality in (True, False):
            expected = nx.max_weight_matching(as_networkx(adj), maxcardinality=maxcardinality)
            assert normal(max_weight_matching(adj, maxcardinality)) == normal(expected), seed


def change(rng: random.Random, adj: Adj) -> None:
    """One of the engine's kinds of change between two runs: a vertex's edges re-weighted (up or
    down), a pair locked in (its other edges gone, its own edge weight 1), or a few edges gone."""
    n = len(adj)
    kind = rng.randrange(3)
    if kind == 0:
        v = rng.randrange(n)
        for w in list(adj[v]):
            if rng.random() < 0.6:
                adj[v][w] = adj[w][v] = max(1, adj[v][w] + rng.choice((-1, 1)) * layered_weight(rng, 6))
    elif kind == 1 and n >= 2:
        u, v = rng.sample(range(n), 2)
        for x in (u, v):
            for w in list(adj[x]):
                del adj[w][x]
            adj[x].clear()
        adj[u][v] = adj[v][u] = 1
    else:
        for _ in range(3):
            u, v = rng.sample(range(n), 2)
            adj[u].pop(v, None)
            adj[v].pop(u, None)


def test_warm_started_runs_are_maximum_and_certified() -> None:
    warm = 0
    for seed in range(60):
        rng = random.Random(seed)
        adj = random_graph(rng, rng.randint(6, 30), rng.choice((0.5, 0.9)))
        matcher = Matcher(check_all=True)
        for _ in range(25):
            got = matcher.solve({v: dict(nbrs) for v, nbrs in adj.items()})
            expected = nx.max_weight_matching(as_networkx(adj), maxcardinality=True)
            assert len(got) == len(expected), seed
            assert weight_of(adj, got) == weight_of(adj, expected), seed
            change(rng, adj)
        assert matcher.uncertified == 0, seed
        warm += matcher.warm
    assert warm > 500  # most runs started from the last state (the others had no perfect matching)


def test_a_graph_without_a_perfect_matching_gets_networkx_answer() -> None:
    adj: Adj = {0: {1: 5}, 1: {0: 5}, 2: {}, 3: {}}
    matcher = Matcher()
    assert normal(matcher.solve(adj)) == {(0, 1)}
    assert matcher.fallbacks == 1


def play_round(rng: random.Random, t: Tournament) -> Tournament:
    for p in t.rounds[-1].pairings:
        if not p.decided:
            result = rng.choices(["1-0", "0-1", "1/2-1/2", "+-", "-+"], [42, 38, 16, 2, 2])[0]
            t = record_result(t, len(t.rounds), p.white, result)
    return t


def compare_tournament(seed: int, players: int, rounds: int) -> tuple[int, Matcher]:
    """Plays a seeded Swiss and pairs each round both ways; returns the rounds compared."""
    rng = random.Random(seed)
    t = new(Settings(Format.SWISS, rounds=rounds))
    for i in range(players):
        t = join(t, Player(f"p{i}", f"P{i}", rng.randint(1000, 2400)))
    t = start(t)
    matcher = Matcher(check_all=True)
    compared = 0
    while True:
        t = play_round(rng, t)
        if t.status is not Status.RUNNING or len(t.rounds) >= t.total_rounds:
            return compared, matcher
        gone = {pid for pid, _ in t.withdrawn}
        if rng.random() < 0.15:
            t = leave(t, rng.choice([p.id for p in t.players if p.id not in gone]))
        number = len(t.rounds) + 1
        players_in, played = pairing.dutch_players(t, number)
        options: dict[str, Any] = {"players": players_in, "previous_pairings": played, "round_number": number,
                                   "total_rounds": t.total_rounds, "initial_color": t.settings.initial_color}
        assert fast_dutch.dutch_pairings(matcher=matcher, **options) == generate_pairings("dutch", **options), \
            (seed, number)
        compared += 1
        t = pair_next_round(t)


def test_fast_rounds_equal_the_library_rounds(caplog: pytest.LogCaptureFixture) -> None:
    """bench/tournament_pairing.py --compare N does the same on more and bigger fields."""
    caplog.set_level(logging.ERROR, logger="caissify_pairings")
    compared = warm = 0
    for seed in range(16):
        rng = random.Random(seed)
        done, matcher = compare_tournament(seed, rng.randint(10, 30), rng.randint(3, 6))
        compared += done
        warm += matcher.warm
        assert matcher.uncertified == 0
    assert compared > 40 and warm > 0


def test_the_fast_path_is_for_the_library_version_it_was_checked_against(monkeypatch: pytest.MonkeyPatch) -> None:
    # The library's method the stand-in serves: its parameters and its use of networkx as expected.
    assert caissify_pairings.__version__ == fast_dutch.CHECKED_VERSION
    assert fast_dutch.available()
    fast_dutch.available.cache_clear()
    monkeypatch.setattr(caissify_pairings, "__version__", "0.6.0")
    try:
        assert not fast_dutch.available()
        rng = random.Random(3)
        t = new(Settings(Format.SWISS, rounds=3))
        for i in range(9):
            t = join(t, Player(f"p{i}", f"P{i}", 1500 + i))
        t = pair_next_round(play_round(rng, start(t)))  # paired by the library as it is
        assert len(t.rounds) == 2
    finally:
        monkeypatch.undo()
        fast_dutch.available.cache_clear()
    assert fast_dutch.available()
