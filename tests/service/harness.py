"""The chat harness of the game-service tests: one group chat on a real service (SQLite file,
rules, Pillow), with every reply checked: never the internal-error text, every button action at
most 64 bytes of UTF-8.  Test modules that need more (admins, a second process) subclass it.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

import bot.i18n
from bot.rules import Move, Position
from bot.service import ChatEvent, GameService, Reply
from bot.service.thinking import Thinker
from bot.storage import GameRecord, MoveRecord, Storage

T0 = 1_700_000_000.0
PLATFORM = "test"
GROUP = "group-1"
INTERNAL_ERROR = "Something went wrong"
CATALOG_DIR = Path(bot.i18n.__file__).parent


# -- the chat harness ---------------------------------------------------------------------------

# Tables every event writes before its command is read, keyed by their first two columns
# (platform and id): how the platform calls the sender (a new or refreshed players row) and the
# chat it wrote in (a new chats row).
NOTED_BY_EVERY_EVENT = ("players", "chats")
# Of those, the tables whose rows an event rewrites (a name or language the platform reports).
REFRESHED_BY_EVERY_EVENT = ("players",)


class Snapshot(dict[str, list[tuple]]):
    """Every table of a database, rows as tuples; two are equal when every table is, except for
    what the events sent between them note (NOTED_BY_EVERY_EVENT): a players row of a sender that
    appeared or changed, a chats row of a chat written in that appeared.  A rejected input still
    tells us who sent it; any other change, one of those rows going away, or a chat's settings
    changing, counts."""

    _taken = itertools.count()

    def __init__(self, tables: dict[str, list[tuple]], noted: dict[str, tuple[tuple, ...]]) -> None:
        super().__init__(tables)
        self.order = next(Snapshot._taken)
        self.noted = noted

    def _equal_to_later(self, later: dict[str, list[tuple]], noted: dict[str, tuple[tuple, ...]]) -> bool:
        if self.keys() != later.keys():
            return False
        for table, rows in self.items():
            theirs = later[table]
            if table not in NOTED_BY_EVERY_EVENT:
                if rows != theirs:
                    return False
                continue
            # Keys noted since this snapshot (the log only grows: the rest is new).
            since = set(noted.get(table, ())[len(self.noted.get(table, ())):])
            kept = {row[:2]: row for row in rows}
            now = {row[:2]: row for row in theirs}
            for key, row in kept.items():
                if now.get(key) != row and not (key in since and key in now and table in REFRESHED_BY_EVERY_EVENT):
                    return False
            if any(key not in kept and key not in since for key in now):
                return False
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, dict):
            return NotImplemented
        if not isinstance(other, Snapshot):
            return dict(self) == other
        if other.order > self.order:
            return self._equal_to_later(other, other.noted)
        return other._equal_to_later(self, self.noted)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]


def en(key: str, /, **values: object) -> str:
    """The English catalog text of ``key`` filled in with ``values``: what a test compares a reply
    with where the wording is not the point (rewording a message changes the catalog, not tests)."""
    return bot.i18n.t("en", key, **values)


def en_part(key: str, /, **values: object) -> str:
    """The longest stretch of ``key``'s English text without a placeholder (filled in with
    ``values`` when given): for a reply that holds the message with values the test does not fix."""
    text = bot.i18n.catalog("en")[key]
    if values:
        return en(key, **values)
    return max(re.split(r"\{[^}]*\}", text), key=len).strip()


def internal_error_texts() -> list[str]:
    """The internal-error message in every catalog that exists."""
    texts = []
    for path in sorted(CATALOG_DIR.glob("*.json")):
        text = json.loads(path.read_text(encoding="utf-8")).get("error.internal")
        if text:
            texts.append(text)
    return texts or [INTERNAL_ERROR]


class ChatHarness:
    """One group chat on a real service; users are lower-case ids ('ana'), shown capitalized."""

    platform = PLATFORM
    chat_id = GROUP

    def __init__(self, db_path: Path, now: list[float]) -> None:
        self.db_path = db_path
        self.now = now
        self.storage = Storage(db_path)
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(1))
        self.actions: list[str] = []
        # Every sender and chat of an event, in order (what a snapshot lets an event note).
        self.noted: dict[str, list[tuple]] = {"players": [], "chats": []}
        self._internal = internal_error_texts()

    def use_thinker(self, thinker: Thinker, bot_seconds: float = 0.2) -> GameService:
        """The harness on a service whose engine runs on ``thinker`` (a short time per bot move)."""
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(1), thinker=thinker,
                                   bot_seconds=bot_seconds)
        return self.service

    def restart(self) -> None:
        """A brand-new Storage and GameService on the same database file."""
        self.storage.close()
        self.storage = Storage(self.db_path)
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(1))

    def event(self, user: str, text: str | None = None, action: str | None = None, *, chat: str = GROUP,
              kind: str = "group", reply_to: str | None = None, language: str | None = None,
              admin: bool = False, can_whisper: bool = True, private_link: str | None = None) -> ChatEvent:
        self.noted["players"].append((PLATFORM, user))
        self.noted["chats"].append((PLATFORM, chat))
        return ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(),
                         chat_kind=kind, username=user, language=language, text=text, action=action,
                         reply_to=reply_to, is_admin=admin, can_whisper=can_whisper, private_link=private_link)

    def check(self, replies: list[Reply]) -> list[Reply]:
        assert isinstance(replies, list)
        for reply in replies:
            for internal in self._internal:
                assert internal not in reply.text, f"internal error answered: {reply.text!r}"
            for row in reply.buttons:
                for button in row:
                    assert len(button.action.encode("utf-8")) <= 64, button.action
                    self.actions.append(button.action)
        return replies

    def say(self, user: str, text: str, **kw: Any) -> list[Reply]:
        return self.check(self.service.handle(self.event(user, text=text, **kw)))

    def press(self, user: str, action: str, **kw: Any) -> list[Reply]:
        return self.check(self.service.handle(self.event(user, action=action, **kw)))

    def text(self, user: str, text: str, **kw: Any) -> str:
        """All reply texts to one message, joined."""
        return "\n".join(r.text for r in self.say(user, text, **kw))

    def resign(self, user: str, text: str = "/resign") -> str:
        """``user`` resigns: the command, then the same again to confirm; the second answer."""
        self.say(user, text)
        return self.text(user, text)

    # -- reading the database ------------------------------------------------------------------

    def rows(self, table: str) -> list[Any]:
        """Every challenge or game of this chat's platform, as records, oldest first."""
        if table == "challenges":
            return self.storage.find_challenges(PLATFORM)
        assert table == "games", table
        return self.storage.find_games(PLATFORM)[::-1]

    def snapshot(self) -> Snapshot:
        """Everything a bad input must leave unchanged: every table of the database, as the dump
        lists them from sqlite_master, so a table added later is covered without a change here."""
        return Snapshot(self.storage.dump(), {table: tuple(keys) for table, keys in self.noted.items()})

    def game(self, game_id: int) -> GameRecord:
        row = self.storage.game(game_id)
        assert row is not None
        return row

    def moves(self, game_id: int) -> list[MoveRecord]:
        return self.storage.moves(game_id)

    def position(self, game_id: int) -> Position:
        row = self.game(game_id)
        return Position.from_fen(row.variant, row.fen)

    def to_move(self, game_id: int) -> str:
        """The user id of the player to move."""
        row = self.game(game_id)
        return row.white_id if self.position(game_id).turn == "W" else row.black_id

    # -- shortcuts ---------------------------------------------------------------------------

    def challenge(self, user: str, args: str = "") -> int:
        """``user`` sends /new ARGS; the id of the challenge it opened."""
        before = {c.id for c in self.rows("challenges")}
        replies = self.say(user, f"/new {args}".strip())
        new = [c.id for c in self.rows("challenges") if c.id not in before]
        assert len(new) == 1, [r.text for r in replies]
        assert f"#{new[0]}" in replies[0].text
        return new[0]

    def new_game(self, white: str = "ana", black: str = "bob", variant: str = "italian", extra: str = "") -> int:
        """A game started the ordinary way: ``white`` challenges as white, ``black`` accepts."""
        cid = self.challenge(white, f"{variant} white {extra}")
        replies = self.say(black, f"/accept #{cid}")
        game_id = self.storage.challenge(cid).game_id
        assert game_id is not None, [r.text for r in replies]
        assert replies[0].game_id == game_id
        return game_id

    def play(self, game_id: int, moves: list[str | Move], ref: bool = True) -> None:
        """Each move typed by the player to move (with #id when ``ref``); each must be played."""
        for move in moves:
            count = len(self.moves(game_id))
            prefix = f"#{game_id} " if ref else ""
            text = self.text(self.to_move(game_id), f"/m {prefix}{move}")
            assert len(self.moves(game_id)) == count + 1, f"{move} was not played: {text}"
