"""A tournament as plain JSON-ready data and back, for the storage layer to keep as it is."""

from __future__ import annotations

from typing import Any

from .model import RESULTS, Format, Pairing, Player, Result, Round, Settings, Tiebreak, Tournament, TournamentError

VERSION = 1


def to_data(t: Tournament) -> dict[str, Any]:
    s = t.settings
    return {
        "version": VERSION,
        "settings": {"format": s.format.value, "rounds": s.rounds, "cycles": s.cycles, "bye_points": s.bye_points,
                     "initial_color": s.initial_color, "tiebreaks": [tb.value for tb in s.tiebreaks], "name": s.name},
        "players": [{"id": p.id, "name": p.name, "rating": p.rating} for p in t.players],
        "rounds": [[{"white": p.white, "black": p.black, "result": p.result} for p in r.pairings] for r in t.rounds],
        "started": t.started,
        "withdrawn": [[pid, after] for pid, after in t.withdrawn],
        "ended_early": t.ended_early,
    }


def from_data(data: dict[str, Any]) -> Tournament:
    if data.get("version") != VERSION:
        raise TournamentError("bad_data", f"version {data.get('version')!r}")
    s = data["settings"]
    colour = s["initial_color"]
    if colour not in ("white", "black"):
        raise TournamentError("bad_colour", str(colour))
    settings = Settings(Format(s["format"]), rounds=s["rounds"], cycles=int(s["cycles"]),
                        bye_points=float(s["bye_points"]), initial_color=colour,
                        tiebreaks=tuple(Tiebreak(tb) for tb in s["tiebreaks"]), name=str(s["name"]))
    settings.validate()
    rounds = tuple(Round(number, tuple(Pairing(p["white"], p["black"], _result(p["result"])) for p in pairings))
                   for number, pairings in enumerate(data["rounds"], start=1))
    return Tournament(settings, players=tuple(Player(p["id"], p["name"], int(p["rating"])) for p in data["players"]),
                      rounds=rounds, started=bool(data["started"]),
                      withdrawn=tuple((str(pid), int(after)) for pid, after in data["withdrawn"]),
                      ended_early=bool(data["ended_early"]))


def _result(value: object) -> Result | None:
    if value is None:
        return None
    for result in RESULTS:
        if value == result:
            return result
    raise TournamentError("bad_result", str(value))
