"""Pairings from caissify-pairings (Apache-2.0): FIDE Berger tables and the FIDE Dutch system.

The library is stateless: each call gets every player's history, derived here from the results
exactly as FIDE's endorsed programs derive it from a TRF file (bbpPairings; the library's own
checker, ``caissify_pairings.fpc``, does the same), so a round paired here is the round the
checker pairs from our TRF export.  Players are numbered by starting number (1 = first seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from caissify_pairings import generate_pairings

from . import fast_dutch
from .model import PLAYED, RESULT_POINTS, Format, Pairing, Result, Tournament

# TRF16 keeps a rating in four digits.
MAX_RATING = 9999


def trf_rating(rating: int) -> int:
    return max(0, min(MAX_RATING, rating))


@dataclass(frozen=True)
class Draw:
    """One round's pairings by starting number: (white, black) and the byes."""

    games: tuple[tuple[int, int], ...]
    byes: tuple[int, ...]


def scores_before(t: Tournament, round_number: int) -> list[list[float]]:
    """``scores[sn][r]``: a player's points after round r (r = 0 .. round_number - 1)."""
    bye = t.settings.bye_points
    scores = [[0.0] for _ in range(len(t.players) + 1)]
    for rnd in t.rounds[:round_number - 1]:
        gained = [0.0] * (len(t.players) + 1)
        for p in rnd.pairings:
            for pid in p.players():
                gained[t.starting_number(pid)] = p.points(pid, bye) or 0.0
        for sn, row in enumerate(scores):
            row.append(row[-1] + gained[sn])
    return scores


def dutch_players(t: Tournament, round_number: int) -> tuple[list[dict[str, Any]], set[tuple[int, int]]]:
    """The Dutch engine's input for ``round_number``: the players still in, with their score,
    colours and floats of played games, byes and forfeit wins; the pairs that have played.

    As bbpPairings: a forfeit is no game (no colour, and the two may meet again), a bye and a
    forfeit win are a downfloat and spend the player's right to a bye, a forfeit loss floats nothing."""
    scores = scores_before(t, round_number)
    gone = {pid for pid, _ in t.withdrawn}
    history: dict[int, dict[str, Any]] = {
        sn: {"color_hist": [], "float_history": [], "bye_count": 0, "forfeit_win_count": 0}
        for sn in range(1, len(t.players) + 1)}
    played: set[tuple[int, int]] = set()
    for index, rnd in enumerate(t.rounds[:round_number - 1]):
        before = [s[index] for s in scores]
        for p in rnd.pairings:
            w = t.starting_number(p.white)
            if p.black is None:
                history[w]["bye_count"] += 1
                history[w]["float_history"].append("down")
                continue
            b = t.starting_number(p.black)
            assert p.result is not None, "a round is paired only after the one before it is complete"
            if p.result in PLAYED:
                played.add((min(w, b), max(w, b)))
                history[w]["color_hist"].append("white")
                history[b]["color_hist"].append("black")
                for me, other in ((w, b), (b, w)):
                    history[me]["float_history"].append(
                        "down" if before[me] > before[other] else "up" if before[me] < before[other] else "none")
            else:
                white_points, _ = RESULT_POINTS[p.result]
                winner, loser = (w, b) if white_points else (b, w)
                history[winner]["forfeit_win_count"] += 1
                history[winner]["float_history"].append("down")
                history[loser]["float_history"].append("none")
    players = [{
        "id": sn, "name": "", "score": scores[sn][-1], "rating": trf_rating(player.rating),
        "starting_number": sn, **history[sn],
    } for sn, player in enumerate(t.players, start=1) if player.id not in gone]
    return players, played


def pair_swiss(t: Tournament, round_number: int) -> Draw:
    players, played = dutch_players(t, round_number)
    if len(players) < 2:
        return Draw((), tuple(p["id"] for p in players))
    # The library's engine with a faster exact matching (fast_dutch.py), where its checks hold.
    pair = fast_dutch.dutch_pairings if fast_dutch.available() else partial(generate_pairings, "dutch")
    out = pair(players=players, previous_pairings=played, round_number=round_number,
               total_rounds=t.total_rounds, initial_color=t.settings.initial_color)
    return _draw(out)


def pair_round_robin(t: Tournament, round_number: int) -> Draw:
    """Berger tables for the players at the start (the withdrawn keep their numbers: their
    games are forfeits, so every other pairing stays as published)."""
    players = [{"id": sn, "name": "", "score": 0.0, "rating": 0, "starting_number": sn, "color_hist": [],
                "float_history": [], "bye_count": 0} for sn in range(1, len(t.players) + 1)]
    out = generate_pairings(system="round_robin", players=players, previous_pairings=set(),
                            round_number=round_number, total_rounds=t.total_rounds, cycles=t.settings.cycles)
    return _draw(out)


def _draw(out: Sequence[dict[str, Any]]) -> Draw:
    ordered = sorted(out, key=lambda row: int(row["table"]))
    games = tuple((int(row["white_id"]), int(row["black_id"])) for row in ordered if row.get("black_id") is not None)
    byes = tuple(int(row["white_id"]) for row in ordered if row.get("black_id") is None)
    return Draw(games, byes)


def draw_round(t: Tournament, round_number: int) -> Draw:
    if t.settings.format is Format.SWISS:
        return pair_swiss(t, round_number)
    return pair_round_robin(t, round_number)


def as_pairings(t: Tournament, draw: Draw) -> tuple[Pairing, ...]:
    """The draw with our player ids; a withdrawn player's games are forfeits at once (both gone:
    no game), and a withdrawn player gets no bye."""
    gone = {pid for pid, _ in t.withdrawn}
    out: list[Pairing] = []
    for w, b in draw.games:
        white, black = t.players[w - 1].id, t.players[b - 1].id
        if white in gone and black in gone:
            continue
        forfeit: Result | None = "-+" if white in gone else "+-" if black in gone else None
        out.append(Pairing(white, black, forfeit))
    out.extend(Pairing(t.players[sn - 1].id, None) for sn in draw.byes if t.players[sn - 1].id not in gone)
    return tuple(out)
