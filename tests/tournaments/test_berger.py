"""Round robins follow FIDE's Berger tables (Handbook C.05, Annex 1) for 3 to 16 players."""

from __future__ import annotations

import pytest

from bot.tournaments import Format, Player, Settings, Tournament, join, new, pair_next_round, record_result, start
from tests.tournaments.simulation import berger_table, round_robin_schedule

# Copied from the handbook's tables: round by round, white first.
HANDBOOK = {
    4: ["1-4 2-3", "4-3 1-2", "2-4 3-1"],
    6: ["1-6 2-5 3-4", "6-4 5-3 1-2", "2-6 3-1 4-5", "6-5 1-4 2-3", "3-6 4-2 5-1"],
    8: ["1-8 2-7 3-6 4-5", "8-5 6-4 7-3 1-2", "2-8 3-1 4-7 5-6", "8-6 7-5 1-4 2-3", "3-8 4-2 5-1 6-7",
        "8-7 1-6 2-5 3-4", "4-8 5-3 6-2 7-1"],
    10: ["1-10 2-9 3-8 4-7 5-6", "10-6 7-5 8-4 9-3 1-2", "2-10 3-1 4-9 5-8 6-7", "10-7 8-6 9-5 1-4 2-3",
         "3-10 4-2 5-1 6-9 7-8", "10-8 9-7 1-6 2-5 3-4", "4-10 5-3 6-2 7-1 8-9", "10-9 1-8 2-7 3-6 4-5",
         "5-10 6-4 7-3 8-2 9-1"],
}


def parse(rounds: list[str]) -> list[list[tuple[int, int]]]:
    return [[(int(a), int(b)) for a, b in (game.split("-") for game in line.split())] for line in rounds]


@pytest.mark.parametrize("n", sorted(HANDBOOK))
def test_the_tables_written_from_the_rule_are_the_handbooks(n: int) -> None:
    assert berger_table(n) == parse(HANDBOOK[n])


def played_through(players: int, cycles: int) -> Tournament:
    t = new(Settings(Format.ROUND_ROBIN, cycles=cycles))
    for i in range(players):
        t = join(t, Player(f"p{i}", f"P{i}"))
    t = start(t)
    while len(t.rounds) < t.total_rounds:
        for p in t.rounds[-1].pairings:
            if not p.decided:
                t = record_result(t, len(t.rounds), p.white, "1/2-1/2")
        t = pair_next_round(t)
    return t


@pytest.mark.parametrize("cycles", [1, 2])
@pytest.mark.parametrize("players", range(3, 17))
def test_every_round_is_the_berger_tables(players: int, cycles: int) -> None:
    t = played_through(players, cycles)
    schedule = round_robin_schedule(players, cycles)
    assert len(t.rounds) == len(schedule) == (players - 1 + players % 2) * cycles
    for rnd, expected in zip(t.rounds, schedule, strict=True):
        got = [(t.starting_number(p.white), None if p.black is None else t.starting_number(p.black))
               for p in rnd.pairings]
        assert sorted(got, key=str) == sorted(expected, key=str)
    # Every pair meets once a cycle; with an odd count each player has one bye a cycle.
    meetings: dict[frozenset[str], int] = {}
    byes: dict[str, int] = {}
    for rnd in t.rounds:
        for p in rnd.pairings:
            if p.black is None:
                byes[p.white] = byes.get(p.white, 0) + 1
            else:
                pair = frozenset((p.white, p.black))
                meetings[pair] = meetings.get(pair, 0) + 1
    assert len(meetings) == players * (players - 1) // 2 and set(meetings.values()) == {cycles}
    assert byes == ({p.id: cycles for p in t.players} if players % 2 else {})


def test_a_double_round_robin_reverses_the_colours() -> None:
    t = played_through(4, 2)
    first = [(p.white, p.black) for r in t.rounds[:3] for p in r.pairings]
    second = [(p.black, p.white) for r in t.rounds[3:] for p in r.pairings]
    assert first == second
