"""The one query layer of every SQL backend: each query of the storage contract written once.

``SqlStore`` implements the contract on four primitives a backend gives (``_all`` reads rows,
``_write`` runs one statement that writes, ``_insert_id`` inserts a row and tells its id,
``_unit`` runs a write method called outside any unit of work) and on its ``Dialect``, which
holds what the two SQL dialects spell differently.  The SQL here is written with ``?`` marks;
``Dialect.sql`` turns them into the driver's.  What truly differs stays in the backend's module:
connections and the unit of work, error mapping, the ``#N`` counter, the ratings lock, and the
few methods PostgreSQL does in one statement under row locks where SQLite holds its one write
lock (sqlite.py, postgres.py).

Rows are records (rows.py decodes them); changes come as ``{column: value}`` dicts checked against
the fields a caller may set (contract.py).
"""

from __future__ import annotations

import abc
import functools
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from bot.redact import redact

from .base import Store
from .contract import (
    CHAT_SETTINGS,
    GAME_UPDATE_FIELDS,
    MOVE_FIELDS,
    NEW_CHALLENGE_FIELDS,
    NEW_CHALLENGE_OPTIONAL,
    NEW_GAME_FIELDS,
    NEW_GAME_OPTIONAL,
    check_fields,
)
from .errors import StaleGame, StorageContention, StorageError
from .records import (
    AnalysisRecord,
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
from .rows import (
    ATTEMPT_COLUMNS,
    CLOSED,
    COLUMNS,
    COUNTED_COLUMNS,
    COUNTED_FIELDS,
    PLAYER_WAIT,
    POST_COLUMNS,
    TABLES,
    beat_key,
    count_games_query,
    count_key,
    count_merge,
    count_prune,
    count_upsert,
    counted,
    decode,
    decode_count,
    encode_game,
    history_params,
    history_query,
)

T = TypeVar("T")
# What saving a storm run may change (the rest is fixed at its start, or the store's: id, version).
STORM_CHANGES = frozenset({"current", "moves", "solved", "missed", "ends_at", "status", "finished_at", "opened_at"})

# An outbox error is kept cut to this many characters.
ERROR_CHARS = 500


@functools.lru_cache(maxsize=1024)
def _format_marks(sql: str) -> str:
    """``?`` marks as the format style (``%s``) of drivers such as psycopg; a literal ``%`` doubled."""
    return sql.replace("%", "%%").replace("?", "%s")


@dataclass(frozen=True)
class Dialect:
    """What one SQL dialect spells its own way; everything else is written once in SqlStore."""

    name: str                         # also the folder of its migrations (bot/storage/migrations/<name>/)
    greatest: str                     # the larger of two values (SQLite's scalar max, PostgreSQL's greatest)
    insertion_order: str              # the column that orders rows as they were inserted
    format_marks: bool                # the driver takes %s, not ?
    meta_text: bool                   # meta.value is a text column (SQLite's has no type: numbers stay numbers)

    def sql(self, text: str) -> str:
        """A statement written with ``?`` marks, as the driver takes it."""
        return _format_marks(text) if self.format_marks else text

    def meta_number(self, value: float) -> Any:
        """A number as meta.value keeps it."""
        return repr(float(value)) if self.meta_text else value


SQLITE = Dialect(name="sqlite", greatest="max", insertion_order="rowid", format_marks=False, meta_text=False)
POSTGRESQL = Dialect(name="postgresql", greatest="greatest", insertion_order="seq", format_marks=True, meta_text=True)


def unit(method: Callable[..., T]) -> Callable[..., T]:
    """A write method: called outside a unit of work it is one (the backend's ``_unit`` runs it:
    PostgreSQL runs it again when it loses a race); inside one it joins it."""
    @functools.wraps(method)
    def run(self: SqlStore, *args: Any, **kwargs: Any) -> T:
        if self.in_transaction():
            return method(self, *args, **kwargs)
        return self._unit(lambda: method(self, *args, **kwargs))
    return run


def filters(**values: str | None) -> tuple[str, tuple[Any, ...]]:
    """A WHERE clause matching every value that is not None (always true when none is)."""
    given = {name: value for name, value in values.items() if value is not None}
    return " AND ".join(f"{name}=?" for name in given) or "1=1", tuple(given.values())


def marks(count: int) -> str:
    return ", ".join("?" * count)


def owned(owner: str | None) -> tuple[str, tuple[Any, ...]]:
    """The condition that an outbox row is the caller's to change (None: nobody's)."""
    if owner is None:
        return "claimed_by IS NULL", ()
    return "claimed_by=?", (owner,)


class SqlStore(Store):
    """The storage contract on an SQL database; a backend gives the plumbing below."""

    dialect: Dialect
    name: str                 # the database as error messages name it
    busy_timeout: float

    # -- what a backend gives ------------------------------------------------------------------

    @abc.abstractmethod
    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Every row a statement (``?`` marks) returns, as column -> value; inside this thread's
        unit of work it reads what the unit wrote."""

    @abc.abstractmethod
    def _write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement that writes (joining this thread's unit of work); the rows it changed."""

    @abc.abstractmethod
    def _insert_id(self, sql: str, params: Sequence[Any] = ()) -> int | None:
        """Run one INSERT of a table with an ``id``; the new row's id, or None when it inserted
        nothing (ON CONFLICT DO NOTHING)."""

    @abc.abstractmethod
    def _unit(self, work: Callable[[], T]) -> T:
        """Run a write method called outside any unit of work."""

    @abc.abstractmethod
    def _next_number(self) -> int:
        """The next challenge/game number (inside a unit of work), from one counter advanced by a
        single atomic UPDATE; never at or below an id in use."""

    def _insert_numbered(self, table: str, values: dict[str, Any]) -> int:
        """Insert a challenge or game under the next number; the number."""
        with self.transaction():
            number = self._next_number()
            self._insert(table, dict(values, id=number))
            return number

    # -- helpers -------------------------------------------------------------------------------

    def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        rows = self._all(sql, params)
        return rows[0] if rows else None

    def _records(self, cls: type, where: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of ``cls``'s table that ``where`` (plus ORDER BY / LIMIT) selects, as records."""
        rows = self._all(f"SELECT {COLUMNS[cls]} FROM {TABLES[cls]} WHERE {where}", params)
        return [decode(cls, row) for row in rows]

    def _record(self, cls: type, where: str, params: Sequence[Any] = ()) -> Any:
        rows = self._records(cls, where if "LIMIT" in where else f"{where} LIMIT 1", params)
        return rows[0] if rows else None

    def _insert(self, table: str, values: dict[str, Any]) -> None:
        self._write(f"INSERT INTO {table} ({', '.join(values)}) VALUES ({marks(len(values))})",
                    tuple(values.values()))

    def _set_meta(self, key: str, value: Any) -> None:
        self._write("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value=excluded.value",
                    (key, value))

    # -- players and chats ---------------------------------------------------------------------

    def save_player(self, platform: str, user_id: str, name: str, username: str | None,
                    language: str | None, now: float) -> bool:
        known = self.player(platform, user_id)
        if known and (known.name, known.username, known.language) == (name, username, language):
            return False

        def write() -> None:
            # A name refresh never makes a command wait: under a held lock it waits for the next message.
            with self.transaction(wait=min(self.busy_timeout, PLAYER_WAIT)):
                self._write("INSERT INTO players (platform, user_id, name, username, language, updated_at) "
                            "VALUES (?,?,?,?,?,?) ON CONFLICT (platform, user_id) DO UPDATE SET name=excluded.name, "
                            "username=excluded.username, language=excluded.language, updated_at=excluded.updated_at",
                            (platform, user_id, name, username, language, now))
        if self.in_transaction():
            write()
        else:
            self._unit(write)
        return True

    def player(self, platform: str, user_id: str) -> PlayerRecord | None:
        return self._record(PlayerRecord, "platform=? AND user_id=?", (platform, user_id))

    def player_by_username(self, platform: str, username: str) -> PlayerRecord | None:
        return self._record(PlayerRecord, "platform=? AND lower(username)=lower(?) ORDER BY updated_at DESC LIMIT 1",
                            (platform, username))

    def notify_setting(self, platform: str, user_id: str) -> NotifyRecord | None:
        return self._record(NotifyRecord, "platform=? AND user_id=?", (platform, user_id))

    @unit
    def set_notify(self, platform: str, user_id: str, private: bool, now: float) -> None:
        self._write("INSERT INTO notify_settings (platform, user_id, private, unreachable, updated_at) "
                    "VALUES (?, ?, ?, 0, ?) ON CONFLICT (platform, user_id) DO UPDATE SET "
                    "private=excluded.private, unreachable=0, updated_at=excluded.updated_at",
                    (platform, user_id, int(private), now))

    @unit
    def set_unreachable(self, platform: str, user_id: str, unreachable: bool, now: float) -> bool:
        return self._write("UPDATE notify_settings SET unreachable=?, updated_at=? "
                           "WHERE platform=? AND user_id=? AND unreachable<>?",
                           (int(unreachable), now, platform, user_id, int(unreachable))) > 0

    def chat(self, platform: str, chat_id: str) -> ChatRecord | None:
        return self._record(ChatRecord, "platform=? AND chat_id=?", (platform, chat_id))

    def ensure_chat(self, platform: str, chat_id: str, kind: str, now: float) -> ChatRecord:
        known = self.chat(platform, chat_id)
        return known if known is not None else self._create_chat(platform, chat_id, kind, now)

    @unit
    def _create_chat(self, platform: str, chat_id: str, kind: str, now: float) -> ChatRecord:
        with self.transaction():
            self._write("INSERT INTO chats (platform, chat_id, kind, created_at) VALUES (?,?,?,?) "
                        "ON CONFLICT (platform, chat_id) DO NOTHING", (platform, chat_id, kind, now))
            # Read inside the unit: the row is there even if another process made it.
            made = self.chat(platform, chat_id)
        if made is None:
            raise StorageContention(f"chat {chat_id} was being created by another transaction")
        return made

    @unit
    def set_chat(self, platform: str, chat_id: str, **fields: Any) -> None:
        check_fields("chat setting", fields, CHAT_SETTINGS)
        if fields:
            self._write(f"UPDATE chats SET {', '.join(f'{name}=?' for name in fields)} WHERE platform=? AND chat_id=?",
                        (*fields.values(), platform, chat_id))

    @unit
    def move_chat(self, platform: str, old_chat_id: str, new_chat_id: str) -> None:
        keys = {"chats": (), "messages": ("message_id",), "post_messages": ("message_id",), "subscriptions": ()}
        with self.transaction():
            # The new chat may already have a row (someone typed there first): it keeps its own
            # settings, and the old row goes.
            for table, extra in keys.items():
                same = "".join(f" AND n.{key}=o.{key}" for key in extra)
                self._write(f"UPDATE {table} AS o SET chat_id=? WHERE o.platform=? AND o.chat_id=? AND NOT EXISTS "
                            f"(SELECT 1 FROM {table} n WHERE n.platform=o.platform AND n.chat_id=?{same})",
                            (new_chat_id, platform, old_chat_id, new_chat_id))
                self._write(f"DELETE FROM {table} WHERE platform=? AND chat_id=?", (platform, old_chat_id))
            # Messages still to be sent follow the chat too (the old id no longer takes any).
            for table in ("challenges", "games", "outbox", "puzzle_runs", "own_reminders", "storm_runs"):
                self._write(f"UPDATE {table} SET chat_id=? WHERE platform=? AND chat_id=?",
                            (new_chat_id, platform, old_chat_id))
            # The games' counts follow them, added to any the new id has already.
            if new_chat_id != old_chat_id:
                self._write(count_merge(), (new_chat_id, platform, old_chat_id))
                self._write("DELETE FROM game_counts WHERE platform=? AND chat_id=?", (platform, old_chat_id))
            # A chat's records follow it (one the new id has already stays); their message is the old
            # id's, which the new id cannot edit: the next record posts a new one.
            self._write("UPDATE chat_records AS o SET chat_id=?, message_id=NULL WHERE o.platform=? AND o.chat_id=? "
                        "AND NOT EXISTS (SELECT 1 FROM chat_records n WHERE n.platform=o.platform AND n.chat_id=? "
                        "AND n.mode=o.mode AND n.variant=o.variant)", (new_chat_id, platform, old_chat_id, new_chat_id))
            self._write("DELETE FROM chat_records WHERE platform=? AND chat_id=?", (platform, old_chat_id))
            # A day the new id already has a post for keeps that one.
            self._write("UPDATE puzzle_posts AS o SET chat_id=? WHERE o.platform=? AND o.chat_id=? AND NOT "
                        "(o.kind='daily' AND EXISTS (SELECT 1 FROM puzzle_posts n WHERE n.platform=o.platform "
                        "AND n.chat_id=? AND n.kind='daily' AND n.day=o.day))",
                        (new_chat_id, platform, old_chat_id, new_chat_id))

    # -- challenges ------------------------------------------------------------------------------

    @unit
    def create_challenge(self, **fields: Any) -> int:
        check_fields("challenge", fields, NEW_CHALLENGE_FIELDS, NEW_CHALLENGE_OPTIONAL)
        return self._insert_numbered("challenges", dict(fields, status="open"))

    def challenge(self, challenge_id: int) -> ChallengeRecord | None:
        return self._record(ChallengeRecord, "id=?", (challenge_id,))

    def open_challenges(self, platform: str, chat_id: str) -> list[ChallengeRecord]:
        return self._records(ChallengeRecord, "platform=? AND chat_id=? AND status='open' ORDER BY id",
                             (platform, chat_id))

    def find_challenges(self, platform: str | None = None, chat_id: str | None = None,
                        status: str | None = None) -> list[ChallengeRecord]:
        where, params = filters(platform=platform, chat_id=chat_id, status=status)
        return self._records(ChallengeRecord, f"{where} ORDER BY id", params)

    def _lapse(self) -> str:
        """When an open challenge lapses, its lifetime the statement's first parameter."""
        return f"created_at + {self.dialect.greatest}(CAST(? AS DOUBLE PRECISION), move_seconds)"

    def lapsed_challenges(self, platform: str | None, now: float, lifetime: float) -> list[ChallengeRecord]:
        where, params = filters(platform=platform)
        return self._records(ChallengeRecord, f"status='open' AND {self._lapse()} <= ? AND {where} ORDER BY id",
                             (lifetime, now, *params))

    def next_challenge_lapse(self, platform: str | None, lifetime: float) -> float | None:
        where, params = filters(platform=platform)
        row = self._one(f"SELECT min({self._lapse()}) AS t FROM challenges WHERE status='open' AND {where}",
                        (lifetime, *params))
        return row["t"] if row else None

    @unit
    def remember_challenge_message(self, platform: str, chat_id: str, message_id: str, challenge_id: int) -> None:
        # Deleted and inserted again: a message noted again goes to the end of the order.
        with self.transaction():
            self._write("DELETE FROM challenge_messages WHERE platform=? AND chat_id=? AND message_id=?",
                        (platform, chat_id, message_id))
            self._insert("challenge_messages", {"platform": platform, "chat_id": chat_id, "message_id": message_id,
                                                "challenge_id": challenge_id})

    def challenge_messages(self, challenge_id: int) -> list[tuple[str, str, str]]:
        rows = self._all("SELECT platform, chat_id, message_id FROM challenge_messages WHERE challenge_id=? "
                         f"ORDER BY {self.dialect.insertion_order}", (challenge_id,))
        return [(r["platform"], r["chat_id"], r["message_id"]) for r in rows]

    @unit
    def close_challenge(self, challenge_id: int, status: str) -> bool:
        if status not in CLOSED:
            raise ValueError(f"a challenge cannot be closed as {status!r}")
        return self._write("UPDATE challenges SET status=? WHERE id=? AND status='open'", (status, challenge_id)) == 1

    @unit
    def accept_challenge(self, challenge_id: int, game: dict[str, Any]) -> int | None:
        check_fields("game", game, NEW_GAME_FIELDS, NEW_GAME_OPTIONAL)
        with self.transaction():
            # The claim: one conditional write, which of two accepting at once only one makes.
            if self._write("UPDATE challenges SET status='accepted' WHERE id=? AND status='open'",
                           (challenge_id,)) != 1:
                return None
            game_id = challenge_id
            if self._one("SELECT 1 AS taken FROM games WHERE id=?", (game_id,)):
                # A challenge from before the shared numbering whose number an old game has.
                game_id = self._next_number()
            self._insert("games", dict(self._new_game(game), id=game_id))
            self._write("UPDATE challenges SET game_id=? WHERE id=?", (game_id, challenge_id))
            return game_id

    @unit
    def create_game(self, game: dict[str, Any]) -> int:
        check_fields("game", game, NEW_GAME_FIELDS, NEW_GAME_OPTIONAL)
        return self._insert_numbered("games", self._new_game(game))

    @staticmethod
    def _new_game(game: dict[str, Any]) -> dict[str, Any]:
        return dict(encode_game(game), version=0, ply=0, quiet_plies=0, status="active", reminded=0)

    # -- games --------------------------------------------------------------------------------

    def game(self, game_id: int) -> GameRecord | None:
        return self._record(GameRecord, "id=?", (game_id,))

    def active_games(self, platform: str, chat_id: str) -> list[GameRecord]:
        return self._records(GameRecord, "platform=? AND chat_id=? AND status='active' ORDER BY id",
                             (platform, chat_id))

    def recent_games(self, platform: str, chat_id: str, user_id: str, limit: int = 1) -> list[GameRecord]:
        return self._records(GameRecord, "platform=? AND chat_id=? AND (white_id=? OR black_id=?) "
                             "ORDER BY id DESC LIMIT ?", (platform, chat_id, user_id, user_id, limit))

    def last_game(self, platform: str, chat_id: str) -> GameRecord | None:
        return self._record(GameRecord, "platform=? AND chat_id=? ORDER BY id DESC LIMIT 1", (platform, chat_id))

    def find_games(self, platform: str | None = None, chat_id: str | None = None, status: str | None = None,
                   limit: int | None = None, user_id: str | None = None) -> list[GameRecord]:
        where, params = filters(platform=platform, chat_id=chat_id, status=status)
        if user_id is not None:
            where, params = f"{where} AND (white_id=? OR black_id=?)", (*params, user_id, user_id)
        if limit is not None:
            return self._records(GameRecord, f"{where} ORDER BY id DESC LIMIT ?", (*params, limit))
        return self._records(GameRecord, f"{where} ORDER BY id DESC", params)

    def count_finished_games(self, platform: str, chat_id: str | None = None, user_id: str | None = None,
                             opponent_id: str | None = None) -> list[GameCountRecord]:
        sql, params = count_games_query(platform, chat_id, user_id, opponent_id)
        return [decode_count(row) for row in self._all(sql, params)]

    def bot_games(self, platform: str | None = None) -> list[GameRecord]:
        where, params = filters(platform=platform)
        return self._records(GameRecord, f"status='active' AND bot_level IS NOT NULL AND {where} ORDER BY id", params)

    def recent_fens(self, game_id: int, count: int) -> list[str]:
        rows = self._all("SELECT fen_after FROM moves WHERE game_id=? ORDER BY ply DESC LIMIT ?", (game_id, count))
        return [r["fen_after"] for r in reversed(rows)]

    def moves(self, game_id: int) -> list[MoveRecord]:
        return self._records(MoveRecord, "game_id=? ORDER BY ply", (game_id,))

    @unit
    def update_game(self, game_id: int, version: int, fields: dict[str, Any],
                    move: dict[str, Any] | None = None) -> GameRecord:
        check_fields("game update", fields, GAME_UPDATE_FIELDS)
        if move is not None:
            check_fields("move", move, MOVE_FIELDS, ())
        recount = not COUNTED_FIELDS.isdisjoint(fields)
        values = dict(encode_game(fields), version=version + 1)
        with self.transaction():
            before = self._one(f"SELECT {COUNTED_COLUMNS} FROM games WHERE id=?", (game_id,)) if recount else None
            if self._write(f"UPDATE games SET {', '.join(f'{k}=?' for k in values)} WHERE id=? AND version=?",
                           (*values.values(), game_id, version)) != 1:
                raise StaleGame(game_id)
            if move is not None:
                self._insert("moves", dict(move, game_id=game_id))
            changed = self.game(game_id)
            assert changed is not None          # written just now, in this transaction
            if before is not None:
                self._recount(count_key(before), count_key(counted(changed)))
            return changed

    def _recount(self, old: tuple[Any, ...] | None, new: tuple[Any, ...] | None) -> None:
        """Move a game's count from its key as it was to its key as it is (inside the change's
        unit of work): a game counts once, under what it is now."""
        if old == new:
            return
        if old is not None:
            self._write(count_upsert(), (*old, -1))
            self._write(count_prune(), old)
        if new is not None:
            self._write(count_upsert(), (*new, 1))

    @unit
    def mark_reminded(self, game_id: int, version: int) -> bool:
        return self._write("UPDATE games SET reminded=1 WHERE id=? AND version=? AND reminded=0",
                           (game_id, version)) == 1

    # When an active game's reminder is due (a tenth of its move time before the deadline).
    _REMIND_AT = "deadline_at - CAST(move_seconds AS DOUBLE PRECISION) / 10"

    def due_games(self, now: float, platform: str | None = None) -> list[GameRecord]:
        where, params = filters(platform=platform)
        return self._records(
            GameRecord, "status='active' AND deadline_at IS NOT NULL AND "
            f"(deadline_at <= ? OR (reminded=0 AND {self._REMIND_AT} <= ?)) AND {where} ORDER BY deadline_at, id",
            (now, now, *params))

    # -- analyses and board messages ---------------------------------------------------------------

    @unit
    def save_analysis(self, game_id: int, ply: int, notes: Sequence[dict[str, Any]], at: float) -> None:
        self._write("INSERT INTO analyses (game_id, ply, notes, created_at) VALUES (?,?,?,?) ON CONFLICT "
                    "(game_id, ply) DO UPDATE SET notes=excluded.notes, created_at=excluded.created_at",
                    (game_id, ply, json.dumps(list(notes), separators=(",", ":")), at))

    def analysis(self, game_id: int, ply: int) -> AnalysisRecord | None:
        row = self._one("SELECT game_id, ply, notes, created_at FROM analyses WHERE game_id=? AND ply=?",
                        (game_id, ply))
        if row is None:
            return None
        return AnalysisRecord(row["game_id"], row["ply"], tuple(json.loads(row["notes"])), row["created_at"])

    @unit
    def remember_message(self, platform: str, chat_id: str, message_id: str, game_id: int) -> None:
        # An upsert keeps a known message's place in the order.
        self._write("INSERT INTO messages (platform, chat_id, message_id, game_id) VALUES (?,?,?,?) "
                    "ON CONFLICT (platform, chat_id, message_id) DO UPDATE SET game_id=excluded.game_id",
                    (platform, chat_id, message_id, game_id))

    def game_of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        row = self._one("SELECT game_id FROM messages WHERE platform=? AND chat_id=? AND message_id=?",
                        (platform, chat_id, message_id))
        return row["game_id"] if row else None

    def board_messages(self, platform: str, chat_id: str) -> list[tuple[str, int]]:
        rows = self._all("SELECT message_id, game_id FROM messages WHERE platform=? AND chat_id=? "
                         f"ORDER BY {self.dialect.insertion_order}", (platform, chat_id))
        return [(r["message_id"], r["game_id"]) for r in rows]

    @unit
    def remember_post_message(self, platform: str, chat_id: str, message_id: str, post_id: int) -> None:
        self._write("INSERT INTO post_messages (platform, chat_id, message_id, post_id) VALUES (?,?,?,?) "
                    "ON CONFLICT (platform, chat_id, message_id) DO UPDATE SET post_id=excluded.post_id",
                    (platform, chat_id, message_id, post_id))

    def post_of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        row = self._one("SELECT post_id FROM post_messages WHERE platform=? AND chat_id=? AND message_id=?",
                        (platform, chat_id, message_id))
        return row["post_id"] if row else None

    # -- send budget -------------------------------------------------------------------------------

    @unit
    def reserve_sends(self, scopes: Sequence[tuple[str, float, float]], now: float, max_wait: float) -> float:
        keys = tuple(key for key, _, _ in scopes)
        # Read and reserved in one unit of work: two processes never reserve the same slot.
        with self.transaction():
            held = {row["key"]: float(row["tat"]) for row in self._all(
                f"SELECT key, tat FROM send_budget WHERE key IN ({marks(len(keys))})", keys)}
            start = max([now, *(held[key] - tolerance for key, _, tolerance in scopes if key in held)])
            if start - now <= max_wait:
                for key, interval, _ in scopes:
                    self._write("INSERT INTO send_budget (key, tat) VALUES (?, ?) "
                                "ON CONFLICT (key) DO UPDATE SET tat=excluded.tat",
                                (key, max(held.get(key, start), start) + interval))
            return start

    @unit
    def hold_sends(self, key: str, until: float) -> None:
        self._write("INSERT INTO send_budget (key, tat) VALUES (?, ?) "
                    f"ON CONFLICT (key) DO UPDATE SET tat={self.dialect.greatest}(send_budget.tat, excluded.tat)",
                    (key, until))

    @unit
    def prune_sends(self, before: float) -> int:
        return self._write("DELETE FROM send_budget WHERE tat < ?", (before,))

    # -- heartbeat and downtime -------------------------------------------------------------------

    @unit
    def beat(self, platform: str | None, now: float) -> None:
        self._set_meta(beat_key(platform), self.dialect.meta_number(now))

    def last_beat(self, platform: str | None) -> float | None:
        row = self._one("SELECT value FROM meta WHERE key=?", (beat_key(platform),))
        return float(row["value"]) if row else None

    @unit
    def resume_after_downtime(self, platform: str | None, now: float, threshold: float,
                              limit: float | None = None) -> float:
        key = beat_key(platform)
        stamp = self.dialect.meta_number(now)
        with self.transaction():
            row = self._one("SELECT value FROM meta WHERE key=?", (key,))
            # Compare-and-set on the heartbeat read: of two processes starting at once, only the one
            # that renews the beat it read moves the clocks (the other finds it renewed: no gap, or
            # loses the race and, run again, finds it renewed).
            if row is None:
                changed = self._write("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                                      (key, stamp))
            else:
                changed = self._write("UPDATE meta SET value=? WHERE key=? AND value=?", (stamp, key, row["value"]))
            if changed != 1:
                return 0.0
            gap = now - float(row["value"]) if row else 0.0
            if limit is not None:
                gap = min(gap, limit)
            if gap <= threshold:
                return 0.0
            where, params = filters(platform=platform)
            self._write(f"UPDATE games SET deadline_at = deadline_at + ? WHERE status='active' "
                        f"AND deadline_at IS NOT NULL AND {where}", (gap, *params))
            return gap

    def link_secret(self) -> bytes:
        row = self._one("SELECT value FROM meta WHERE key='link_secret'")
        if row is None:
            raise StorageError(f"database {self.name} has no link secret")
        return bytes.fromhex(str(row["value"]))

    # -- questions waiting for a confirmation ------------------------------------------------------

    @unit
    def set_pending(self, key: str, value: Any) -> None:
        self._set_meta(f"pending:{key}", json.dumps(value))

    def pending(self, key: str) -> Any:
        row = self._one("SELECT value FROM meta WHERE key=?", (f"pending:{key}",))
        return json.loads(row["value"]) if row else None

    @unit
    def drop_pending(self, key: str) -> None:
        self._write("DELETE FROM meta WHERE key=?", (f"pending:{key}",))

    # -- outbox ---------------------------------------------------------------------------------------

    @unit
    def enqueue(self, platform: str, chat_id: str, payload: str, now: float) -> int:
        made = self._insert_id("INSERT INTO outbox (platform, chat_id, payload, next_attempt_at, created_at) "
                               "VALUES (?,?,?,?,?)", (platform, chat_id, payload, now, now))
        assert made is not None          # a plain INSERT inserts its row
        return made

    def due_messages(self, platform: str, now: float, limit: int = 50,
                     exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        skip = f" AND chat_id NOT IN ({marks(len(exclude))})" if exclude else ""
        return self._records(OutboxRecord, f"platform=? AND status='pending' AND next_attempt_at<=?{skip} "
                             "ORDER BY id LIMIT ?", (platform, now, *exclude, limit))

    # The pending rows of a platform a claimer may take now (not held by another owner's live
    # lease, nor of a chat another owner holds a row of), the statement's first seven parameters.
    _CLAIMABLE = ("o.platform=? AND o.status='pending' AND o.next_attempt_at<=? "
                  "AND (o.claimed_by IS NULL OR o.claimed_by=? OR o.lease_until<=?) "
                  "AND NOT EXISTS (SELECT 1 FROM outbox h WHERE h.platform=o.platform AND h.chat_id=o.chat_id "
                  "AND h.status='pending' AND h.claimed_by<>? AND h.lease_until>?)")

    @unit
    def claim_messages(self, platform: str, owner: str, now: float, lease_until: float, limit: int = 50,
                       exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        skip = f" AND o.chat_id NOT IN ({marks(len(exclude))})" if exclude else ""
        with self.transaction():
            # Read and claimed in one unit of work under the write lock: no other process claims between.
            rows = self._all(f"SELECT o.id AS id FROM outbox o WHERE {self._CLAIMABLE}{skip} ORDER BY o.id LIMIT ?",
                             (platform, now, owner, now, owner, now, *exclude, limit))
            ids = [int(row["id"]) for row in rows]
            if not ids:
                return []
            self._write(f"UPDATE outbox SET claimed_by=?, lease_until=? WHERE id IN ({marks(len(ids))})",
                        (owner, lease_until, *ids))
            return self._records(OutboxRecord, f"id IN ({marks(len(ids))}) ORDER BY id", ids)

    @unit
    def hold_messages(self, message_ids: Collection[int], owner: str, lease_until: float) -> set[int]:
        ids = [int(i) for i in message_ids]
        if not ids:
            return set()
        with self.transaction():
            self._write(f"UPDATE outbox SET lease_until=? WHERE id IN ({marks(len(ids))}) AND claimed_by=? "
                        "AND status='pending'", (lease_until, *ids, owner))
            rows = self._all(f"SELECT id FROM outbox WHERE id IN ({marks(len(ids))}) AND claimed_by=? "
                             "AND status='pending'", (*ids, owner))
            return {int(row["id"]) for row in rows}

    @unit
    def release_messages(self, owner: str) -> int:
        return self._write("UPDATE outbox SET claimed_by=NULL, lease_until=NULL WHERE claimed_by=? "
                           "AND status='pending'", (owner,))

    def outbox_message(self, message_id: int) -> OutboxRecord | None:
        return self._record(OutboxRecord, "id=?", (message_id,))

    def find_outbox(self, platform: str | None = None, status: str | None = None) -> list[OutboxRecord]:
        where, params = filters(platform=platform, status=status)
        return self._records(OutboxRecord, f"{where} ORDER BY id", params)

    @unit
    def mark_sent(self, message_id: int, now: float, owner: str | None = None) -> bool:
        mine, params = owned(owner)
        return self._write("UPDATE outbox SET status='sent', sent_at=?, claimed_by=NULL, lease_until=NULL "
                           f"WHERE id=? AND status='pending' AND {mine}", (now, message_id, *params)) == 1

    @unit
    def retry_later(self, message_id: int, at: float, error: str, owner: str | None = None) -> None:
        mine, params = owned(owner)
        self._write("UPDATE outbox SET attempts=attempts+1, next_attempt_at=?, error=?, claimed_by=NULL, "
                    f"lease_until=NULL WHERE id=? AND status='pending' AND {mine}",
                    (at, redact(error)[:ERROR_CHARS], message_id, *params))

    @unit
    def set_delivered(self, message_id: int, delivered: int, owner: str | None = None,
                      lease_until: float | None = None) -> None:
        mine, params = owned(owner)
        self._write("UPDATE outbox SET delivered=?, lease_until=coalesce(?, lease_until) "
                    f"WHERE id=? AND status='pending' AND {mine}", (delivered, lease_until, message_id, *params))

    @unit
    def drop_message(self, message_id: int, error: str, owner: str | None = None) -> None:
        mine, params = owned(owner)
        self._write("UPDATE outbox SET status='dropped', attempts=attempts+1, error=?, claimed_by=NULL, "
                    f"lease_until=NULL WHERE id=? AND status='pending' AND {mine}",
                    (redact(error)[:ERROR_CHARS], message_id, *params))

    @unit
    def prune_outbox(self, before: float, limit: int = 500) -> int:
        return self._write("DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE status IN ('sent', 'dropped') "
                           "AND created_at<? ORDER BY id LIMIT ?)", (before, limit))

    def outbox_platforms(self) -> list[str]:
        return [r["platform"] for r in self._all("SELECT DISTINCT platform FROM outbox WHERE status='pending' "
                                                 "ORDER BY platform")]

    def next_wakeup(self, platform: str | None) -> float | None:
        where, params = filters(platform=platform)
        # A row another process holds is due again for us only when its lease runs out.
        row = self._one(
            "SELECT (SELECT min(CASE WHEN claimed_by IS NOT NULL AND lease_until>next_attempt_at THEN lease_until "
            f"ELSE next_attempt_at END) FROM outbox WHERE status='pending' AND {where}) AS outbox, "
            f"(SELECT min(CASE WHEN reminded=0 THEN {self._REMIND_AT} ELSE deadline_at END) FROM games "
            f"WHERE status='active' AND deadline_at IS NOT NULL AND {where}) AS clocks, "
            # A running tournament round's deadline (forfeits and adjudication) is timed work too.
            "(SELECT min(round_deadline) FROM tournaments WHERE status='running' AND round_deadline IS NOT NULL "
            f"AND {where}) AS rounds", (*params, *params, *params))
        times = [row[name] for name in ("outbox", "clocks", "rounds") if row and row[name] is not None]
        return min(times) if times else None

    # -- daily puzzles -------------------------------------------------------------------------------

    @unit
    def subscribe(self, platform: str, chat_id: str, time: str, timezone: str, variant: str, now: float,
                  language: str | None = None) -> None:
        self._write(
            "INSERT INTO subscriptions (platform, chat_id, time, timezone, variant, language, active, created_at,"
            " updated_at) VALUES (?,?,?,?,?,?,1,?,?) ON CONFLICT (platform, chat_id) DO UPDATE SET"
            " time=excluded.time, timezone=excluded.timezone, variant=excluded.variant,"
            " language=excluded.language, active=1, updated_at=excluded.updated_at,"
            " created_at=CASE WHEN subscriptions.active=1 THEN subscriptions.created_at ELSE excluded.created_at END",
            (platform, chat_id, time, timezone, variant, language, now, now))

    @unit
    def unsubscribe(self, platform: str, chat_id: str, now: float) -> bool:
        return self._write("UPDATE subscriptions SET active=0, updated_at=? WHERE platform=? AND chat_id=? "
                           "AND active=1", (now, platform, chat_id)) == 1

    def subscription(self, platform: str, chat_id: str) -> SubscriptionRecord | None:
        return self._record(SubscriptionRecord, "platform=? AND chat_id=?", (platform, chat_id))

    def subscriptions(self, platform: str | None = None) -> list[SubscriptionRecord]:
        where, params = filters(platform=platform)
        return self._records(SubscriptionRecord, f"active=1 AND {where} ORDER BY platform, chat_id", params)

    @unit
    def claim_daily_post(self, platform: str, chat_id: str, day: str, variant: str, puzzle_id: str,
                         now: float) -> int | None:
        return self._insert_id("INSERT INTO puzzle_posts (platform, chat_id, kind, day, variant, puzzle_id, posted_at) "
                               "VALUES (?,?,'daily',?,?,?,?) ON CONFLICT (platform, chat_id, day) WHERE kind='daily' "
                               "DO NOTHING", (platform, chat_id, day, variant, puzzle_id, now))

    @unit
    def create_personal_post(self, platform: str, chat_id: str, user_id: str, variant: str, puzzle_id: str,
                             now: float) -> int:
        made = self._insert_id("INSERT INTO puzzle_posts (platform, chat_id, kind, user_id, variant, puzzle_id, "
                               "posted_at) VALUES (?,?,'personal',?,?,?,?)",
                               (platform, chat_id, user_id, variant, puzzle_id, now))
        assert made is not None          # a plain INSERT inserts its row
        return made

    def puzzle_post(self, post_id: int) -> PuzzlePostRecord | None:
        return self._record(PuzzlePostRecord, "id=?", (post_id,))

    def daily_posts(self, platform: str, chat_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        return self._records(PuzzlePostRecord, "platform=? AND chat_id=? AND kind='daily' ORDER BY day DESC, id DESC "
                             "LIMIT ?", (platform, chat_id, limit))

    def personal_posts(self, platform: str, user_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        return self._records(PuzzlePostRecord, "platform=? AND user_id=? AND kind='personal' ORDER BY id DESC "
                             "LIMIT ?", (platform, user_id, limit))

    @unit
    def claim_first_solver(self, post_id: int, user_id: str, name: str) -> bool:
        return self._write("UPDATE puzzle_posts SET first_solver_id=?, first_solver_name=? "
                           "WHERE id=? AND first_solver_id IS NULL", (user_id, name, post_id)) == 1

    def attempt(self, post_id: int, user_id: str) -> AttemptRecord | None:
        return self._record(AttemptRecord, "post_id=? AND user_id=?", (post_id, user_id))

    @unit
    def save_attempt(self, attempt: AttemptRecord) -> None:
        values = {name: getattr(attempt, name) for name in field_names(AttemptRecord)}
        values["progress"] = json.dumps(list(attempt.progress))
        expected = values.pop("version")
        key = (attempt.post_id, attempt.user_id)
        names = ", ".join(values)
        if expected is None:
            # No version known: stored as it is, whatever is there (a new row starts at 1).
            self._write(f"INSERT INTO attempts ({names}, version) VALUES ({marks(len(values))}, 1) "
                        "ON CONFLICT (post_id, user_id) DO UPDATE SET "
                        + ", ".join(f"{name}=excluded.{name}" for name in values) + ", version=attempts.version+1",
                        tuple(values.values()))
            return
        if expected == 0:
            changed = self._write(f"INSERT INTO attempts ({names}, version) VALUES ({marks(len(values))}, 1) "
                                  "ON CONFLICT (post_id, user_id) DO NOTHING", tuple(values.values()))
        else:
            changed = self._write(f"UPDATE attempts SET {', '.join(f'{name}=?' for name in values)}, "
                                  "version=version+1 WHERE post_id=? AND user_id=? AND version=?",
                                  (*values.values(), *key, expected))
        if changed != 1:
            raise StorageContention(f"attempt {key} changed since it was read (version {expected})")

    def attempts(self, post_id: int) -> list[AttemptRecord]:
        return self._records(AttemptRecord, "post_id=? ORDER BY started_at, user_id", (post_id,))

    def _post_attempts(self, where: str, params: Sequence[Any]) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        rows = self._all(f"SELECT {POST_COLUMNS}, {ATTEMPT_COLUMNS} FROM attempts a JOIN puzzle_posts p "
                         f"ON p.id = a.post_id WHERE {where}", params)
        return [(decode(PuzzlePostRecord, {name: row[f"p_{name}"] for name in field_names(PuzzlePostRecord)}),
                 decode(AttemptRecord, {name: row[f"a_{name}"] for name in field_names(AttemptRecord)}))
                for row in rows]

    def chat_attempts(self, platform: str, chat_id: str) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        return self._post_attempts("p.platform=? AND p.chat_id=? AND p.kind='daily' "
                                   "ORDER BY p.day, p.id, a.started_at, a.user_id", (platform, chat_id))

    def user_attempts(self, platform: str, user_id: str,
                      daily_only: bool = True) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        kind = " AND p.kind='daily'" if daily_only else ""
        return self._post_attempts(f"p.platform=? AND a.user_id=?{kind} ORDER BY p.day, p.id", (platform, user_id))

    def rated_attempts(self) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        return self._post_attempts("a.rated_at IS NOT NULL ORDER BY a.rated_at, a.post_id, a.user_id", ())

    # -- ratings ---------------------------------------------------------------------------------------

    def rating(self, platform: str, subject: str, pool: str) -> RatingRecord | None:
        return self._record(RatingRecord, "platform=? AND subject=? AND pool=?", (platform, subject, pool))

    def rating_pool(self, platform: str, pool: str) -> list[RatingRecord]:
        return self._records(RatingRecord, "platform=? AND pool=? ORDER BY rating DESC, subject", (platform, pool))

    @unit
    def save_rating(self, rating: RatingRecord, source: str) -> None:
        values = {name: getattr(rating, name) for name in field_names(RatingRecord)}
        kept = [name for name in values if name not in ("platform", "subject", "pool")]
        with self.transaction():
            self._write(f"INSERT INTO ratings ({', '.join(values)}) VALUES ({marks(len(values))}) "
                        "ON CONFLICT (platform, subject, pool) DO UPDATE SET "
                        + ", ".join(f"{name}=excluded.{name}" for name in kept), tuple(values.values()))
            self._insert("rating_history", {"platform": rating.platform, "subject": rating.subject,
                                            "pool": rating.pool, "source": source, "at": rating.updated_at,
                                            "rating": rating.rating, "deviation": rating.deviation})

    def rating_history(self, platform: str, subject: str, pool: str,
                       limit: int | None = None) -> list[RatingEventRecord]:
        order = self.dialect.insertion_order
        if limit is None:
            return self._records(RatingEventRecord, f"platform=? AND subject=? AND pool=? ORDER BY at, {order}",
                                 (platform, subject, pool))
        if limit < 2:
            raise ValueError("a history limit below 2 cannot keep the first event and the last")
        # A history that fits is read whole; a longer one is picked from through the index.
        head = self._records(RatingEventRecord, f"platform=? AND subject=? AND pool=? ORDER BY at, {order} LIMIT ?",
                             (platform, subject, pool, limit + 1))
        if len(head) <= limit:
            return head
        rows = self._all(history_query(order, COLUMNS[RatingEventRecord]),
                         history_params(platform, subject, pool, limit))
        return [decode(RatingEventRecord, row) for row in rows]

    @unit
    def clear_ratings(self) -> None:
        with self.transaction():
            self._write("DELETE FROM ratings")
            self._write("DELETE FROM rating_history")

    # -- storm runs (issue 33) ---------------------------------------------------------------

    @unit
    def create_storm_run(self, platform: str, chat_id: str, user_id: str, name: str, lang: str, variant: str,
                         puzzles: str, started_at: float, ends_at: float) -> int | None:
        # The partial unique index (one running run a player) makes this a single claim.
        return self._insert_id(
            "INSERT INTO storm_runs (platform, chat_id, user_id, name, lang, variant, puzzles, started_at, ends_at) "
            "VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
            (platform, chat_id, user_id, name, lang, variant, puzzles, started_at, ends_at))

    def storm_run(self, run_id: int) -> StormRunRecord | None:
        return self._record(StormRunRecord, "id=?", (run_id,))

    def running_storm_run(self, platform: str, user_id: str) -> StormRunRecord | None:
        return self._record(StormRunRecord, "platform=? AND user_id=? AND status='running'", (platform, user_id))

    @unit
    def save_storm_run(self, run_id: int, version: int, changes: dict[str, Any]) -> StormRunRecord:
        unknown = set(changes) - STORM_CHANGES
        if unknown:
            raise ValueError(f"not a storm run column one may set: {sorted(unknown)}")
        with self.transaction():
            names = [*changes, "version"]
            sets = ", ".join(f"{name}=?" for name in names)
            if self._write(f"UPDATE storm_runs SET {sets} WHERE id=? AND version=?",
                           (*changes.values(), version + 1, run_id, version)) != 1:
                raise StorageContention(f"storm run {run_id} changed since it was read (version {version})")
            saved = self.storm_run(run_id)
            assert saved is not None          # written just now, in this transaction
            return saved

    def storm_runs_over(self, now: float, platform: str | None = None, limit: int = 50) -> list[StormRunRecord]:
        if platform is None:
            return self._records(StormRunRecord, "status='running' AND ends_at <= ? ORDER BY ends_at, id LIMIT ?",
                                 (now, limit))
        return self._records(StormRunRecord, "status='running' AND platform=? AND ends_at <= ? "
                             "ORDER BY ends_at, id LIMIT ?", (platform, now, limit))

    # -- tournaments ------------------------------------------------------------------------------

    @unit
    def create_tournament(self, platform: str, chat_id: str, variant: str, move_seconds: int, round_seconds: int,
                          state: str, created_by: str, created_at: float) -> int | None:
        # The partial unique index (one unfinished tournament a chat) makes this a single claim.
        return self._insert_id(
            "INSERT INTO tournaments (platform, chat_id, variant, move_seconds, round_seconds, status, state, "
            "created_by, created_at) VALUES (?,?,?,?,?,'registering',?,?,?) ON CONFLICT DO NOTHING",
            (platform, chat_id, variant, move_seconds, round_seconds, state, created_by, created_at))

    def tournament(self, tournament_id: int) -> TournamentRecord | None:
        return self._record(TournamentRecord, "id=?", (tournament_id,))

    def chat_tournament(self, platform: str, chat_id: str) -> TournamentRecord | None:
        return self._record(TournamentRecord, "platform=? AND chat_id=? AND status<>'finished' "
                            "ORDER BY id DESC LIMIT 1", (platform, chat_id))

    def find_tournaments(self, platform: str | None = None, chat_id: str | None = None,
                         status: str | None = None, limit: int | None = None) -> list[TournamentRecord]:
        where, params = filters(platform=platform, chat_id=chat_id, status=status)
        tail = " LIMIT ?" if limit is not None else ""
        return self._records(TournamentRecord, f"{where} ORDER BY id DESC{tail}",
                             (*params, limit) if limit is not None else params)

    @unit
    def save_tournament(self, tournament_id: int, version: int, state: str, status: str,
                        round_deadline: float | None, finished_at: float | None) -> TournamentRecord:
        with self.transaction():
            if self._write("UPDATE tournaments SET state=?, status=?, round_deadline=?, finished_at=?, version=? "
                           "WHERE id=? AND version=?",
                           (state, status, round_deadline, finished_at, version + 1, tournament_id, version)) != 1:
                raise StorageContention(f"tournament {tournament_id} changed since it was read (version {version})")
            saved = self.tournament(tournament_id)
            assert saved is not None          # written just now, in this transaction
            return saved

    @unit
    def add_tournament_game(self, game: TournamentGameRecord) -> None:
        self._insert("tournament_games", {name: getattr(game, name) for name in field_names(TournamentGameRecord)})

    def tournament_game(self, game_id: int) -> TournamentGameRecord | None:
        return self._record(TournamentGameRecord, "game_id=?", (game_id,))

    def tournament_games(self, tournament_id: int) -> list[TournamentGameRecord]:
        return self._records(TournamentGameRecord, "tournament_id=? ORDER BY round, game_id", (tournament_id,))

    def due_tournaments(self, now: float, platform: str | None = None) -> list[TournamentRecord]:
        where, params = filters(platform=platform)
        return self._records(TournamentRecord, f"status='running' AND round_deadline <= ? AND {where} "
                             "ORDER BY round_deadline, id", (now, *params))

    # -- puzzle runs (streak), personal bests and the chats' records ------------------------------------

    @unit
    def start_puzzle_run(self, platform: str, user_id: str, chat_id: str, mode: str, variant: str, state: str,
                         now: float) -> int | None:
        # The partial unique index (one running run a player and mode) makes this a single claim.
        return self._insert_id(
            "INSERT INTO puzzle_runs (platform, user_id, chat_id, mode, variant, status, state, started_at) "
            "VALUES (?,?,?,?,?,'running',?,?) ON CONFLICT DO NOTHING",
            (platform, user_id, chat_id, mode, variant, state, now))

    def puzzle_run(self, run_id: int) -> PuzzleRunRecord | None:
        return self._record(PuzzleRunRecord, "id=?", (run_id,))

    def running_puzzle_run(self, platform: str, user_id: str, mode: str) -> PuzzleRunRecord | None:
        return self._record(PuzzleRunRecord, "platform=? AND user_id=? AND mode=? AND status='running'",
                            (platform, user_id, mode))

    def puzzle_run_of_post(self, post_id: int) -> PuzzleRunRecord | None:
        return self._record(PuzzleRunRecord, "id=(SELECT run_id FROM puzzle_run_posts WHERE post_id=?)", (post_id,))

    @unit
    def save_puzzle_run(self, run_id: int, version: int, status: str, score: int, skips: int, post_id: int | None,
                        state: str, ended_at: float | None) -> PuzzleRunRecord:
        with self.transaction():
            if self._write("UPDATE puzzle_runs SET status=?, score=?, skips=?, post_id=?, state=?, ended_at=?, "
                           "version=? WHERE id=? AND version=?",
                           (status, score, skips, post_id, state, ended_at, version + 1, run_id, version)) != 1:
                raise StorageContention(f"puzzle run {run_id} changed since it was read (version {version})")
            if post_id is not None:
                self._write("INSERT INTO puzzle_run_posts (post_id, run_id) VALUES (?,?) ON CONFLICT DO NOTHING",
                            (post_id, run_id))
            saved = self.puzzle_run(run_id)
            assert saved is not None          # written just now, in this transaction
            return saved

    def personal_best(self, platform: str, user_id: str, mode: str, variant: str) -> int | None:
        row = self._one("SELECT score FROM personal_bests WHERE platform=? AND user_id=? AND mode=? AND variant=?",
                        (platform, user_id, mode, variant))
        return None if row is None else int(row["score"])

    @unit
    def raise_personal_best(self, platform: str, user_id: str, mode: str, variant: str, score: int,
                            at: float) -> bool:
        # One conditional write: of two runs ending at once, the higher score stays.
        return self._write(
            "INSERT INTO personal_bests (platform, user_id, mode, variant, score, at) VALUES (?,?,?,?,?,?) "
            "ON CONFLICT (platform, user_id, mode, variant) DO UPDATE SET score=excluded.score, at=excluded.at "
            "WHERE personal_bests.score < excluded.score",
            (platform, user_id, mode, variant, score, at)) > 0

    def chat_best(self, platform: str, chat_id: str, mode: str, variant: str) -> ChatBestRecord | None:
        return self._record(ChatBestRecord, "platform=? AND chat_id=? AND mode=? AND variant=?",
                            (platform, chat_id, mode, variant))

    def chat_bests(self, platform: str, chat_id: str) -> list[ChatBestRecord]:
        return self._records(ChatBestRecord, "platform=? AND chat_id=? ORDER BY mode, variant", (platform, chat_id))

    @unit
    def raise_chat_best(self, platform: str, chat_id: str, mode: str, variant: str, score: int, user_id: str,
                        name: str, at: float) -> bool:
        # The message that shows the record stays the same one (it is edited in place).
        return self._write(
            "INSERT INTO chat_records (platform, chat_id, mode, variant, score, user_id, name, at) "
            "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (platform, chat_id, mode, variant) DO UPDATE SET "
            "score=excluded.score, user_id=excluded.user_id, name=excluded.name, at=excluded.at "
            "WHERE chat_records.score < excluded.score",
            (platform, chat_id, mode, variant, score, user_id, name, at)) > 0

    @unit
    def set_chat_best_message(self, platform: str, chat_id: str, mode: str, variant: str, message_id: str) -> bool:
        return self._write("UPDATE chat_records SET message_id=? WHERE platform=? AND chat_id=? AND mode=? "
                           "AND variant=?", (message_id, platform, chat_id, mode, variant)) > 0

    # -- puzzles from the players' own games ----------------------------------------------------

    @unit
    def queue_game_scan(self, game_id: int, platform: str, now: float) -> bool:
        return self._write("INSERT INTO game_scans (game_id, platform, queued_at) VALUES (?,?,?) "
                           "ON CONFLICT DO NOTHING", (game_id, platform, now)) == 1

    @unit
    def claim_game_scans(self, owner: str, now: float, lease_until: float, limit: int = 1,
                         platform: str | None = None) -> list[GameScanRecord]:
        where, params = filters(platform=platform)
        free = "status='pending' AND (claimed_by IS NULL OR lease_until <= ?)"
        rows = self._all(f"SELECT game_id FROM game_scans WHERE {free} AND {where} ORDER BY game_id LIMIT ?",
                         (now, *params, limit))
        claimed = []
        for row in rows:
            # The condition is checked again by the write itself: of two claimers, one changes the row.
            if self._write(f"UPDATE game_scans SET claimed_by=?, lease_until=?, attempts=attempts+1 "
                           f"WHERE game_id=? AND {free}", (owner, lease_until, row["game_id"], now)) == 1:
                claimed.append(int(row["game_id"]))
        if not claimed:
            return []
        return self._records(GameScanRecord, f"game_id IN ({marks(len(claimed))}) ORDER BY game_id", claimed)

    @unit
    def finish_game_scan(self, game_id: int, owner: str, now: float, found: int, failed: bool = False) -> bool:
        return self._write("UPDATE game_scans SET status=?, done_at=?, found=?, claimed_by=NULL, lease_until=NULL "
                           "WHERE game_id=? AND claimed_by=? AND status='pending'",
                           ("failed" if failed else "done", now, found, game_id, owner)) == 1

    @unit
    def release_game_scan(self, game_id: int, owner: str) -> bool:
        return self._write("UPDATE game_scans SET claimed_by=NULL, lease_until=NULL, attempts=attempts-1 "
                           "WHERE game_id=? AND claimed_by=? AND status='pending'", (game_id, owner)) == 1

    def game_scan(self, game_id: int) -> GameScanRecord | None:
        return self._record(GameScanRecord, "game_id=?", (game_id,))

    @unit
    def add_own_puzzle(self, platform: str, user_id: str, variant: str, puzzle: str, game_id: int, ply: int,
                       move_number: int, opponent: str, kind: str, now: float) -> int | None:
        return self._insert_id(
            "INSERT INTO own_puzzles (platform, user_id, variant, puzzle, game_id, ply, move_number, opponent, kind, "
            "due_at, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
            (platform, user_id, variant, puzzle, game_id, ply, move_number, opponent, kind, now, now))

    def own_puzzle(self, puzzle_id: int) -> OwnPuzzleRecord | None:
        return self._record(OwnPuzzleRecord, "id=?", (puzzle_id,))

    def player_own_puzzles(self, platform: str, user_id: str, include_retired: bool = False) -> list[OwnPuzzleRecord]:
        kept = "" if include_retired else " AND retired=0"
        return self._records(OwnPuzzleRecord, f"platform=? AND user_id=?{kept} ORDER BY due_at, id",
                             (platform, user_id))

    def due_own_puzzles(self, platform: str, user_id: str, now: float, limit: int = 1) -> list[OwnPuzzleRecord]:
        return self._records(OwnPuzzleRecord, "platform=? AND user_id=? AND retired=0 AND due_at <= ? "
                             "ORDER BY due_at, id LIMIT ?", (platform, user_id, now, limit))

    @unit
    def review_own_puzzle(self, puzzle_id: int, reviews: int, box: int, due_at: float, lapses: int,
                          retired: bool) -> bool:
        return self._write("UPDATE own_puzzles SET reviews=?, box=?, due_at=?, lapses=?, retired=? "
                           "WHERE id=? AND reviews=?",
                           (reviews + 1, box, due_at, lapses, int(retired), puzzle_id, reviews)) == 1

    @unit
    def set_own_reminder(self, platform: str, user_id: str, chat_id: str, language: str, active: bool,
                         now: float) -> None:
        self._write("INSERT INTO own_reminders (platform, user_id, chat_id, language, active, updated_at) "
                    "VALUES (?,?,?,?,?,?) ON CONFLICT (platform, user_id) DO UPDATE SET chat_id=excluded.chat_id, "
                    "language=excluded.language, active=excluded.active, updated_at=excluded.updated_at",
                    (platform, user_id, chat_id, language, int(active), now))

    def own_reminder(self, platform: str, user_id: str) -> OwnReminderRecord | None:
        return self._record(OwnReminderRecord, "platform=? AND user_id=?", (platform, user_id))

    def own_reminders(self, platform: str | None, before: float) -> list[OwnReminderRecord]:
        where, params = filters(platform=platform)
        return self._records(OwnReminderRecord, f"active=1 AND (last_at IS NULL OR last_at < ?) AND {where} "
                             "ORDER BY platform, user_id", (before, *params))

    @unit
    def claim_own_reminder(self, platform: str, user_id: str, last_at: float | None, now: float) -> bool:
        same = "last_at IS NULL" if last_at is None else "last_at=?"
        return self._write(f"UPDATE own_reminders SET last_at=? WHERE platform=? AND user_id=? AND active=1 AND {same}",
                           (now, platform, user_id, *(() if last_at is None else (last_at,)))) == 1
