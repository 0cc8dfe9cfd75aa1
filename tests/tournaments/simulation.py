"""Random tournaments played to the end through bot.tournaments, checked on the way.

Shared by tests/tournaments/test_simulated.py (a few hundred) and bench/tournament_pairing.py
(``--simulate 1000``).  Each round is checked as it is paired; at the end a Swiss goes through
caissify-pairings' own checker (``fpc.check_trf``) from our TRF export, and the standings are
recomputed from that TRF by a separate, plain implementation of the same FIDE rules.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from caissify_pairings.fpc import check_trf
from caissify_pairings.trf import parse_trf

from bot.tournaments import (
    PLAYED,
    Format,
    Player,
    Settings,
    Status,
    Tournament,
    from_data,
    join,
    leave,
    new,
    pair_next_round,
    record_result,
    standings,
    start,
    to_data,
    to_trf,
)


def berger_table(n: int) -> list[list[tuple[int, int]]]:
    """FIDE's Berger tables written from the handbook's rule (C.05 Annex 1), not the library's code:
    round 1 is 1-n, 2-(n-1), ...; each next round adds n/2 to every number but n (counting 1..n-1
    round and round), and the game of player n changes colours."""
    table = [[(i, n + 1 - i) for i in range(1, n // 2 + 1)]]
    for _ in range(n - 2):
        step = [((a - 1 + n // 2) % (n - 1) + 1 if a != n else n, (b - 1 + n // 2) % (n - 1) + 1 if b != n else n)
                for a, b in table[-1]]
        step[0] = (step[0][1], step[0][0])
        table.append(step)
    return table


def round_robin_schedule(players: int, cycles: int) -> list[list[tuple[int, int | None]]]:
    """Every round's (white, black) by starting number, a bye as (player, None)."""
    n = players + players % 2
    once = berger_table(n)
    rounds = once + [[(b, a) for a, b in r] for r in once] if cycles == 2 else once
    return [[(a, None) if b > players else (b, None) if a > players else (a, b) for a, b in r] for r in rounds]


@dataclass
class Outcome:
    tournament: Tournament
    rounds_paired: int = 0
    rounds_checked: int = 0
    # Swiss pairs whose earlier game was forfeited, paired again (FIDE allows it: no game was played).
    forfeit_rematches: int = 0


def play(seed: int) -> Outcome:
    """One random tournament: sizes, results (draws, forfeits), leavers before and during play."""
    rng = random.Random(seed)
    fmt = rng.choice([Format.SWISS, Format.ROUND_ROBIN])
    if fmt is Format.SWISS:
        n = rng.randint(3, 14)
        settings = Settings(fmt, rounds=rng.randint(1, min(n - 1, 7)),
                            bye_points=1.0 if rng.random() < 0.8 else 0.5,
                            initial_color=rng.choice(["white", "black"]))
    else:
        n = rng.randint(3, 16)
        settings = Settings(fmt, cycles=1 if rng.random() < 0.8 else 2,
                            bye_points=rng.choice([1.0, 0.5]))
    t = new(settings)
    extra = 2 if fmt is Format.SWISS else min(2, 16 - n)
    for i in range(n + extra):
        t = join(t, Player(f"p{i}", f"Player {i}", rng.choice([0, 1200, 1500, 1500, 1800, 2100])))
    # Some leave before the start: simply removed.
    for pid in rng.sample([p.id for p in t.players], extra):
        t = leave(t, pid)
    if fmt is Format.SWISS and settings.rounds is not None and settings.rounds > len(t.players) - 1:
        raise AssertionError("the settings allow the players")
    t = start(t)
    out = Outcome(t)
    check_round(t)
    while t.status is not Status.FINISHED:
        current = t.rounds[-1]
        # Sometimes a player leaves in the middle of a round (their game, if running, is forfeited).
        if rng.random() < 0.08 and len(t.active()) > 2:
            t = leave(t, rng.choice(t.active()).id)
        for pairing in t.rounds[-1].pairings:
            if not pairing.decided:
                result = rng.choices(["1-0", "0-1", "1/2-1/2", "+-", "-+"], [40, 35, 15, 5, 5])[0]
                t = record_result(t, current.number, pairing.white, result)
        if t.status is Status.FINISHED:
            break
        before = len(t.rounds)
        t = pair_next_round(t)
        if len(t.rounds) > before:
            check_round(t)
        else:
            assert t.ended_early and not legal_round_exists(t), "a Swiss ended with a legal round left"
    out.tournament = t
    out.rounds_paired = len(t.rounds)
    out.forfeit_rematches = forfeit_rematches(t)
    out.rounds_checked = check_finished(t)
    return out


def check_round(t: Tournament) -> None:
    """The round just paired: everyone still in is there once; a Swiss pairs no pair that has
    played and gives no second bye; a round robin's round is its Berger table's."""
    rnd = t.rounds[-1]
    gone = {pid for pid, _ in t.withdrawn}
    seen = Counter(pid for p in rnd.pairings for pid in p.players())
    assert all(c == 1 for c in seen.values()), rnd
    active = {p.id for p in t.active()}
    if t.settings.format is Format.SWISS:
        assert set(seen) == active, (set(seen) ^ active)
        assert sum(p.is_bye for p in rnd.pairings) == len(active) % 2
    else:
        schedule = round_robin_schedule(len(t.players), t.settings.cycles)[rnd.number - 1]
        expected = []
        for w, b in schedule:
            white = t.players[w - 1].id
            black = None if b is None else t.players[b - 1].id
            if white in gone and (black is None or black in gone):
                continue
            expected.append((w, b))
        got = [(t.starting_number(p.white), None if p.black is None else t.starting_number(p.black))
               for p in rnd.pairings]
        assert sorted(got, key=str) == sorted(expected, key=str), (rnd.number, got, expected)
        for p in rnd.pairings:
            if p.black is not None and (p.white in gone or p.black in gone):
                assert p.result == ("-+" if p.white in gone else "+-")
    check_history(t)


def check_history(t: Tournament) -> None:
    """No pair plays twice (a single round robin or a Swiss), at most one bye each (per cycle)."""
    played: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    for rnd in t.rounds:
        for p in rnd.pairings:
            if p.black is None:
                byes[p.white] += 1
            elif p.result in PLAYED or (t.settings.format is Format.ROUND_ROBIN):
                played[frozenset((p.white, p.black))] += 1
    limit = t.settings.cycles
    assert all(c <= limit for c in played.values()), played.most_common(3)
    assert all(c <= limit for c in byes.values()), byes.most_common(3)


def legal_round_exists(t: Tournament) -> bool:
    """Brute force: can the players still in be paired with no pair that has played, and at most
    one bye to a player without a bye or a forfeit win (FIDE C.04.1)?"""
    active = [p.id for p in t.active()]
    met: set[frozenset[str]] = set()
    no_bye: set[str] = set()
    for rnd in t.rounds:
        for p in rnd.pairings:
            if p.black is None:
                no_bye.add(p.white)
            elif p.result in PLAYED:
                met.add(frozenset((p.white, p.black)))
            elif p.result in ("+-", "-+"):
                no_bye.add(p.white if p.result == "+-" else p.black)

    def pairable(left: list[str]) -> bool:
        if not left:
            return True
        first, rest = left[0], left[1:]
        return any(frozenset((first, other)) not in met and pairable([x for x in rest if x != other])
                   for other in rest)

    if len(active) < 2:
        return False
    if len(active) % 2 == 0:
        return pairable(active)
    return any(pairable([x for x in active if x != bye]) for bye in active if bye not in no_bye)


def forfeit_rematches(t: Tournament) -> int:
    if t.settings.format is not Format.SWISS:
        return 0
    seen: set[frozenset[str]] = set()
    again = 0
    for rnd in t.rounds:
        for p in rnd.pairings:
            if p.black is not None:
                pair = frozenset((p.white, p.black))
                again += pair in seen
                seen.add(pair)
    return again


def check_finished(t: Tournament) -> int:
    """At the end: the TRF reads back as the tournament; a Swiss's rounds all pass the library's
    checker (when a bye scores 1: the checker scores every bye 1); the standings equal a plain
    recomputation from the TRF.  Returns the rounds the checker passed."""
    # Stored as JSON and read back, it is the same tournament.
    assert from_data(json.loads(json.dumps(to_data(t)))) == t
    trf = to_trf(t)
    parsed = parse_trf(trf)
    by_sn = {p["starting_number"]: p for p in parsed["players"]}
    for rnd in t.rounds:
        for p in rnd.pairings:
            w = by_sn[t.starting_number(p.white)]["results"][rnd.number]
            if p.black is None:
                assert w == {"opponent": None, "color": None, "result": "U"}
            else:
                assert w["opponent"] == t.starting_number(p.black) and w["color"] == "w"
    checked = 0
    if t.settings.format is Format.SWISS and t.settings.bye_points == 1.0:
        report = check_trf(trf)
        assert report["summary"]["rounds_mismatched"] == 0, [r for r in report["rounds"] if not r["match"]]
        assert report["summary"]["rounds_checked"] == len(t.rounds)
        checked = len(t.rounds)
    recompute_and_compare(t, parsed)
    return checked


def recompute_and_compare(t: Tournament, parsed: dict[str, Any]) -> None:
    """Points, Buchholz, Buchholz cut-1, Sonneborn-Berger and wins from the TRF's results alone,
    then the standings must hold these values and be in their order."""
    swiss = t.settings.format is Format.SWISS
    bye = t.settings.bye_points
    n_rounds = len(t.rounds) if t.rounds and t.rounds[-1].complete else len(t.rounds) - 1
    players = {p["starting_number"]: p["results"] for p in parsed["players"]}
    rows: dict[int, list[tuple[float, int | None, str]]] = {}
    for sn, results in players.items():
        mine = []
        for r in range(1, n_rounds + 1):
            res = results.get(r)
            if res is None:
                mine.append((0.0, None, "absent"))
            elif res["opponent"] is None:
                mine.append((bye, None, "bye"))
            else:
                code = res["result"]
                pts = {"1": 1.0, "=": 0.5, "0": 0.0, "+": 1.0, "-": 0.0}[code]
                mine.append((pts, res["opponent"], "game" if code in "1=0" else code))
        rows[sn] = mine
    total = {sn: sum(x[0] for x in r) for sn, r in rows.items()}
    adjusted = {}
    for sn, r in rows.items():
        voluntary = [kind in ("-", "absent") for _, _, kind in r]
        last = max([i for i, v in enumerate(voluntary) if not v], default=-1)
        adjusted[sn] = sum(p if i <= last or opp is not None else (0.5 if swiss else 0.0)
                           for i, (p, opp, _) in enumerate(r))
    expect: dict[int, dict[str, float]] = {}
    for sn, r in rows.items():
        values = []
        for p, opp, kind in r:
            if kind == "game":
                values.append((adjusted[opp], p, False))  # type: ignore[index]
            elif swiss:
                values.append((total[sn], p, kind in ("-", "absent")))
            elif opp is not None:
                values.append((0.0, p, True))
        bh = sum(v[0] for v in values)
        cut_pool = [v[0] for v in values if v[2]] or [v[0] for v in values]
        expect[sn] = {"points": total[sn], "BH": bh, "BH-C1": bh - min(cut_pool) if cut_pool else 0.0,
                      "SB": sum(v[0] * v[1] for v in values), "WIN": float(sum(1 for x in r if x[0] == 1.0))}
    table = standings(t)
    assert len(table) == len(t.players)
    for s in table:
        sn = t.starting_number(s.player)
        assert s.points == expect[sn]["points"], (s, expect[sn])
        for tb, value in s.tiebreaks:
            if tb.value in expect[sn]:
                assert abs(value - expect[sn][tb.value]) < 1e-9, (s, tb, expect[sn])
    # In rank order: points, then each tie-break down to the first direct encounter.
    keys = []
    for s in table:
        key = [expect[t.starting_number(s.player)]["points"]]
        for tb in t.settings.tiebreaks:
            if tb.value == "DE":
                break
            key.append(expect[t.starting_number(s.player)][tb.value])
        keys.append(key)
    assert all(a >= b for a, b in zip(keys, keys[1:], strict=False)), keys
