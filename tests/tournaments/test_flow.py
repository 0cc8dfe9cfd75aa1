"""A tournament's life: joining, starting, pairing, results, leaving, the end; bad input raises a
``TournamentError`` naming the case and leaves the tournament as it was."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from caissify_pairings.fpc import check_trf

from bot.tournaments import (
    Format,
    Player,
    Settings,
    Status,
    Tournament,
    TournamentError,
    join,
    leave,
    new,
    pair_next_round,
    record_result,
    round_complete,
    standings,
    start,
    to_trf,
    winner,
)
from bot.tournaments.trf import trf_name


def with_players(settings: Settings, n: int) -> Tournament:
    t = new(settings)
    for i in range(1, n + 1):
        t = join(t, Player(f"u{i}", f"Player {i}"))
    return t


def finish_round(t: Tournament, result: str = "1-0") -> Tournament:
    for p in t.rounds[-1].pairings:
        if not p.decided:
            t = record_result(t, len(t.rounds), p.white, result)
    return t


def games(t: Tournament, number: int) -> list[tuple[str, str | None, str | None]]:
    return sorted(((p.white, p.black, p.result) for p in t.rounds[number - 1].pairings), key=str)


def refused(code: str, change: Callable[[], object]) -> None:
    with pytest.raises(TournamentError) as caught:
        change()
    assert caught.value.code == code


def test_bad_input_is_refused_and_changes_nothing() -> None:
    swiss = Settings(Format.SWISS, rounds=3)
    t = with_players(swiss, 2)
    refused("already_joined", lambda: join(t, Player("u1", "again")))
    refused("too_few", lambda: start(t))
    refused("not_in", lambda: leave(t, "nobody"))
    refused("not_started", lambda: pair_next_round(t))
    refused("bad_rounds", lambda: new(Settings(Format.SWISS, rounds=0)))
    refused("bad_bye_points", lambda: new(Settings(Format.SWISS, rounds=3, bye_points=0.25)))
    refused("bad_cycles", lambda: new(Settings(Format.ROUND_ROBIN, cycles=3)))
    refused("too_many_rounds", lambda: start(with_players(Settings(Format.SWISS, rounds=4), 4)))
    full = with_players(Settings(Format.ROUND_ROBIN), 16)
    refused("full", lambda: join(full, Player("u17", "one more")))
    t = start(with_players(swiss, 5))
    before = t
    refused("already_started", lambda: join(t, Player("u9", "late")))
    refused("already_started", lambda: start(t))
    refused("round_running", lambda: pair_next_round(t))
    refused("bad_result", lambda: record_result(t, 1, "u1", "2-0"))
    refused("no_such_round", lambda: record_result(t, 2, "u1", "1-0"))
    bye = next(p.white for p in t.rounds[0].pairings if p.is_bye)
    refused("no_such_game", lambda: record_result(t, 1, bye, "1-0"))
    one = record_result(t, 1, "u1", "1-0")
    refused("already_decided", lambda: record_result(one, 1, "u1", "0-1"))
    assert t == before


def test_a_swiss_from_the_start_to_its_winner() -> None:
    t = with_players(Settings(Format.SWISS, rounds=3), 8)
    assert t.status is Status.REGISTERING and standings(t) == ()
    t = start(t)
    assert t.status is Status.RUNNING and len(t.rounds) == 1 and not round_complete(t)
    # Round 1 of the Dutch system: the top half meets the bottom half, seed 1 white.
    assert [(p.white, p.black) for p in t.rounds[0].pairings] == [
        ("u1", "u5"), ("u6", "u2"), ("u3", "u7"), ("u8", "u4")]
    while t.status is not Status.FINISHED:
        t = finish_round(t, "1-0")
        assert round_complete(t)
        if t.status is not Status.FINISHED:
            t = pair_next_round(t)
    assert len(t.rounds) == 3 and winner(t) == standings(t)[0].player
    refused("finished", lambda: pair_next_round(t))
    refused("finished", lambda: leave(t, "u1"))
    report = check_trf(to_trf(t))
    assert report["summary"]["rounds_matched"] == 3


def test_pairing_again_gives_the_same_round() -> None:
    """A crash between a round's last result and the next pairing: pairing again is the same."""
    t = start(with_players(Settings(Format.SWISS, rounds=4), 9))
    t = finish_round(t, "1/2-1/2")
    assert pair_next_round(t) == pair_next_round(t)
    assert pair_next_round(t).rounds[-1].number == 2


def test_seeding_follows_the_rating_then_the_order_of_joining() -> None:
    t = new(Settings(Format.ROUND_ROBIN))
    for pid, rating in [("a", 1500), ("b", 1800), ("c", 1500), ("d", 0)]:
        t = join(t, Player(pid, pid, rating))
    assert [p.id for p in start(t).players] == ["b", "a", "c", "d"]


def test_leaving_before_the_start_removes_the_player() -> None:
    t = with_players(Settings(Format.ROUND_ROBIN), 4)
    t = leave(t, "u2")
    assert [p.id for p in t.players] == ["u1", "u3", "u4"] and t.withdrawn == ()
    assert start(t).total_rounds == 3


def test_leaving_a_swiss_forfeits_the_running_game_and_ends_the_pairings() -> None:
    t = start(with_players(Settings(Format.SWISS, rounds=3), 6))
    game = t.rounds[0].pairing_of("u1")
    assert game is not None and game.white == "u1"
    t = leave(t, "u1")
    assert t.rounds[0].pairing_of("u1").result == "-+"  # type: ignore[union-attr]
    refused("already_left", lambda: leave(t, "u1"))
    t = pair_next_round(finish_round(t))
    assert t.rounds[1].pairing_of("u1") is None
    assert len(t.rounds[1].pairings) == 3 and t.rounds[1].pairings[-1].is_bye
    # Past results stand: the leaver is still in the standings, marked.
    assert [s.withdrawn for s in standings(t) if s.player == "u1"] == [True]


def test_leaving_a_round_robin_forfeits_the_scheduled_games() -> None:
    t = start(with_players(Settings(Format.ROUND_ROBIN), 4))
    t = finish_round(t, "1/2-1/2")
    t = leave(t, "u4")
    t = pair_next_round(t)
    # Round 2 of the Berger table for 4: 4-3, 1-2; the leaver's game is lost by forfeit at once.
    assert games(t, 2) == sorted([("u4", "u3", "-+"), ("u1", "u2", None)], key=str)
    t = pair_next_round(finish_round(t))
    assert games(t, 3) == sorted([("u2", "u4", "+-"), ("u3", "u1", None)], key=str)


def test_a_round_robin_leaver_gets_no_bye() -> None:
    t = start(with_players(Settings(Format.ROUND_ROBIN), 5))
    t = leave(finish_round(t), "u1")
    # Berger 6 round 2: 6-4 5-3 1-2: player 4 has the bye (6 is the empty seat).
    t = pair_next_round(t)
    assert games(t, 2) == sorted([("u5", "u3", None), ("u1", "u2", "-+"), ("u4", None, None)], key=str)
    t = leave(finish_round(t), "u3")
    t = pair_next_round(t)
    # Round 3: 2-6 3-1 4-5: both of 3-1 have left, so that game is not played at all.
    assert games(t, 3) == sorted([("u4", "u5", None), ("u2", None, None)], key=str)


def test_a_swiss_with_no_legal_round_left_ends() -> None:
    t = start(with_players(Settings(Format.SWISS, rounds=3), 4))
    t = pair_next_round(finish_round(t))
    # Two leave: the two left have met already, so round 3 cannot be paired.
    met = t.rounds[0].pairings[0]
    others = [pid for pid in ("u1", "u2", "u3", "u4") if pid not in (met.white, met.black)]
    t = finish_round(t)
    for pid in others:
        t = leave(t, pid)
    t = pair_next_round(t)
    assert t.ended_early and t.status is Status.FINISHED and len(t.rounds) == 2
    assert winner(t) == standings(t)[0].player


def test_the_trf_names_fit_its_column() -> None:
    assert trf_name("Ana Núñez") == "Ana Nunez"
    assert trf_name("Łukasz\n🎉") == "?ukasz ?"
    assert len(trf_name("x" * 50)) == 33


def test_a_running_round_is_exported_with_blank_results() -> None:
    t = start(with_players(Settings(Format.SWISS, rounds=2), 3))
    lines = [line for line in to_trf(t).splitlines() if line.startswith("001")]
    # Seed 1 plays seed 2 (white, no result yet); seed 3 has the bye.
    assert lines[0][91:101] == "   2 w    " and lines[2][91:101] == "0000 - U  "
