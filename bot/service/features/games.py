"""The games a chat has: finding the one a message means, loading it, its board, and
the one path by which a result is written (``finish_game``)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from bot.i18n import pick_language, t
from bot.rules import (
    VARIANTS,
    Color,
    Game,
    Move,
    Position,
    Result,
)
from bot.service import boards
from bot.service.domain import EventBus, GameFinished, MovePlayed
from bot.service.events import Button, Mention, Reply, dm_chat
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import (
    Ctx,
    _last_move,
    _rows,
    _stored_result,
    reply_flipped,
)
from bot.service.registry import ButtonKind, action
from bot.service.wording import duration, result_text, short_list, to_move, to_name, variant_name
from bot.storage import BOT_ID, StaleGame
from bot.storage.records import GameRecord


def turn_ping(lang: str, row: GameRecord, mention: Mention | None, named_in: Reply | None) -> list[Reply]:
    """The ping of ``mention`` (whose turn it is in ``row``): on ``named_in`` when that message names
    them, else a short message of its own."""
    if mention is None:
        return []
    if named_in is not None and mention.name in named_in.text:
        named_in.mentions.append(mention)
        return []
    return [Reply(t(lang, "turn.ping", name=mention.name, id=row.id), mentions=[mention])]


def neutral_bot_name(level: int) -> str:
    """The bot's name where no chat language applies (stored games, PDN): the same everywhere,
    whatever language the game was made in (PDN readers expect English tags)."""
    return f"Bot (level {level})"


# How many of a chat's latest games say which variant it plays.
RECENT_GAMES = 20


class Games(UseCase):
    """The games of the chats: finding the one a message means, loading and writing them, their
    boards.  Publishes MovePlayed and GameFinished on ``bus`` (inside the writing transaction)."""

    def __init__(self, runtime: Runtime, outlet: Outlet, bus: EventBus) -> None:
        super().__init__(runtime, outlet)
        self.bus = bus

    def my_games(self, ctx: Ctx) -> list[GameRecord]:
        uid = ctx.event.user_id
        return [g for g in self.storage.active_games(*ctx.key) if uid in (g.white_id, g.black_id)]

    def resolve(self, ctx: Ctx, ref: int | None, mine_only: bool = True,
                 finished_ok: bool = False) -> tuple[GameRecord | None, list[Reply]]:
        """The game a command means: #id, the board replied to, or the user's only game here."""
        if ref is None and ctx.event.reply_to:
            ref = self.storage.game_of_message(ctx.event.platform, ctx.event.chat_id, str(ctx.event.reply_to))
        if ref is not None:
            row = self.storage.game(ref)
            if row is None or (row.platform, row.chat_id) != ctx.key:
                return None, [Reply(t(ctx.lang, "game.unknown", id=ref))]
            if row.status != "active" and not finished_ok:
                return None, [Reply(t(ctx.lang, "err.game_over"))]
            if mine_only and ctx.event.user_id not in (row.white_id, row.black_id):
                return None, [Reply(t(ctx.lang, "game.not_player", id=ref), private=True)]
            return self._unless_expired(ctx, row)
        games = self.my_games(ctx)
        if not games and not mine_only:
            games = self.storage.active_games(*ctx.key)
        if not games and finished_ok:
            games = self.storage.recent_games(*ctx.key, ctx.event.user_id)
            if not games and not mine_only:
                # A spectator asking after the game ended means the chat's last game.
                last = self.storage.last_game(*ctx.key)
                games = [last] if last else []
        if not games:
            if mine_only:
                recent = self.storage.recent_games(*ctx.key, ctx.event.user_id)
                if (recent and recent[0].status == "finished" and recent[0].finished_at is not None
                        and recent[0].finished_at > ctx.now - 86400):
                    # "No game here" would be confusing right after one ended.
                    return None, [Reply(self.over_text(ctx.lang, recent[0]) + "\n" + t(ctx.lang, "game.new_hint"))]
                if self.storage.active_games(*ctx.key):
                    return None, [Reply(t(ctx.lang, "game.spectator"), private=True)]
            return None, [Reply(t(ctx.lang, "game.none"))]
        if len(games) > 1:
            listing = short_list(ctx.lang, [self.game_line(ctx.lang, g) for g in games])
            return None, [Reply(t(ctx.lang, "game.which") + "\n" + listing)]
        return self._unless_expired(ctx, games[0])

    def _unless_expired(self, ctx: Ctx, row: GameRecord) -> tuple[GameRecord | None, list[Reply]]:
        """The game, or, when its clock ran out before the scheduler noticed (say, after
        downtime), the loss on time announced instead: no move is played after the deadline."""
        if row.status != "active" or row.deadline_at is None or row.deadline_at > ctx.sent:
            return row, []
        try:
            return None, [self.time_out(ctx.lang, row, ctx.now)]
        except StaleGame:
            return None, [Reply(t(ctx.lang, "move.stale"))]

    def game_line(self, lang: str, g: GameRecord) -> str:
        turn = Position.from_fen(g.variant, g.fen).turn
        white, black = self.names(lang, g)
        mover = white if turn == Color.WHITE else black
        line = t(lang, "games.line", id=g.id, variant=variant_name(lang, g.variant),
                 white=white, black=black, mover=mover, to_mover=to_name(lang, mover), ply=g.ply // 2 + 1)
        if g.bot_level is not None:
            line += f" ({t(lang, 'games.bot', level=g.bot_level)})"
        return line

    def recent_fens(self, row: GameRecord) -> list[str]:
        """The positions since the last capture or man move, oldest first (docs/rules.md §4:
        all that repetition needs)."""
        need = row.quiet_plies + 1
        fens = self.storage.recent_fens(row.id, need)
        if len(fens) < need:
            fens = [row.start_fen or Position.start(row.variant).fen(), *fens]
        return fens

    def write_move(self, row: GameRecord, game: Game, played: Move, by_user: str, now: float,
                    draw_offer: str | None, deadline_at: float | None) -> GameRecord:
        """Store a move just played on ``game`` (the live game of ``row``): the position, the clock,
        the move's row, and the result when it ended the game.  The fresh record; StaleGame when
        the game changed meanwhile (nothing is written then)."""
        fields, move_row = self._move_fields(row, game, played, by_user, now, draw_offer, deadline_at)
        if game.result is not None:
            return self.finish_game(row, game.result, now, fields, move_row)
        with self.storage.transaction():
            self.storage.update_game(row.id, row.version, fields, move_row)
            fresh = self.storage.game(row.id)
            assert fresh is not None          # written just now, in this transaction
            self.bus.publish(MovePlayed(fresh, str(played), by_user))
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
        for m in self.storage.moves(row.id):
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
        chat = self.storage.chat(platform, chat_id)
        return (chat.language if chat and chat.language else None) or pick_language(fallback)

    def game_lang(self, row: GameRecord, user_id: str) -> str:
        """The language to speak about a game: its chat's, else that player's own."""
        chat = self.storage.chat(row.platform, row.chat_id)
        if chat is not None and chat.language:
            return chat.language
        player = self.storage.player(row.platform, user_id)
        return pick_language(player.language if player else None)

    def bot_to_move(self, row: GameRecord, pos: Position | None = None) -> bool:
        """Whether it is the bot's turn in this game (only games against the bot have one)."""
        if row.bot_level is None or row.status != "active":
            return False
        turn = (pos or Position.from_fen(row.variant, row.fen)).turn
        return (row.white_id if turn == Color.WHITE else row.black_id) == BOT_ID

    def bot_name(self, lang: str, row: GameRecord) -> str:
        """The bot as the subject that opens a sentence ('El bot (nivel 2) jugó...')."""
        return t(lang, "bot.name_start", level=row.bot_level)

    def names(self, lang: str, row: GameRecord) -> tuple[str, str]:
        """White's and Black's names as this language shows them: the bot's is rendered here, not
        stored (a game made in an Italian chat is read in Spanish too)."""
        return self.name_of(lang, row, Color.WHITE), self.name_of(lang, row, Color.BLACK)

    def name_of(self, lang: str, row: GameRecord, color: str) -> str:
        user_id, name = (row.white_id, row.white_name) if color == Color.WHITE else (row.black_id, row.black_name)
        if user_id == BOT_ID and row.bot_level is not None:
            return t(lang, "bot.name", level=row.bot_level)
        return name

    def _pdn_name(self, row: GameRecord, color: str) -> str:
        user_id, name = (row.white_id, row.white_name) if color == Color.WHITE else (row.black_id, row.black_name)
        return neutral_bot_name(row.bot_level) if user_id == BOT_ID and row.bot_level is not None else name

    def color_of(self, row: GameRecord, user_id: str) -> str | None:
        if row.white_id == user_id:
            return Color.WHITE
        if row.black_id == user_id:
            return Color.BLACK
        return None

    def over_text(self, lang: str, row: GameRecord, result: Result | None = None) -> str:
        """'Game #N is over.' and how it ended (``row`` as it is once the game ended)."""
        result = result or _stored_result(row)
        final = Position.from_fen(row.variant, row.fen)
        return t(lang, "game.over", id=row.id) + " " + result_text(lang, result, *self.names(lang, row), final)

    def _result_fields(self, result: Result, now: float) -> dict[str, Any]:
        return {"status": "finished", "result_score": result.score, "result_reason": result.reason,
                "winner": result.winner, "finished_at": now, "deadline_at": None, "draw_offer": None}

    def finish_game(self, row: GameRecord, result: Result, now: float, fields: dict[str, Any] | None = None,
                    move: dict[str, Any] | None = None) -> GameRecord:
        """The one path by which a result is written, whatever ended the game (a last move, a
        resignation, a draw agreed, time): the result, any other ``fields`` and the ``move`` that
        ended it, and what follows from a result (GameFinished, and MovePlayed for a last move: their
        subscribers write in this transaction too).  StaleGame when the game moved on meanwhile.
        The game as it is now."""
        with self.storage.transaction():
            self.storage.update_game(row.id, row.version, {**(fields or {}), **self._result_fields(result, now)}, move)
            finished = self.storage.game(row.id)
            assert finished is not None       # written just now, in this transaction
            if move is not None:
                self.bus.publish(MovePlayed(finished, move["notation"], move["by_user"]))
            self.bus.publish(GameFinished(finished))
        return finished

    def to_move_line(self, lang: str, row: GameRecord, now: float) -> str:
        if self.bot_to_move(row):
            # The bot has no clock: it answers as soon as it has thought.
            return t(lang, "bot.thinking", bot=self.bot_name(lang, row))
        turn = Position.from_fen(row.variant, row.fen).turn
        return to_move(lang, self.name_of(lang, row, turn), turn, (row.deadline_at or now) - now)

    # -- telling the player to move ------------------------------------------------------------------

    def player_to_move(self, row: GameRecord) -> tuple[str, str] | None:
        """(user id, name) of the person to move in an active game; None when the game is over or
        it is the bot's turn."""
        if row.status != "active" or self.bot_to_move(row):
            return None
        turn = Position.from_fen(row.variant, row.fen).turn
        return (row.white_id, row.white_name) if turn == Color.WHITE else (row.black_id, row.black_name)

    def tell_privately(self, row: GameRecord, user_id: str, text: str | None = None,
                        now: float | None = None) -> bool:
        """Send the player to move their turn notice in their private chat with the bot (through
        the outbox), when they asked for that (/notify on) and a private message can reach them;
        whether it was sent so (then the group is not pinged)."""
        setting = self.storage.notify_setting(row.platform, user_id)
        if setting is None or not setting.private or setting.unreachable:
            return False
        lang = self.game_lang(row, user_id)
        if text is None:
            now = self.clock() if now is None else now
            left = duration(lang, (row.deadline_at or now) - now)
            white, black = self.names(lang, row)
            text = t(lang, "turn.private", id=row.id, white=white, black=black, left=left)
        # game_id: if the private message cannot be delivered, the group is pinged instead.
        self.say(row.platform, dm_chat(user_id), Reply(text, game_id=row.id))
        return True

    def turn_notice(self, row: GameRecord, now: float | None = None) -> Mention | None:
        """Whom to ping that it is their turn in ``row`` (in a group; a private chat's own messages
        notify), or None.  A player who asked for private notices is told there (through the
        outbox) instead, and None is returned: nothing in the group."""
        mover = self.player_to_move(row)
        if mover is None:
            return None
        chat = self.storage.chat(row.platform, row.chat_id)
        if chat is not None and chat.kind == "private":
            return None
        user_id, name = mover
        if self.tell_privately(row, user_id, now=now):
            return None
        player = self.storage.player(row.platform, user_id)
        return Mention(user_id, name, player.username if player else None)

    def ping_turn(self, lang: str, row: GameRecord, named_in: Reply | None = None,
                  now: float | None = None) -> list[Reply]:
        """Tell the person to move in ``row`` that it is their turn (see turn_notice).  ``named_in``:
        the new message that names them (a typed move's board): the ping goes on it.  Without one
        (the board was edited in place, and an edit notifies no one) a short message of its own is
        returned."""
        return turn_ping(lang, row, self.turn_notice(row, now), named_in)

    def board_reply(self, lang: str, row: GameRecord, text: str, replaces: bool = False) -> Reply:
        """The board of a stored game, with the piece buttons for the player to move."""
        pos = Position.from_fen(row.variant, row.fen)
        view = boards.board_view(pos, *_last_move(row), flipped=reply_flipped(row))
        buttons: list[list[Button]] = []
        if row.status == "active" and not self.bot_to_move(row, pos):
            starts = sorted({m.start for m in pos.legal_moves()})
            buttons = _rows([Button(str(sq), action(ButtonKind.SELECT, row.id, row.ply, sq)) for sq in starts])
        elif row.status == "finished":
            buttons = [[Button(t(lang, "button.rematch"), action(ButtonKind.REMATCH, row.id))]]
        return Reply(text, image=boards.png(view), board_text=boards.text(view), buttons=buttons,
                     replaces_board=replaces, game_id=row.id)

    def time_out(self, lang: str, row: GameRecord, now: float, drawn: tuple[Result, Reply] | None = None) -> Reply:
        """End a game whose side to move ran out of time; the announcement with the final board
        (``drawn``: from time_out_drawn, made before the caller's transaction)."""
        result, reply = drawn or self.time_out_drawn(lang, row, now)
        self.finish_game(row, result, now)
        return reply

    def time_out_drawn(self, lang: str, row: GameRecord, now: float) -> tuple[Result, Reply]:
        """The loss on time of the side to move in ``row`` and its announcement, drawn from the game
        as finish_game will leave it (so it can be drawn before the write transaction)."""
        game = self.load(row)
        result = game.lose_on_time(game.turn)
        after = dataclasses.replace(row, **self._result_fields(result, now), version=row.version + 1)
        return result, self.board_reply(lang, after, self.over_text(lang, row, result))

    def default_variant(self, ctx: Ctx) -> str:
        """The chat's own setting, else what it plays (its puzzle of the day, else the variant of
        most of its recent games), and only then a guess from its language."""
        if ctx.chat.variant in VARIANTS:
            return ctx.chat.variant
        sub = self.storage.subscription(*ctx.key)
        if sub is not None and sub.active and sub.variant in VARIANTS:
            return sub.variant
        recent = [g.variant for g in self.storage.find_games(*ctx.key, limit=RECENT_GAMES) if g.variant in VARIANTS]
        if recent:
            # Most played; on a tie, the one played last (find_games is newest first).
            return max(dict.fromkeys(recent), key=recent.count)
        return "spanish" if ctx.lang == "es" else "italian"
