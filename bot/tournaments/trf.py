"""TRF16, FIDE's tournament report file, written with caissify-pairings' writer (which its checker
and FIDE's pairing programs read back).

Players are listed by starting number; each round's block is the opponent's starting number, the
colour and the result (``1``, ``=``, ``0``, forfeits ``+``/``-``, a pending game blank), a bye
``0000 - U``; a round a withdrawn player was not in is left blank.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from caissify_pairings.trf import write_trf

from .model import Format, Tournament
from .pairing import trf_rating
from .standings import standings

_CODE = {"1-0": ("1", "0"), "0-1": ("0", "1"), "1/2-1/2": ("=", "="), "+-": ("+", "-"), "-+": ("-", "+")}
# TRF16 names are 33 characters of the file's 8-bit text; ours may be any Unicode.
NAME_WIDTH = 33


def trf_name(name: str) -> str:
    """Accents dropped (Núñez: Nunez), other characters as ?, cut to the column's width."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    ascii_name = plain.encode("ascii", "replace").decode("ascii")
    return " ".join(ascii_name.split())[:NAME_WIDTH]


def to_trf(t: Tournament) -> str:
    table = standings(t)
    rank = {s.player: s.rank for s in table}
    points = {s.player: s.points for s in table}
    results: dict[str, dict[int, dict[str, Any]]] = {p.id: {} for p in t.players}
    for rnd in t.rounds:
        for p in rnd.pairings:
            if p.black is None:
                results[p.white][rnd.number] = {"opponent": None, "color": None, "result": "U"}
                continue
            white_code, black_code = _CODE[p.result] if p.result is not None else ("", "")
            results[p.white][rnd.number] = {"opponent": t.starting_number(p.black), "color": "w",
                                            "result": white_code}
            results[p.black][rnd.number] = {"opponent": t.starting_number(p.white), "color": "b",
                                            "result": black_code}
    players = [{
        "starting_number": sn, "name": trf_name(player.name), "rating": trf_rating(player.rating),
        "score": points.get(player.id, 0.0), "rank": rank.get(player.id, sn), "results": results[player.id],
    } for sn, player in enumerate(t.players, start=1)]
    system = "Individual: Swiss-System" if t.settings.format is Format.SWISS else "Individual: Round-Robin"
    tournament: dict[str, Any] = {"name": trf_name(t.settings.name) or "Tournament", "system": system}
    if t.settings.bye_points != 1.0:
        # bbpPairings reads a bye's points from XXS (BBU: pairing-allocated bye).
        tournament["special_rules"] = f"BBU={t.settings.bye_points:.1f}"
    return write_trf(tournament, players, t.total_rounds if t.started else 0) + "\n"
