"""How records are stored in rows, the same for every SQL backend: which table holds each record,
its columns, and the values a column holds that a record field does not (squares as JSON text,
booleans as 0/1, colours and reasons as their letters).  Each backend keeps only its dialect."""

from __future__ import annotations

import json
from typing import Any

from bot.rules import Color, ResultReason

from .records import (
    AttemptRecord,
    ChallengeRecord,
    ChatRecord,
    GameRecord,
    MoveRecord,
    NotifyRecord,
    OutboxRecord,
    PlayerRecord,
    PuzzlePostRecord,
    RatingEventRecord,
    RatingRecord,
    SubscriptionRecord,
    field_names,
)

TABLES: dict[type, str] = {
    PlayerRecord: "players", ChatRecord: "chats", ChallengeRecord: "challenges", GameRecord: "games",
    MoveRecord: "moves", OutboxRecord: "outbox", SubscriptionRecord: "subscriptions",
    PuzzlePostRecord: "puzzle_posts", AttemptRecord: "attempts", RatingRecord: "ratings",
    RatingEventRecord: "rating_history", NotifyRecord: "notify_settings",
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
    return cls(**row)


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
