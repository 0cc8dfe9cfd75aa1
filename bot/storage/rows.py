"""How records are stored in rows, the same for every SQL backend: which table holds each record,
its columns, and the values a column holds that a record field does not (squares as JSON text,
booleans as 0/1, colours and reasons as their letters).  Statements are written with ``?`` marks
(sql.Dialect turns them into the driver's)."""

from __future__ import annotations

import json
from typing import Any

from bot.rules import Color, ResultReason

from .records import (
    SHORT_PLIES,
    AttemptRecord,
    ChallengeRecord,
    ChatBestRecord,
    ChatRecord,
    GameCountRecord,
    GameRecord,
    GameScanRecord,
    MoveRecord,
    NotifyRecord,
    OutboxRecord,
    OwnPuzzleRecord,
    OwnReminderRecord,
    PlayerRecord,
    PuzzlePostRecord,
    PuzzleRunRecord,
    RatingEventRecord,
    RatingRecord,
    StormRunRecord,
    SubscriptionRecord,
    TournamentGameRecord,
    TournamentRecord,
    field_names,
)

TABLES: dict[type, str] = {
    PlayerRecord: "players", ChatRecord: "chats", ChallengeRecord: "challenges", GameRecord: "games",
    MoveRecord: "moves", OutboxRecord: "outbox", SubscriptionRecord: "subscriptions",
    PuzzlePostRecord: "puzzle_posts", AttemptRecord: "attempts", RatingRecord: "ratings",
    RatingEventRecord: "rating_history", NotifyRecord: "notify_settings", TournamentRecord: "tournaments",
    StormRunRecord: "storm_runs",
    TournamentGameRecord: "tournament_games", GameScanRecord: "game_scans", OwnPuzzleRecord: "own_puzzles",
    OwnReminderRecord: "own_reminders", PuzzleRunRecord: "puzzle_runs", ChatBestRecord: "chat_records",
}
# The columns are named, not "*": a column a record lacks (or the reverse) fails at once.
COLUMNS: dict[type, str] = {cls: ", ".join(field_names(cls)) for cls in TABLES}
# Both tables have a user_id: the joined columns are named apart.
POST_COLUMNS = ", ".join(f"p.{name} AS p_{name}" for name in field_names(PuzzlePostRecord))
ATTEMPT_COLUMNS = ", ".join(f"a.{name} AS a_{name}" for name in field_names(AttemptRecord))
SQUARE_LISTS = ("last_path", "last_captured")
# The statuses a challenge is closed with (besides accepted).
CLOSED = frozenset({"declined", "cancelled", "expired"})
# How long saving a player's name waits for the write lock (it is only a name: it may wait for the next event).
PLAYER_WAIT = 0.2


def squares(text: str | None) -> tuple[int, ...]:
    return tuple(json.loads(text)) if text else ()


def decode(cls: type, row: dict[str, Any]) -> Any:
    """The record of class ``cls`` a row (column -> value) holds."""
    if cls is GameRecord:
        row = dict(row, reminded=bool(row["reminded"]),
                   **{key: squares(row[key]) for key in SQUARE_LISTS},
                   **{key: Color(row[key]) if row[key] else None for key in ("winner", "draw_offer")},
                   result_reason=ResultReason(row["result_reason"]) if row["result_reason"] else None)
    elif cls is SubscriptionRecord:
        row = dict(row, active=bool(row["active"]))
    elif cls is NotifyRecord:
        row = dict(row, private=bool(row["private"]), unreachable=bool(row["unreachable"]))
    elif cls is AttemptRecord:
        row = dict(row, progress=tuple(json.loads(row["progress"])))
    elif cls is OwnPuzzleRecord:
        row = dict(row, retired=bool(row["retired"]))
    elif cls is OwnReminderRecord:
        row = dict(row, active=bool(row["active"]))
    return cls(**row)


# The columns of a finished game that game_counts keys on, in its key's order ('short': ended
# before SHORT_PLIES plies); a NULL is kept as 0 or '' (a key column cannot be NULL).
COUNT_KEY = ("platform", "chat_id", "white_id", "black_id", "variant", "bot_level", "winner", "result_reason",
             "short")
# The games columns that decide a count: a change to none of them leaves game_counts alone.
COUNTED_FIELDS = frozenset({"status", "platform", "chat_id", "white_id", "black_id", "variant", "bot_level",
                            "winner", "result_reason", "ply"})
COUNTED_COLUMNS = ", ".join(sorted(COUNTED_FIELDS))


def count_key(game: dict[str, Any]) -> tuple[Any, ...] | None:
    """The game_counts key a game (its COUNTED_FIELDS, stored or decoded) counts under; None
    while it is not finished."""
    if game["status"] != "finished":
        return None
    return (game["platform"], game["chat_id"], game["white_id"], game["black_id"], game["variant"],
            int(game["bot_level"] or 0), str(game["winner"] or ""), str(game["result_reason"] or ""),
            int(game["ply"] < SHORT_PLIES))


def counted(game: GameRecord) -> dict[str, Any]:
    """A game's COUNTED_FIELDS (for ``count_key``)."""
    return {name: getattr(game, name) for name in COUNTED_FIELDS}


def count_upsert() -> str:
    """Add to a key's count (``games`` may be negative), the row made when missing."""
    names = ", ".join(COUNT_KEY)
    return (f"INSERT INTO game_counts ({names}, games) VALUES ({', '.join('?' * (len(COUNT_KEY) + 1))}) "
            f"ON CONFLICT ({names}) DO UPDATE SET games = game_counts.games + excluded.games")


def count_prune() -> str:
    """Drop a key whose count came down to nothing."""
    return f"DELETE FROM game_counts WHERE {' AND '.join(f'{name}=?' for name in COUNT_KEY)} AND games <= 0"


def count_merge() -> str:
    """Add every count of a chat (platform, old chat id) to another chat's (the new id, first)."""
    names = ", ".join(COUNT_KEY)
    rest = ", ".join(name for name in COUNT_KEY if name not in ("platform", "chat_id"))
    return (f"INSERT INTO game_counts ({names}, games) SELECT platform, ?, {rest}, games FROM game_counts "
            "WHERE platform=? AND chat_id=? "
            f"ON CONFLICT ({names}) DO UPDATE SET games = game_counts.games + excluded.games")


_COUNT_COLUMNS = "chat_id, white_id, black_id, variant, bot_level, winner, result_reason, short, games"


def count_games_query(platform: str, chat_id: str | None, user_id: str | None,
                      opponent_id: str | None) -> tuple[str, tuple[Any, ...]]:
    """The SELECT of ``Store.count_finished_games`` over game_counts and its parameters.  A
    player's counts are two index lookups joined (white seat, black seat; an OR of the two would
    scan), the second leaving out a game against oneself."""
    if opponent_id is not None and user_id is None:
        raise ValueError("opponent_id needs user_id")
    where, params = "platform=?", [platform]
    if chat_id is not None:
        where, params = f"{where} AND chat_id=?", [*params, chat_id]
    if user_id is None:
        return f"SELECT {_COUNT_COLUMNS} FROM game_counts WHERE {where}", tuple(params)
    parts, values = [], []
    for me, them in (("white_id", "black_id"), ("black_id", "white_id")):
        part, extra = f"{where} AND {me}=?", [user_id]
        if opponent_id is not None:
            part, extra = f"{part} AND {them}=?", [*extra, opponent_id]
        if me == "black_id":
            part, extra = f"{part} AND white_id<>?", [*extra, user_id]
        parts.append(f"SELECT {_COUNT_COLUMNS} FROM game_counts WHERE {part}")
        values += [*params, *extra]
    return " UNION ALL ".join(parts), tuple(values)


def decode_count(row: dict[str, Any]) -> GameCountRecord:
    return GameCountRecord(
        chat_id=row["chat_id"], white_id=row["white_id"], black_id=row["black_id"], variant=row["variant"],
        bot_level=int(row["bot_level"]) or None,
        winner=Color(row["winner"]) if row["winner"] else None,
        result_reason=ResultReason(row["result_reason"]) if row["result_reason"] else None,
        short=bool(row["short"]), games=int(row["games"]))


def history_query(order: str, columns: str) -> str:
    """The SELECT of a long rating history cut to the events first reached at a number of times
    spread evenly from its first event to its last (both among them), ``order`` the dialect's
    order of insertion; its parameters: ``history_params``.  Each time is one index seek, so the
    cost follows the number of times, not the history's length."""
    key = "platform=? AND subject=? AND pool=?"
    seek = "h.platform=? AND h.subject=? AND h.pool=?"
    return (f"WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?), "
            f"span(lo, hi) AS (SELECT (SELECT at FROM rating_history WHERE {key} ORDER BY at LIMIT 1), "
            f"(SELECT at FROM rating_history WHERE {key} ORDER BY at DESC LIMIT 1)), "
            f"picked(at) AS (SELECT (SELECT h.at FROM rating_history h WHERE {seek} "
            f"AND h.at >= span.lo + (span.hi - span.lo) * k.i / (? - 1) ORDER BY h.at LIMIT 1) FROM k, span) "
            f"SELECT {columns} FROM rating_history WHERE {key} AND at IN (SELECT at FROM picked) "
            f"ORDER BY at, {order}")


def history_params(platform: str, subject: str, pool: str, times: int) -> tuple[Any, ...]:
    """The parameters of ``history_query`` in the order its text takes them (``times``: how many
    times to pick events at, at least 2)."""
    key = (platform, subject, pool)
    return (times, *key, *key, *key, times, *key)


def encode_game(fields: dict[str, Any]) -> dict[str, Any]:
    """Game values as stored: squares as JSON text, booleans as 0/1."""
    out = dict(fields)
    for key in SQUARE_LISTS:
        if isinstance(out.get(key), list | tuple):
            out[key] = json.dumps([int(square) for square in out[key]])
    if "reminded" in out:
        out["reminded"] = int(bool(out["reminded"]))
    return out


def beat_key(platform: str | None) -> str:
    """The meta key of a platform's heartbeat (``*``: every platform)."""
    return f"heartbeat:{platform or '*'}"
