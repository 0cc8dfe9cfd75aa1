"""The games a chat has: finding the one a message means, loading it, its board, and
the one path by which a result is written (``finish_game``)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from bot.languages import pick_language
from bot.rules import (
    VARIANTS,
    Color,
    Game,
    Move,
    Position,
    Result,
)
from bot.service.domain import EventBus, GameFinished, MovePlayed
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import (
    _stored_result,
    bot_to_move,
)
from bot.service.features.identity import Caller, Mention, dm_chat
from bot.service.features.results_games import NoGame, TimedOut
from bot.service.notifications import GameState, LostOnTime, Notification, PrivateTurn
from bot.storage import BOT_ID, StaleGame
from bot.storage.records import GameRecord, MoveRecord
from bot.storage.repositories import GameChange, NewGame, NewMove


def neutral_bot_name(level: int) -> str:
    """The bot's name where no chat language applies (stored games, PDN): the same everywhere,
    whatever language the game was made in (PDN readers expect English tags)."""
    return f"Bot (level {level})"


# How many of a chat's latest games say which variant it plays.
RECENT_GAMES = 20


# How many chats' kinds a process keeps (then it forgets them all and reads them again).
CHAT_KINDS_KEPT = 10_000

class Games(UseCase):
    """The games of the chats: finding the one a message means, loading and writing them, their
    boards.  Publishes MovePlayed and GameFinished on ``bus`` (inside the writing transaction)."""

    def __init__(self, runtime: Runtime, outlet: Outlet, bus: EventBus) -> None:
        super().__init__(runtime, outlet)
        self.bus = bus
        self._kinds: dict[tuple[str, str], str] = {}

    def my_games(self, caller: Caller) -> list[GameRecord]:
        uid = caller.user_id
        return [g for g in self.storage.games.active_in(*caller.key) if uid in (g.white_id, g.black_id)]

    def resolve(self, caller: Caller, ref: int | None, mine_only: bool = True,
                finished_ok: bool = False, mine: list[GameRecord] | None = None) -> GameRecord | NoGame | TimedOut:
        """The game a request means: #``ref`` (the chat layer's: a number typed, the board replied
        to), else the user's only game here; else why there is none (or, when its clock had run
        out, the loss on time it was ended with).  ``mine``: the user's games here, when the caller
        has just read them."""
        if ref is not None:
            row = self.storage.games.get(ref)
            if row is None or (row.platform, row.chat_id) != caller.key:
                return NoGame("unknown", ref)
            if row.status != "active" and not finished_ok:
                return NoGame("over", ref)
            if mine_only and caller.user_id not in (row.white_id, row.black_id):
                return NoGame("not_player", ref, private=True)
            return self._unless_expired(caller, row)
        games = self.my_games(caller) if mine is None else mine
        if not games and not mine_only:
            games = self.storage.games.active_in(*caller.key)
        if not games and finished_ok:
            games = self.storage.games.recent(*caller.key, caller.user_id)
            if not games and not mine_only:
                # A spectator asking after the game ended means the chat's last game.
                last = self.storage.games.last(*caller.key)
                games = [last] if last else []
        if not games:
            if mine_only:
                recent = self.storage.games.recent(*caller.key, caller.user_id)
                if (recent and recent[0].status == "finished" and recent[0].finished_at is not None
                        and recent[0].finished_at > caller.at - 86400):
                    # "No game here" would be confusing right after one ended.
                    return NoGame("recently_over", games=(recent[0],))
                if self.storage.games.active_in(*caller.key):
                    return NoGame("spectator", private=True)
            return NoGame("none")
        if len(games) > 1:
            return NoGame("which", games=tuple(games))
        return self._unless_expired(caller, games[0])

    def _unless_expired(self, caller: Caller, row: GameRecord) -> GameRecord | NoGame | TimedOut:
        """The game, or, when its clock ran out before the scheduler noticed (say, after
        downtime), the loss on time it is ended with instead: no move is played after the deadline."""
        if row.status != "active" or row.deadline_at is None or row.deadline_at > caller.sent:
            return row
        result = self.load(row).lose_on_time(Position.from_fen(row.variant, row.fen).turn)
        try:
            return TimedOut(self.finish_game(row, result, caller.at, origin=caller.origin), result)
        except StaleGame:
            return NoGame("stale")

    @staticmethod
    def new_game(platform: str, chat_id: str, variant: str, white: tuple[str, str], black: tuple[str, str],
                 move_seconds: int, now: float) -> NewGame:
        """The row of a game between two people (``(user id, name)`` each) starting ``now`` from the
        variant's start, ``move_seconds`` a move, its first move's clock running: what an accepted
        challenge and a tournament's round both start."""
        return NewGame(platform=platform, chat_id=chat_id, variant=variant, white_id=white[0], white_name=white[1],
                       black_id=black[0], black_name=black[1], fen=Position.start(variant).fen(),
                       move_seconds=move_seconds, deadline_at=now + move_seconds, created_at=now)

    def start_game(self, platform: str, chat_id: str, variant: str, white: tuple[str, str], black: tuple[str, str],
                   move_seconds: int, now: float) -> GameRecord:
        """A game between two people starting now (``new_game``): the same game an accepted
        challenge starts (clocks, reminders, pings, the web board, analysis and ratings follow
        from the row)."""
        return self.game_row(self.storage.games.create(
            self.new_game(platform, chat_id, variant, white, black, move_seconds, now)))

    def find(self, platform: str | None = None, chat_id: str | None = None, status: str | None = None,
             limit: int | None = None) -> list[GameRecord]:
        """Stored games, newest first, filtered by platform, chat and status (the operator's view)."""
        return self.storage.games.find(platform, chat_id, status, limit)

    def with_moves(self, game_id: int) -> tuple[GameRecord | None, list[MoveRecord]]:
        """A stored game and its moves in order (None and no moves when there is no such game)."""
        game = self.storage.games.get(game_id)
        return game, (self.storage.games.moves(game_id) if game else [])

    def game_row(self, game_id: int) -> GameRecord:
        """A game known to exist (games are never deleted): as it is now."""
        row = self.storage.games.get(game_id)
        if row is None:
            raise LookupError(f"game {game_id} vanished")
        return row

    def recent_fens(self, row: GameRecord) -> list[str]:
        """The positions since the last capture or man move, oldest first (docs/rules.md §4:
        all that repetition needs)."""
        need = row.quiet_plies + 1
        fens = self.storage.games.recent_fens(row.id, need)
        if len(fens) < need:
            fens = [row.start_fen or Position.start(row.variant).fen(), *fens]
        return fens

    def write_move(self, row: GameRecord, game: Game, played: Move, by_user: str, now: float,
                    draw_offer: str | None, deadline_at: float | None, origin: object | None = None) -> GameRecord:
        """Store a move just played on ``game`` (the live game of ``row``): the position, the clock,
        the move's row, and the result when it ended the game.  The fresh record; StaleGame when
        the game changed meanwhile (nothing is written then).  ``origin``: handed back in the
        domain events (``Caller.origin``)."""
        fields, move_row = self._move_fields(row, game, played, by_user, now, draw_offer, deadline_at)
        if game.result is not None:
            return self.finish_game(row, game.result, now, fields, move_row, origin)
        with self.storage.transaction():
            fresh = self.storage.games.update(row.id, row.version, GameChange(**fields), NewMove(**move_row))
            self.bus.publish(MovePlayed(fresh, str(played), by_user, origin))
        return fresh

    def _move_fields(self, row: GameRecord, game: Game, played: Move, by_user: str, now: float,
                     draw_offer: str | None, deadline_at: float | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """What write_move stores: the game's changed fields and the move's row."""
        fen = game.position.fen()
        fields: dict[str, Any] = {
            "fen": fen, "ply": row.ply + 1, "quiet_plies": game.quiet_plies,
            "deadline_at": deadline_at, "reminded": 0,
            "last_path": list(played.path), "last_captured": list(played.captured), "draw_offer": draw_offer,
        }
        move_row = {"ply": row.ply + 1, "notation": str(played), "fen_after": fen, "by_user": by_user,
                    "played_at": now}
        return fields, move_row

    def after_move(self, row: GameRecord, game: Game, played: Move, now: float, draw_offer: str | None,
                   deadline_at: float | None) -> GameRecord:
        """The record write_move will leave (the same arguments): what a message about the move
        shows can be drawn before the write transaction, which then only stores it."""
        fields, _move = self._move_fields(row, game, played, "", now, draw_offer, deadline_at)
        if game.result is not None:
            fields.update(self._result_fields(game.result, now))
        fields.update(reminded=bool(fields["reminded"]), last_path=tuple(fields["last_path"]),
                      last_captured=tuple(fields["last_captured"]))
        return dataclasses.replace(row, **fields, version=row.version + 1)

    def stored_game(self, row: GameRecord) -> Game:
        """A stored game replayed from its moves, with its result and its PDN tags (players, and
        for a game against the bot which side it played and its level, as PGN's WhiteType/BlackType)."""
        game = Game(row.variant, row.start_fen, draw_rules=False)
        for m in self.storage.games.moves(row.id):
            game.play(m.notation)
        if row.status == "finished":
            game.result = _stored_result(row)
        game.tags.update({"Event": f"Game #{row.id}", "Site": row.platform,
                          "Date": time.strftime("%Y.%m.%d", time.gmtime(row.created_at)),
                          "White": self._pdn_name(row, Color.WHITE), "Black": self._pdn_name(row, Color.BLACK)})
        if row.bot_level is not None:
            game.tags.update({"WhiteType": "program" if row.white_id == BOT_ID else "human",
                              "BlackType": "program" if row.black_id == BOT_ID else "human",
                              "BotLevel": str(row.bot_level)})
        return game

    def load(self, row: GameRecord) -> Game:
        """The live game of a stored row, without replaying it."""
        return Game.resume(row.variant, row.start_fen, self.recent_fens(row), row.quiet_plies)

    def chat_lang(self, platform: str, chat_id: str, fallback: str | None = None) -> str:
        """The chat's language, else ``fallback`` (a user's language), else the default."""
        chat = self.storage.players.chat(platform, chat_id)
        return (chat.language if chat and chat.language else None) or pick_language(fallback)

    def game_lang(self, row: GameRecord, user_id: str) -> str:
        """The language to speak about a game: its chat's, else that player's own."""
        chat = self.storage.players.chat(row.platform, row.chat_id)
        if chat is not None and chat.language:
            return chat.language
        player = self.storage.players.get(row.platform, user_id)
        return pick_language(player.language if player else None)

    def bot_to_move(self, row: GameRecord, pos: Position | None = None) -> bool:
        """Whether it is the bot's turn in this game (only games against the bot have one)."""
        return bot_to_move(row, pos)
    def _pdn_name(self, row: GameRecord, color: str) -> str:
        user_id, name = (row.white_id, row.white_name) if color == Color.WHITE else (row.black_id, row.black_name)
        return neutral_bot_name(row.bot_level) if user_id == BOT_ID and row.bot_level is not None else name

    def color_of(self, row: GameRecord, user_id: str) -> Color | None:
        if row.white_id == user_id:
            return Color.WHITE
        if row.black_id == user_id:
            return Color.BLACK
        return None

    def _result_fields(self, result: Result, now: float) -> dict[str, Any]:
        return {"status": "finished", "result_score": result.score, "result_reason": result.reason,
                "winner": result.winner, "finished_at": now, "deadline_at": None, "draw_offer": None}

    def finish_game(self, row: GameRecord, result: Result, now: float, fields: dict[str, Any] | None = None,
                    move: dict[str, Any] | None = None, origin: object | None = None) -> GameRecord:
        """The one path by which a result is written, whatever ended the game (a last move, a
        resignation, a draw agreed, time): the result, any other ``fields`` and the ``move`` that
        ended it, and what follows from a result (GameFinished, and MovePlayed for a last move: their
        subscribers write in this transaction too).  StaleGame when the game moved on meanwhile.
        The game as it is now."""
        with self.storage.transaction():
            change = GameChange(**{**(fields or {}), **self._result_fields(result, now)})
            finished = self.storage.games.update(row.id, row.version, change, None if move is None else NewMove(**move))
            if move is not None:
                self.bus.publish(MovePlayed(finished, move["notation"], move["by_user"], origin))
            self.bus.publish(GameFinished(finished, origin))
        return finished

    def player_to_move(self, row: GameRecord) -> tuple[str, str] | None:
        """(user id, name) of the person to move in an active game; None when the game is over or
        it is the bot's turn."""
        if row.status != "active" or self.bot_to_move(row):
            return None
        turn = Position.from_fen(row.variant, row.fen).turn
        return (row.white_id, row.white_name) if turn == Color.WHITE else (row.black_id, row.black_name)

    def tell_privately(self, row: GameRecord, user_id: str, notice: Notification | None = None,
                       now: float | None = None) -> bool:
        """Send the player to move their turn notice (``notice``, else 'your turn') in their private
        chat with the bot (through the outbox), when they asked for that (/notify on) and a private
        message can reach them; whether it was sent so (then the group is not pinged)."""
        setting = self.storage.players.notify_setting(row.platform, user_id)
        if setting is None or not setting.private or setting.unreachable:
            return False
        if notice is None:
            now = self.clock() if now is None else now
            notice = PrivateTurn(row.id, self.game_lang(row, user_id), (row.deadline_at or now) - now)
        # game_id: if the private message cannot be delivered, the group is pinged instead.
        self.tell(row.platform, dm_chat(user_id), notice)
        return True

    def turn_notice(self, row: GameRecord, now: float | None = None) -> Mention | None:
        """Whom to ping that it is their turn in ``row`` (in a group; a private chat's own messages
        notify), or None.  A player who asked for private notices is told there (through the
        outbox) instead, and None is returned: nothing in the group."""
        mover = self.player_to_move(row)
        if mover is None:
            return None
        if self._chat_kind(row.platform, row.chat_id) == "private":
            return None
        user_id, name = mover
        if self.tell_privately(row, user_id, now=now):
            return None
        player = self.storage.players.get(row.platform, user_id)
        return Mention(user_id, name, player.username if player else None)

    def _chat_kind(self, platform: str, chat_id: str) -> str | None:
        """A chat's kind (private, group, ...), read once per process: it never changes, and a
        move's turn notice would otherwise read the chat again."""
        key = (platform, chat_id)
        kind = self._kinds.get(key)
        if kind is None:
            chat = self.storage.players.chat(platform, chat_id)
            if chat is None:
                return None
            if len(self._kinds) >= CHAT_KINDS_KEPT:
                self._kinds.clear()
            kind = self._kinds[key] = chat.kind
        return kind

    def time_out(self, lang: str, row: GameRecord, now: float) -> LostOnTime:
        """End a game whose side to move ran out of time; its notification (the final board)."""
        game = self.load(row)
        finished = self.finish_game(row, game.lose_on_time(game.turn), now)
        return LostOnTime(row.id, lang, GameState.of(finished))

    def default_variant(self, caller: Caller, lang: str | None) -> str:
        """The chat's own setting, else what it plays (its puzzle of the day, else the variant of
        most of its recent games), and only then a guess from its language ``lang`` (the chat
        layer's to know; None: not known)."""
        if caller.chat.variant in VARIANTS:
            return caller.chat.variant
        sub = self.storage.puzzles.subscription(*caller.key)
        if sub is not None and sub.active and sub.variant in VARIANTS:
            return sub.variant
        recent = [g.variant for g in self.storage.games.find(*caller.key, limit=RECENT_GAMES) if g.variant in VARIANTS]
        if recent:
            # Most played; on a tie, the one played last (find_games is newest first).
            return max(dict.fromkeys(recent), key=recent.count)
        return language_variant(lang)


def language_variant(lang: str | None) -> str:
    """The variant a chat of this language most likely plays (the last guess of a chat's default)."""
    return "spanish" if lang == "es" else "italian"
