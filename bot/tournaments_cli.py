"""The organiser's view of the tournaments, without SQL (issue 32): ``python -m bot tournaments
list [--json]``, ``show ID [--json]`` and ``export ID --trf``.

These are contracts (scripts read them): fields and lines are only ever added.  ``show --json``
gives the format, variant and status, ``players`` in rank order (id, name, rank, points, tie-breaks
by FIDE's short names: BH, BH-C1, SB, DE, WIN; withdrawn), and ``rounds`` (number, games: white and
black by player id, game_id, result as "1-0", "0-1", "1/2-1/2", "+-", "-+" or null while it runs;
byes: player ids); the counts are ``player_count`` and ``round_count``.  The same data in the
first week's shape stays under ``standings`` and ``rounds_played`` (docs/tournaments.md).
``export --trf`` prints the TRF16 file that FIDE's tools and caissify-pairings' checker read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bot.arguments import MAX_ID, whole_number
from bot.operator_cli import DB_HELP, _service
from bot.service.features.results_tournaments import RoundView, StandingsView, TournamentInfo


def add_commands(sub: argparse._SubParsersAction) -> None:
    """The `tournaments` command."""
    tournaments = sub.add_parser("tournaments", help="the chats' tournaments: list them, show one, export its TRF")
    actions = tournaments.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="one line per tournament, newest first")
    listing.add_argument("--json", action="store_true", help="a JSON list instead")
    listing.add_argument("--db", default=None, help=DB_HELP)
    listing.set_defaults(func=tournaments_list)
    show = actions.add_parser("show", help="one tournament: standings and every round's games")
    show.add_argument("id", type=whole_number(1, MAX_ID, "a tournament number"))
    show.add_argument("--json", action="store_true")
    show.add_argument("--db", default=None, help=DB_HELP)
    show.set_defaults(func=tournaments_show)
    export = actions.add_parser("export", help="a tournament as a file for other tools")
    export.add_argument("id", type=whole_number(1, MAX_ID, "a tournament number"))
    export.add_argument("--trf", action="store_true", required=True, help="FIDE's TRF16 (the only format)")
    export.add_argument("--db", default=None, help=DB_HELP)
    export.set_defaults(func=tournaments_export)


def _summary(info: TournamentInfo) -> dict[str, Any]:
    return {
        "id": info.id, "name": info.name, "platform": info.platform, "chat": info.chat_id, "place": info.place,
        "format": info.format, "variant": info.variant, "status": info.status, "move_seconds": info.move_seconds,
        "round_seconds": info.round_seconds, "bye_points": info.bye_points, "player_count": len(info.players),
        "round_count": info.rounds_total, "rounds_paired": info.round, "created_at": info.created_at,
        "finished_at": info.finished_at,
        "winner": {"id": info.winner_id, "name": info.winner_name} if info.winner_id else None,
    }


def _standings(table: StandingsView) -> list[dict[str, Any]]:
    return [{"rank": r.rank, "id": r.player_id, "name": r.name, "points": r.points,
             "tiebreaks": dict(r.tiebreaks), "played": r.played, "withdrawn": r.withdrawn} for r in table.rows]


def _players(info: TournamentInfo, table: StandingsView) -> list[dict[str, Any]]:
    """The issue's ``players``: rank order, each with its points and tie-breaks (while registering,
    before any ranking: in joining order, rank null)."""
    if not table.rows:
        return [{"id": p.player_id, "name": p.name, "rank": None, "points": 0.0, "tiebreaks": {},
                 "withdrawn": p.withdrawn, "played": 0} for p in info.players]
    return [{"id": r.player_id, "name": r.name, "rank": r.rank, "points": r.points,
             "tiebreaks": dict(r.tiebreaks), "withdrawn": r.withdrawn, "played": r.played} for r in table.rows]


def _round_games(rnd: RoundView) -> dict[str, Any]:
    """The issue's ``rounds`` entry: players by id, a forfeit without a game has game_id null."""
    return {
        "number": rnd.number, "complete": rnd.complete, "deadline": rnd.deadline,
        "games": [{"board": b.board, "white": b.white_id, "black": b.black_id, "game_id": b.game_id,
                   "result": b.result, "white_name": b.white_name, "black_name": b.black_name}
                  for b in rnd.pairings if b.black_id is not None],
        "byes": [b.white_id for b in rnd.pairings if b.black_id is None],
    }


def _round(rnd: RoundView) -> dict[str, Any]:
    return {
        "round": rnd.number, "complete": rnd.complete, "deadline": rnd.deadline,
        "games": [{"board": b.board, "white": {"id": b.white_id, "name": b.white_name},
                   "black": {"id": b.black_id, "name": b.black_name}, "game": b.game_id, "result": b.result}
                  for b in rnd.pairings if b.black_id is not None],
        "byes": [{"id": b.white_id, "name": b.white_name} for b in rnd.pairings if b.black_id is None],
    }


def tournaments_list(args: argparse.Namespace) -> int:
    """Print the tournaments, newest first: id, platform, chat, format, variant, status, players,
    rounds paired of all, winner."""
    with _service(args) as service:
        if service is None:
            return 2
        found = service.app.tournaments.find()
    if args.json:
        print(json.dumps([_summary(t) for t in found], ensure_ascii=False, indent=2))
        return 0
    for t in found:
        rounds = f"round {t.round}/{t.rounds_total}" if t.rounds_total else f"round {t.round}"
        winner = f"\twinner {t.winner_name}" if t.winner_name else ""
        print(f"#{t.id}\t{t.platform}\t{t.chat_id}\t{t.format}\t{t.variant}\t{t.status}\t"
              f"{len(t.players)} players\t{rounds}{winner}")
    return 0


def tournaments_show(args: argparse.Namespace) -> int:
    """Print one tournament: its settings, the standings in rank order and every round's games."""
    with _service(args) as service:
        if service is None:
            return 2
        uc = service.app.tournaments
        info = uc.view(args.id)
        table = uc.standings_after(args.id) if info is not None else None
        rounds = uc.rounds(args.id)
    if info is None or table is None:
        print(f"error: there is no tournament #{args.id}", file=sys.stderr)
        return 1
    data = _summary(info)
    data["players"] = _players(info, table)
    data["rounds"] = [_round_games(r) for r in rounds]
    data["standings"] = _standings(table)
    data["standings_through"] = table.through
    data["rounds_played"] = [_round(r) for r in rounds]
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    total = info.rounds_total if info.rounds_total is not None else "?"
    print(f"tournament #{info.id}: {info.name}, {info.format} of {info.variant} on {info.platform}, "
          f"chat {info.chat_id}: {info.status}, round {info.round} of {total}")
    if info.winner_name:
        print(f"winner: {info.winner_name} ({info.winner_id})")
    print(f"standings after round {table.through}:")
    for r in table.rows:
        breaks = " ".join(f"{name} {value:g}" for name, value in r.tiebreaks)
        gone = " (withdrawn)" if r.withdrawn else ""
        print(f"  {r.rank}. {r.name} ({r.player_id}){gone}\t{r.points:g}\t{breaks}")
    for rnd in rounds:
        print(f"round {rnd.number}:")
        for b in rnd.pairings:
            if b.black_id is None:
                print(f"  bye: {b.white_name}")
                continue
            game = f"#{b.game_id}" if b.game_id is not None else "no game"
            print(f"  {b.white_name} - {b.black_name}\t{game}\t{b.result or '*'}")
    return 0


def tournaments_export(args: argparse.Namespace) -> int:
    """Print the tournament as a TRF16 file."""
    with _service(args) as service:
        if service is None:
            return 2
        trf = service.app.tournaments.trf(args.id)
    if trf is None:
        print(f"error: there is no tournament #{args.id}", file=sys.stderr)
        return 1
    sys.stdout.write(trf)
    return 0
