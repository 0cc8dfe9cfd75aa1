"""A tournament's life as pure functions: each takes a ``Tournament`` and returns the next one,
or raises ``TournamentError`` (with a ``code``) and changes nothing.

``pair_next_round`` depends on the tournament alone, so running it again after a crash pairs the
same round; a caller stores the round it returned (a compare-and-set on the round count keeps a
round from being paired twice).
"""

from __future__ import annotations

from dataclasses import replace

from .model import (
    MAX_ROUND_ROBIN_PLAYERS,
    MIN_PLAYERS,
    PLAYED,
    RESULTS,
    Format,
    Pairing,
    Player,
    Result,
    Round,
    Settings,
    Status,
    Tournament,
    TournamentError,
)
from .pairing import Draw, as_pairings, draw_round, trf_rating
from .standings import standings


def new(settings: Settings) -> Tournament:
    settings.validate()
    return Tournament(settings)


def join(t: Tournament, player: Player) -> Tournament:
    if t.started:
        raise TournamentError("already_started")
    if t.has(player.id):
        raise TournamentError("already_joined")
    if t.settings.format is Format.ROUND_ROBIN and len(t.players) >= MAX_ROUND_ROBIN_PLAYERS:
        raise TournamentError("full", f"a round robin takes at most {MAX_ROUND_ROBIN_PLAYERS} players")
    return replace(t, players=(*t.players, player))


def leave(t: Tournament, player_id: str) -> Tournament:
    """Before the start the player is removed; after it, withdrawn: results so far stand, a game of
    theirs still running is lost by forfeit, and later rounds have them as absent (Swiss: not paired;
    round robin: their games forfeited)."""
    if not t.has(player_id):
        raise TournamentError("not_in")
    if not t.started:
        return replace(t, players=tuple(p for p in t.players if p.id != player_id))
    if t.status is Status.FINISHED:
        raise TournamentError("finished")
    if t.withdrawn_after(player_id) is not None:
        raise TournamentError("already_left")
    rounds = t.rounds
    current = t.current_round
    if current is not None:
        mine = current.pairing_of(player_id)
        if mine is not None and not mine.decided:
            lost: Result = "-+" if mine.white == player_id else "+-"
            pairings = tuple(replace(p, result=lost) if p is mine else p for p in current.pairings)
            rounds = (*t.rounds[:-1], replace(current, pairings=pairings))
    return replace(t, rounds=rounds, withdrawn=(*t.withdrawn, (player_id, len(t.rounds))))


def start(t: Tournament) -> Tournament:
    """Seeds the players (rating, then order of joining) and pairs round 1."""
    if t.started:
        raise TournamentError("already_started")
    n = len(t.players)
    if n < MIN_PLAYERS:
        raise TournamentError("too_few", f"at least {MIN_PLAYERS} players")
    rounds = t.settings.rounds
    if t.settings.format is Format.SWISS and rounds is not None and rounds > n - 1:
        # Each player would have to meet someone twice.
        raise TournamentError("too_many_rounds", f"{rounds} rounds for {n} players")
    order = sorted(range(n), key=lambda i: (-trf_rating(t.players[i].rating), i))
    seeded = replace(t, players=tuple(t.players[i] for i in order), started=True)
    return pair_next_round(seeded)


def round_complete(t: Tournament) -> bool:
    """The current round has every result (True before round 1 too: nothing is waiting)."""
    current = t.current_round
    return current is None or current.complete


def pair_next_round(t: Tournament) -> Tournament:
    if not t.started:
        raise TournamentError("not_started")
    if t.status is Status.FINISHED:
        raise TournamentError("finished")
    if not round_complete(t):
        raise TournamentError("round_running")
    number = len(t.rounds) + 1
    draw = draw_round(t, number)
    if t.settings.format is Format.SWISS and not _legal_swiss(t, draw):
        return replace(t, ended_early=True)
    return replace(t, rounds=(*t.rounds, Round(number, as_pairings(t, draw))))


def record_result(t: Tournament, round_number: int, player_id: str, result: str) -> Tournament:
    """The result of ``player_id``'s game in ``round_number``, written from white's side."""
    if result not in RESULTS:
        raise TournamentError("bad_result", result)
    if not 1 <= round_number <= len(t.rounds):
        raise TournamentError("no_such_round", str(round_number))
    rnd = t.rounds[round_number - 1]
    mine = rnd.pairing_of(player_id)
    if mine is None or mine.is_bye:
        raise TournamentError("no_such_game", f"{player_id} in round {round_number}")
    if mine.result is not None:
        raise TournamentError("already_decided")
    chosen: Result = next(r for r in RESULTS if r == result)
    pairings = tuple(replace(p, result=chosen) if p is mine else p for p in rnd.pairings)
    rounds = list(t.rounds)
    rounds[round_number - 1] = replace(rnd, pairings=pairings)
    return replace(t, rounds=tuple(rounds))


def winner(t: Tournament) -> str | None:
    """The first of the final standings, once the tournament is over."""
    if t.status is not Status.FINISHED:
        return None
    table = standings(t)
    return table[0].player if table else None


def _legal_swiss(t: Tournament, draw: Draw) -> bool:
    """FIDE C.04.1: everyone still in is paired once, no pair plays again, one bye at most, to a
    player who has had no bye nor forfeit win.  When the engine finds no such round (a field
    thinned by withdrawals), the tournament ends instead of breaking a rule."""
    active = {t.starting_number(p.id) for p in t.active()}
    seen = [sn for game in draw.games for sn in game] + list(draw.byes)
    if sorted(seen) != sorted(active) or len(draw.byes) > len(active) % 2:
        return False
    if len(active) < 2:
        return False
    met = set()
    unlucky = set()
    for rnd in t.rounds:
        for p in rnd.pairings:
            w = t.starting_number(p.white)
            if p.black is None:
                unlucky.add(w)
                continue
            b = t.starting_number(p.black)
            if p.result in PLAYED:
                met.add(frozenset((w, b)))
            elif p.result == "+-":
                unlucky.add(w)
            elif p.result == "-+":
                unlucky.add(b)
    if any(frozenset(game) in met for game in draw.games):
        return False
    return not any(sn in unlucky for sn in draw.byes)


def pairings_of(t: Tournament, round_number: int) -> tuple[Pairing, ...]:
    if not 1 <= round_number <= len(t.rounds):
        raise TournamentError("no_such_round", str(round_number))
    return t.rounds[round_number - 1].pairings
