"""Tie-breaks on small tournaments whose values are worked out by hand from FIDE's definitions
(Tie-Break Regulations C.07: Buchholz 8.1, cut-1 14.1, Sonneborn-Berger 9.1, direct encounter 6,
wins 7.1, unplayed rounds 16).  Each comment shows the sum."""

from __future__ import annotations

from bot.tournaments import Format, Pairing, Player, Round, Settings, Tiebreak, Tournament, standings
from bot.tournaments.standings import Entry, direct_encounter

BH, C1, SB, DE, WIN = (Tiebreak.BUCHHOLZ, Tiebreak.BUCHHOLZ_CUT1, Tiebreak.SONNEBORN_BERGER,
                       Tiebreak.DIRECT_ENCOUNTER, Tiebreak.WINS)


def made(fmt: Format, players: str, rounds: list[list[tuple[str, str | None, str | None]]],
         withdrawn: tuple[tuple[str, int], ...] = (), bye_points: float = 1.0,
         tiebreaks: tuple[Tiebreak, ...] = ()) -> Tournament:
    settings = Settings(fmt, rounds=len(rounds) if fmt is Format.SWISS else None, bye_points=bye_points,
                        tiebreaks=tiebreaks)
    return Tournament(settings, players=tuple(Player(p, p) for p in players),
                      rounds=tuple(Round(i, tuple(Pairing(w, b, r) for w, b, r in games))  # type: ignore[arg-type]
                                   for i, games in enumerate(rounds, start=1)),
                      started=True, withdrawn=withdrawn)


def table(t: Tournament) -> dict[str, tuple[float, dict[Tiebreak, float]]]:
    return {s.player: (s.points, dict(s.tiebreaks)) for s in standings(t)}


def order(t: Tournament) -> str:
    return "".join(s.player for s in standings(t))


def test_a_swiss_with_every_game_played() -> None:
    t = made(Format.SWISS, "ABCD", [
        [("A", "B", "1-0"), ("C", "D", "1/2-1/2")],
        [("A", "C", "1/2-1/2"), ("B", "D", "1-0")],
        [("D", "A", "0-1"), ("B", "C", "0-1")],
    ])
    # Points: A 1+1/2+1, B 0+1+0, C 1/2+1/2+1, D 1/2+0+0.
    assert table(t) == {
        # BH: B 1 + C 2 + D 1/2; cut the 1/2; SB: 1*1 + 2*1/2 + 1/2*1.
        "A": (2.5, {C1: 3.0, BH: 3.5, SB: 2.5, DE: 0.0, WIN: 2.0}),
        # BH: D 1/2 + A 2 1/2 + B 1; SB: 1/2*1/2 + 2 1/2*1/2 + 1*1.
        "C": (2.0, {C1: 3.5, BH: 4.0, SB: 2.5, DE: 0.0, WIN: 1.0}),
        # BH: A 2 1/2 + D 1/2 + C 2; SB: D 1/2 * 1.
        "B": (1.0, {C1: 4.5, BH: 5.0, SB: 0.5, DE: 0.0, WIN: 1.0}),
        # BH: C 2 + B 1 + A 2 1/2; cut the 1; SB: C 2 * 1/2.
        "D": (0.5, {C1: 4.5, BH: 5.5, SB: 1.0, DE: 0.0, WIN: 0.0}),
    }
    assert order(t) == "ACBD"


def test_a_swiss_with_a_bye_a_forfeit_and_a_player_who_left() -> None:
    # B never moves in round 2 (E wins by forfeit) and leaves: absent in round 3.
    t = made(Format.SWISS, "ABCDE", [
        [("A", "B", "1-0"), ("C", "D", "0-1"), ("E", None, None)],
        [("D", "A", "1/2-1/2"), ("E", "B", "+-"), ("C", None, None)],
        [("A", "C", "1-0"), ("D", "E", "1/2-1/2")],
    ], withdrawn=(("B", 2),))
    # Scores for the opponents' Buchholz (16.3): B's round 3, absent after his last round that
    # was not voluntarily unplayed, counts as a draw: 0 + 0 + 1/2.  The others: their points.
    # Own unplayed rounds (16.4): a dummy opponent with the player's own points.
    assert table(t) == {
        # BH: bye 2 1/2 (own) + forfeit win 2 1/2 (own) + D 2; cut the 2;
        # SB: 2 1/2*1 + 2 1/2*1 + 2*1/2; WIN: the bye and the forfeit win.
        "E": (2.5, {C1: 5.0, BH: 7.0, SB: 6.0, DE: 0.0, WIN: 2.0}),
        # BH: B 1/2 + D 2 + C 1; cut the 1/2; SB: 1/2*1 + 2*1/2 + 1*1.
        "A": (2.5, {C1: 3.0, BH: 3.5, SB: 2.5, DE: 0.0, WIN: 2.0}),
        # BH: C 1 + A 2 1/2 + E 2 1/2; SB: 1*1 + 2 1/2*1/2 + 2 1/2*1/2.
        "D": (2.0, {C1: 5.0, BH: 6.0, SB: 3.5, DE: 0.0, WIN: 1.0}),
        # BH: D 2 + bye 1 (own) + A 2 1/2; SB: the bye 1*1.
        "C": (1.0, {C1: 4.5, BH: 5.5, SB: 1.0, DE: 0.0, WIN: 1.0}),
        # BH: A 2 1/2 + forfeit loss 0 (own) + absent 0 (own); the cut takes a voluntarily
        # unplayed round first: one of the 0s.
        "B": (0.0, {C1: 2.5, BH: 2.5, SB: 0.0, DE: 0.0, WIN: 0.0}),
    }
    # E and A tie on 2 1/2: E's Buchholz cut-1 is higher.
    assert order(t) == "EADCB"


def test_cut_1_takes_a_forfeit_loss_before_a_lower_opponent() -> None:
    t = made(Format.SWISS, "ABCD", [
        [("A", "B", "1-0"), ("C", "D", "1-0")],
        [("A", "C", "-+"), ("B", "D", "1-0")],
        [("A", "D", "1-0"), ("B", "C", "0-1")],
    ])
    tb = table(t)
    # A: B 1 + forfeit loss 2 (own points, voluntarily unplayed) + D 0 = 3; the cut takes the
    # forfeit's 2, not D's 0.
    assert tb["A"] == (2.0, {C1: 1.0, BH: 3.0, SB: 1.0, DE: 0.0, WIN: 2.0})
    # C: D 0 + forfeit win 3 (own, not voluntary) + B 1 = 4, cut D's 0; SB 0 + 3 + 1; three wins.
    assert tb["C"] == (3.0, {C1: 4.0, BH: 4.0, SB: 4.0, DE: 0.0, WIN: 3.0})


def test_a_half_point_bye() -> None:
    t = made(Format.SWISS, "ABC", [
        [("A", "B", "1-0"), ("C", None, None)],
        [("C", "A", "0-1"), ("B", None, None)],
    ], bye_points=0.5)
    tb = table(t)
    # B: A 2 + bye 1/2 (own points; a bye is not voluntarily unplayed, so the cut takes the
    # least: the 1/2); SB: 2*0 + 1/2*1/2; a half-point bye is no win.
    assert tb["B"] == (0.5, {C1: 2.0, BH: 2.5, SB: 0.25, DE: 0.0, WIN: 0.0})
    # C: bye 1/2 (own) + A 2; SB 1/2*1/2 + 0.
    assert tb["C"] == (0.5, {C1: 2.0, BH: 2.5, SB: 0.25, DE: 0.0, WIN: 0.0})
    assert order(t) == "ABC"


def test_a_round_robin_breaks_ties_by_direct_encounter_then_wins_then_sonneborn_berger() -> None:
    t = made(Format.ROUND_ROBIN, "ABCD", [
        [("A", "D", "1-0"), ("B", "C", "1-0")],
        [("D", "C", "0-1"), ("A", "B", "0-1")],
        [("B", "D", "0-1"), ("C", "A", "1-0")],
    ])
    # B and C have 2: B beat C.  A and D have 1: A beat D.
    assert order(t) == "BCAD"
    tb = table(t)
    # SB: B beat C (2) and A (1); C beat D (1) and A (1); A beat D (1); D beat B (2).
    assert {p: v[1][SB] for p, v in tb.items()} == {"A": 1.0, "B": 3.0, "C": 2.0, "D": 2.0}
    assert tb["B"][1][DE] == 1.0 and tb["C"][1][DE] == 0.0


def test_a_round_robin_forfeit_adds_nothing_to_sonneborn_berger() -> None:
    # D left before round 2: his games are forfeits (16.4 in a round robin: no dummy opponent).
    t = made(Format.ROUND_ROBIN, "ABCD", [
        [("A", "D", "0-1"), ("B", "C", "1/2-1/2")],
        [("D", "C", "-+"), ("A", "B", "1/2-1/2")],
        [("B", "D", "+-"), ("C", "A", "1/2-1/2")],
    ], withdrawn=(("D", 1),))
    tb = table(t)
    # Points: A 0+1/2+1/2, B 1/2+1/2+1, C 1/2+1+1/2, D 1 (his forfeits count 0 at face value).
    # B: draws with C (2) and A (1): 2*1/2 + 1*1/2; the forfeit win over D adds nothing.
    assert tb["B"] == (2.0, {DE: 0.5, WIN: 1.0, SB: 1.5})
    assert tb["C"] == (2.0, {DE: 0.5, WIN: 1.0, SB: 1.5})
    # A: lost to D (1*0), drew with B and C (2*1/2 + 2*1/2).  D: beat A (1*1).
    assert tb["A"] == (1.0, {DE: 0.0, WIN: 0.0, SB: 2.0})
    assert tb["D"] == (1.0, {DE: 1.0, WIN: 1.0, SB: 1.0})
    # B and C tie on everything (starting number); D beat A.
    assert order(t) == "BCDA"


def test_a_circle_of_wins_falls_back_to_the_starting_number() -> None:
    t = made(Format.ROUND_ROBIN, "ABC", [
        [("A", "B", "1-0"), ("C", None, None)],
        [("B", "C", "1-0"), ("A", None, None)],
        [("C", "A", "1-0"), ("B", None, None)],
    ])
    assert {s.points for s in standings(t)} == {2.0}
    assert order(t) == "ABC"


def entry(points: float, opponent: str) -> Entry:
    return Entry(points, opponent, True, False, False)


def test_direct_encounter_in_a_swiss_where_not_all_have_met() -> None:
    # X beat Y and Z, who never met: X is ahead (2 > the 1 either could reach); Y and Z stay tied.
    games = {"X": [entry(1, "Y"), entry(1, "Z")], "Y": [entry(0, "X")], "Z": [entry(0, "X")]}
    assert direct_encounter(["Z", "Y", "X"], games, swiss=True) == [["X"], ["Z", "Y"]]
    # X beat only Y and never met Z: Z could still reach 2 against the two, so nobody goes ahead.
    games = {"X": [entry(1, "Y")], "Y": [entry(0, "X")], "Z": []}
    assert direct_encounter(["Z", "Y", "X"], games, swiss=True) == [["Z", "Y", "X"]]


def test_direct_encounter_is_applied_again_to_those_still_tied() -> None:
    # All met: A 2, B 1/2 + 1/2... B and C tie at 1 among the four, then B beat C.
    games = {
        "A": [entry(1, "B"), entry(1, "C"), entry(1, "D")],
        "B": [entry(0, "A"), entry(1, "C"), entry(0, "D")],
        "C": [entry(0, "A"), entry(0, "B"), entry(1, "D")],
        "D": [entry(0, "A"), entry(1, "B"), entry(0, "C")],
    }
    # Among the four: A 3, B 1, C 1, D 1; then among B, C, D each has 1: still tied.
    assert direct_encounter(["D", "C", "B", "A"], games, swiss=False) == [["A"], ["D", "C", "B"]]
