"""The operator's view, without SQL: ``python -m bot games list|show``, ``python -m bot ratings rebuild``
and ``python -m bot db copy --to postgresql://...``.

They read the same database the bot uses ($DRAUGHTS_DB, or --db), through the storage contract.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from bot.arguments import MAX_ID, whole_number
from bot.storage import BOT_ID, GameRecord, Store

if TYPE_CHECKING:
    from bot.service import GameService


# --db on every command that opens the bot's database.
DB_HELP = "database file or postgresql:// URL (default: $DATABASE_URL, else $DRAUGHTS_DB, else draughts.db)"

def add_commands(sub: argparse._SubParsersAction) -> None:
    """The `games` and `ratings` commands."""
    games = sub.add_parser("games", help="the stored games: list them, or show one")
    actions = games.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="one line per game, newest first")
    listing.add_argument("--platform", default=None)
    listing.add_argument("--chat", default=None)
    listing.add_argument("--status", choices=["active", "finished"], default=None)
    listing.add_argument("--limit", type=whole_number(1, MAX_ID), default=None)
    listing.add_argument("--json", action="store_true", help="a JSON list of games instead")
    listing.add_argument("--db", default=None, help=DB_HELP)
    listing.set_defaults(func=games_list)
    show = actions.add_parser("show", help="one game in full: players, position, moves, result")
    show.add_argument("id", type=whole_number(1, MAX_ID, "a game number"))
    show.add_argument("--json", action="store_true")
    show.add_argument("--db", default=None, help=DB_HELP)
    show.set_defaults(func=games_show)
    ratings = sub.add_parser("ratings", help="the ratings: recompute them from the stored games")
    ractions = ratings.add_subparsers(dest="action", required=True)
    rebuild = ractions.add_parser("rebuild", help="forget every rating and compute it again from the games")
    rebuild.add_argument("--db", default=None, help=DB_HELP)
    rebuild.set_defaults(func=ratings_rebuild)
    db = sub.add_parser("db", help="the database itself: copy a SQLite file into PostgreSQL")
    dactions = db.add_subparsers(dest="action", required=True)
    copy = dactions.add_parser("copy", help="copy the SQLite database into a PostgreSQL database, checking "
                               "every table's row count")
    copy.add_argument("--to", required=True, metavar="URL", help="postgresql://user:password@host/database")
    copy.add_argument("--from", dest="source", default=None, metavar="FILE",
                      help="the SQLite file (default: $DRAUGHTS_DB or draughts.db)")
    copy.add_argument("--replace", action="store_true",
                      help="empty a target that holds other data first (without it, such a target is refused)")
    copy.set_defaults(func=db_copy)


@contextlib.contextmanager
def _service(args: argparse.Namespace) -> Iterator[GameService | None]:
    """The game service on the database the arguments name (None after one line saying why not)."""
    from bot.app import settings_of
    from bot.service import GameService
    from bot.service.thinking import Thinker

    store = _store(args)
    if store is None:
        yield None
        return
    service = GameService(store, thinker=Thinker(workers=settings_of(args).ai_workers))
    try:
        yield service
    finally:
        service.close()
        store.close()


def _store(args: argparse.Namespace) -> Store | None:
    from pathlib import Path

    from bot.app import open_storage, settings_of

    settings = settings_of(args)
    database = settings.database(args.db)
    path = database.removeprefix("sqlite:///")
    if "://" not in path and not Path(path).exists():
        # A view of the bot's database: a mistyped path must not make a new, empty one.
        print(f"error: there is no database {path}", file=sys.stderr)
        return None
    return open_storage(database, settings.busy_timeout)


def _summary(game: GameRecord) -> dict[str, Any]:
    return {
        "id": game.id, "platform": game.platform, "chat": game.chat_id, "variant": game.variant,
        "white": {"id": game.white_id, "name": game.white_name},
        "black": {"id": game.black_id, "name": game.black_name},
        "bot_level": game.bot_level, "status": game.status, "ply": game.ply, "fen": game.fen,
        "result": game.result_score, "reason": game.result_reason,
        "created_at": game.created_at, "finished_at": game.finished_at,
    }


def games_list(args: argparse.Namespace) -> int:
    """Print the games, newest first: id, platform, chat, variant, players, status, ply, result."""
    with _service(args) as service:
        if service is None:
            return 2
        games = service.app.games.find(args.platform, args.chat, args.status, args.limit)
    if args.json:
        print(json.dumps([_summary(g) for g in games], ensure_ascii=False, indent=2))
        return 0
    for g in games:
        result = f"{g.result_score} ({g.result_reason})" if g.status == "finished" else "*"
        bot = f" [bot level {g.bot_level}]" if g.bot_level is not None else ""
        print(f"#{g.id}\t{g.platform}\t{g.chat_id}\t{g.variant}\t{g.white_name} - {g.black_name}{bot}\t"
              f"{g.status}\tply {g.ply}\t{result}")
    return 0


def games_show(args: argparse.Namespace) -> int:
    """Print one game: its fields, the position as FEN and every move in full notation."""
    with _service(args) as service:
        if service is None:
            return 2
        game, moves = service.app.games.with_moves(args.id)
    if game is None:
        print(f"error: there is no game #{args.id}", file=sys.stderr)
        return 1
    data = _summary(game)
    data["start_fen"] = game.start_fen
    data["moves"] = [{"ply": m.ply, "move": m.notation, "by": "bot" if m.by_user == BOT_ID else m.by_user,
                      "at": m.played_at} for m in moves]
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    bot = f" (the bot at level {game.bot_level})" if game.bot_level is not None else ""
    print(f"game #{game.id}: {game.variant} on {game.platform}, chat {game.chat_id}{bot}")
    print(f"white: {game.white_name} ({game.white_id})")
    print(f"black: {game.black_name} ({game.black_id})")
    status = game.status if game.status == "active" else f"finished: {game.result_score} ({game.result_reason})"
    print(f"status: {status}")
    print(f"ply: {game.ply}")
    print(f"fen: {game.fen}")
    if game.start_fen:
        print(f"start: {game.start_fen}")
    line = []
    for m in moves:
        number = f"{(m.ply + 1) // 2}. " if m.ply % 2 == 1 else ""
        line.append(f"{number}{m.notation}")
    print("moves: " + (" ".join(line) if line else "(none)"))
    return 0


def ratings_rebuild(args: argparse.Namespace) -> int:
    """Recompute every rating from the stored games and puzzle attempts."""
    with _service(args) as service:
        if service is None:
            return 2
        counts = service.app.ratings.rebuild_ratings()
    print(f"ratings rebuilt from {counts['games']} rated games and {counts['attempts']} rated puzzle attempts")
    return 0


def db_copy(args: argparse.Namespace) -> int:
    """Copy the SQLite file into PostgreSQL; print each table's rows on both sides.  Exit 0 when
    copied (or already copied), 1 when the target holds other data or a count differs, 2 when a
    database cannot be opened."""
    from bot.app import database_secrets, redact_logs, settings_of
    from bot.config import DEFAULT_DB
    from bot.storage import StorageError
    from bot.storage.copy import TargetNotEmpty, copy_sqlite_to_postgres

    source = args.source or settings_of(args).db or DEFAULT_DB
    source = source.removeprefix("sqlite:///")
    if not args.to.startswith(("postgresql://", "postgres://")):
        print("error: --to must be a postgresql:// URL", file=sys.stderr)
        return 2
    redact_logs(database_secrets(args.to))
    try:
        result = copy_sqlite_to_postgres(source, args.to, replace=args.replace)
    except TargetNotEmpty as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except StorageError as err:
        print(f"error: {_redacted(str(err), args.to)}", file=sys.stderr)
        return 1 if "row counts differ" in str(err) else 2
    width = max(len(t.table) for t in result.tables)
    print(f"{'table':{width}}  {'source':>8}  {'target':>8}")
    for t in result.tables:
        print(f"{t.table:{width}}  {t.source:>8}  {t.target:>8}")
    total = sum(t.source for t in result.tables)
    if result.copied:
        print(f"copied {total} rows in {len(result.tables)} tables from {source}; every count matches")
    else:
        print(f"the target already holds this copy ({total} rows in {len(result.tables)} tables): nothing done")
    return 0


def _redacted(text: str, url: str) -> str:
    from bot.app import database_secrets

    for secret in database_secrets(url):
        text = text.replace(secret, "[redacted]")
    return text
