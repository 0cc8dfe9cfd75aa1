"""The games a chat has: finding the one a message means, loading it, its board, and
the one path by which a result is written (``finish_game``)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from bot.i18n import pick_language, t
from bot.rules import (
    Color,
    Game,
    Move,
    Position,
    Result,
)
from bot.service import boards
from bot.service.events import Button, Mention, Reply, dm_chat
from bot.service.features.common import (
    Ctx,
    _last_move,
    _rows,
    _stored_result,
    reply_flipped,
)
from bot.service.registry import ButtonKind, action
from bot.service.wording import duration, result_text, short_list, to_move, variant_name
from bot.storage import BOT_ID, StaleGame, Store
from bot.storage.records import GameRecord


class GamesCore:
    """Shared by every feature: storage, clock, randomness, and the game helpers."""

    storage: Store
    clock: Callable[[], float]
    rng: random.Random

    def _my_games(self, ctx: Ctx) -> list[GameRecord]:
        uid = ctx.event.user_id
        return [g for g in self.storage.active_games(*ctx.key) if uid in (g.white_id, g.black_id)]

    def _resolve(self, ctx: Ctx, ref: int | None, mine_only: bool = True,
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
        games = self._my_games(ctx)
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
                if recent and recent[0].status == "finished" and recent[0].finished_at > ctx.now - 86400:
                    # "No game here" would be confusing right after one ended.
                    return None, [Reply(self._over_text(ctx.lang, recent[0]) + "\n" + t(ctx.lang, "game.new_hint"))]
                if self.storage.active_games(*ctx.key):
                    return None, [Reply(t(ctx.lang, "game.spectator"), private=True)]
            return None, [Reply(t(ctx.lang, "game.none"))]
        if len(games) > 1:
            listing = short_list(ctx.lang, [self._game_line(ctx.lang, g) for g in games])
            return None, [Reply(t(ctx.lang, "game.which") + "\n" + listing)]
        return self._unless_expired(ctx, games[0])

    def _unless_expired(self, ctx: Ctx, row: GameRecord) -> tuple[GameRecord | None, list[Reply]]:
        """The game, or, when its clock ran out before the scheduler noticed (say, after
        downtime), the loss on time announced instead: no move is played after the deadline."""
        if row.status != "active" or row.deadline_at is None or row.deadline_at > ctx.sent:
            return row, []
        try:
            return None, [self._time_out(ctx.lang, row, ctx.now)]
        except StaleGame:
            return None, [Reply(t(ctx.lang, "move.stale"))]

    def _game_line(self, lang: str, g: GameRecord) -> str:
        turn = Position.from_fen(g.variant, g.fen).turn
        mover = g.white_name if turn == Color.WHITE else g.black_name
        line = t(lang, "games.line", id=g.id, variant=variant_name(lang, g.variant),
                 white=g.white_name, black=g.black_name, mover=mover, ply=g.ply // 2 + 1)
        if g.bot_level is not None:
            line += f" ({t(lang, 'games.bot', level=g.bot_level)})"
        return line

    def _recent_fens(self, row: GameRecord) -> list[str]:
        """The positions since the last capture or man move, oldest first (docs/rules.md §4:
        all that repetition needs)."""
        need = row.quiet_plies + 1
        fens = self.storage.recent_fens(row.id, need)
        if len(fens) < need:
            fens = [row.start_fen or Position.start(row.variant).fen(), *fens]
        return fens

    def _write_move(self, row: GameRecord, game: Game, played: Move, by_user: str, now: float,
                    draw_offer: str | None, deadline_at: float | None) -> GameRecord:
        """Store a move just played on ``game`` (the live game of ``row``): the position, the clock,
        the move's row, and the result when it ended the game.  The fresh record; StaleGame when
        the game changed meanwhile (nothing is written then)."""
        fen = game.position.fen()
        fields: dict[str, Any] = {
            "fen": fen, "ply": row.ply + 1, "quiet_plies": game.quiet_plies,
            "deadline_at": deadline_at, "reminded": 0,
            "last_path": list(played.path), "last_captured": list(played.captured), "draw_offer": draw_offer,
        }
        move_row = {"ply": row.ply + 1, "notation": str(played), "fen_after": fen, "by_user": by_user,
                    "played_at": now}
        if game.result is not None:
            return self.finish_game(row, game.result, now, fields, move_row)
        self.storage.update_game(row.id, row.version, fields, move_row)
        return self.storage.game(row.id)

    def _stored_game(self, row: GameRecord) -> Game:
        """A stored game replayed from its moves, with its result and its PDN tags (players, and
        for a game against the bot which side it played and its level, as PGN's WhiteType/BlackType)."""
        game = Game(row.variant, row.start_fen, draw_rules=False)
        for m in self.storage.moves(row.id):
            game.play(m.notation)
        if row.status == "finished":
            game.result = _stored_result(row)
        game.tags.update({"Event": f"Game #{row.id}", "Site": row.platform,
                          "Date": time.strftime("%Y.%m.%d", time.gmtime(row.created_at)),
                          "White": row.white_name, "Black": row.black_name})
        if row.bot_level is not None:
            game.tags.update({"WhiteType": "program" if row.white_id == BOT_ID else "human",
                              "BlackType": "program" if row.black_id == BOT_ID else "human",
                              "BotLevel": str(row.bot_level)})
        return game

    def _load(self, row: GameRecord) -> Game:
        """The live game of a stored row, without replaying it."""
        return Game.resume(row.variant, row.start_fen, self._recent_fens(row), row.quiet_plies)

    def _chat_lang(self, platform: str, chat_id: str, fallback: str | None = None) -> str:
        """The chat's language, else ``fallback`` (a user's language), else the default."""
        chat = self.storage.chat(platform, chat_id)
        return (chat.language if chat and chat.language else None) or pick_language(fallback)

    def _game_lang(self, row: GameRecord, user_id: str) -> str:
        """The language to speak about a game: its chat's, else that player's own."""
        chat = self.storage.chat(row.platform, row.chat_id)
        if chat is not None and chat.language:
            return chat.language
        player = self.storage.player(row.platform, user_id)
        return pick_language(player.language if player else None)

    def _bot_to_move(self, row: GameRecord, pos: Position | None = None) -> bool:
        """Whether it is the bot's turn in this game (only games against the bot have one)."""
        if row.bot_level is None or row.status != "active":
            return False
        turn = (pos or Position.from_fen(row.variant, row.fen)).turn
        return (row.white_id if turn == Color.WHITE else row.black_id) == BOT_ID

    def _bot_name(self, lang: str, row: GameRecord) -> str:
        return t(lang, "bot.name", level=row.bot_level)

    def _think(self, row: GameRecord) -> bool:
        """Have the bot think about its move in ``row`` (the opponent feature does this)."""
        raise NotImplementedError

    def _color_of(self, row: GameRecord, user_id: str) -> str | None:
        if row.white_id == user_id:
            return Color.WHITE
        if row.black_id == user_id:
            return Color.BLACK
        return None

    def _over_text(self, lang: str, row: GameRecord, result: Result | None = None) -> str:
        """'Game #N is over.' and how it ended (``row`` as it is once the game ended)."""
        result = result or _stored_result(row)
        final = Position.from_fen(row.variant, row.fen)
        return t(lang, "game.over", id=row.id) + " " + result_text(lang, result, row.white_name,
                                                                      row.black_name, final)

    def _result_fields(self, result: Result, now: float) -> dict[str, Any]:
        return {"status": "finished", "result_score": result.score, "result_reason": result.reason,
                "winner": result.winner, "finished_at": now, "deadline_at": None, "draw_offer": None}

    def finish_game(self, row: GameRecord, result: Result, now: float, fields: dict[str, Any] | None = None,
                    move: dict[str, Any] | None = None) -> GameRecord:
        """The one path by which a result is written, whatever ended the game (a last move, a
        resignation, a draw agreed, time): the result, any other ``fields`` and the ``move`` that
        ended it, and what follows from a result (``_game_finished``), in one transaction.
        StaleGame when the game moved on meanwhile.  The game as it is now."""
        with self.storage.transaction():
            self.storage.update_game(row.id, row.version, {**(fields or {}), **self._result_fields(result, now)}, move)
            finished = self.storage.game(row.id)
            self._game_finished(finished)
        return finished

    def _game_finished(self, game: GameRecord) -> None:
        """Called inside the transaction that wrote a result; features that follow results (ratings)
        extend it (and call super())."""

    def _to_move_line(self, lang: str, row: GameRecord, now: float) -> str:
        if self._bot_to_move(row):
            # The bot has no clock: it answers as soon as it has thought.
            return t(lang, "bot.thinking", bot=self._bot_name(lang, row))
        turn = Position.from_fen(row.variant, row.fen).turn
        name = row.white_name if turn == Color.WHITE else row.black_name
        return to_move(lang, name, turn, (row.deadline_at or now) - now)

    # -- telling the player to move ------------------------------------------------------------------

    def _player_to_move(self, row: GameRecord) -> tuple[str, str] | None:
        """(user id, name) of the person to move in an active game; None when the game is over or
        it is the bot's turn."""
        if row.status != "active" or self._bot_to_move(row):
            return None
        turn = Position.from_fen(row.variant, row.fen).turn
        return (row.white_id, row.white_name) if turn == Color.WHITE else (row.black_id, row.black_name)

    def _tell_privately(self, row: GameRecord, user_id: str, text: str | None = None,
                        now: float | None = None) -> bool:
        """Send the player to move their turn notice in their private chat with the bot (through
        the outbox), when they asked for that (/notify on) and a private message can reach them;
        whether it was sent so (then the group is not pinged)."""
        setting = self.storage.notify_setting(row.platform, user_id)
        if setting is None or not setting.private or setting.unreachable:
            return False
        lang = self._game_lang(row, user_id)
        if text is None:
            now = self.clock() if now is None else now
            left = duration(lang, (row.deadline_at or now) - now)
            text = t(lang, "turn.private", id=row.id, white=row.white_name, black=row.black_name, left=left)
        # game_id: if the private message cannot be delivered, the group is pinged instead.
        self.say(row.platform, dm_chat(user_id), Reply(text, game_id=row.id))
        return True

    def _ping_turn(self, lang: str, row: GameRecord, named_in: Reply | None = None,
                   now: float | None = None) -> list[Reply]:
        """Tell the person to move in ``row`` that it is their turn (in a group; a private chat's own
        messages notify).  ``named_in``: the new message that names them (a typed move's board): the
        ping goes on it.  Without one (the board was edited in place, and an edit notifies no one)
        a short message of its own is returned.  A player who asked for private notices gets one
        there instead, and nothing in the group."""
        mover = self._player_to_move(row)
        if mover is None:
            return []
        chat = self.storage.chat(row.platform, row.chat_id)
        if chat is not None and chat.kind == "private":
            return []
        user_id, name = mover
        if self._tell_privately(row, user_id, now=now):
            return []
        player = self.storage.player(row.platform, user_id)
        mention = Mention(user_id, name, player.username if player else None)
        if named_in is not None and name in named_in.text:
            named_in.mentions.append(mention)
            return []
        return [Reply(t(lang, "turn.ping", name=name, id=row.id), mentions=[mention])]

    def _board_reply(self, lang: str, row: GameRecord, text: str, replaces: bool = False) -> Reply:
        """The board of a stored game, with the piece buttons for the player to move."""
        pos = Position.from_fen(row.variant, row.fen)
        view = boards.board_view(pos, *_last_move(row), flipped=reply_flipped(row))
        buttons: list[list[Button]] = []
        if row.status == "active" and not self._bot_to_move(row, pos):
            starts = sorted({m.start for m in pos.legal_moves()})
            buttons = _rows([Button(str(sq), action(ButtonKind.SELECT, row.id, row.ply, sq)) for sq in starts])
        return Reply(text, image=boards.png(view), board_text=boards.text(view), buttons=buttons,
                     replaces_board=replaces, game_id=row.id)
