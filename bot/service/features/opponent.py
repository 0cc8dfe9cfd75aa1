"""Playing against the bot: /play starts a game, the bot's moves come from the engine's pool.

The bot never blocks the chat: after a human's move the service hands the position to the pool
(``Thinker``) and answers at once; the bot's move is written when the search ends, together with
its board message in the outbox, so the adapter delivers it like any message the service sends on
its own.  Whether the bot is to move is read from the stored game, so after a restart the games
it was thinking about are found again (``_resume_bots``, from the timed work) and nothing is
played twice (the game's version guards the write).
"""

from __future__ import annotations

import logging
from typing import Any

from bot.ai import move_seconds, search_position
from bot.rules import Color, Game, Position
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.games import Games, neutral_bot_name
from bot.service.features.identity import Caller
from bot.service.features.results_games import BotDrawAnswer, BotGameStarted, PlayArgs, Refused
from bot.service.notifications import BotMoved, GameState
from bot.service.thinking import move_job
from bot.storage import BOT_ID, StaleGame, StorageFull, StorageUnavailable, in_transaction
from bot.storage.records import GameRecord
from bot.storage.repositories import NewGame

log = logging.getLogger("bot.service")

# A player has at most this many games against the bot in one chat at a time.
MAX_BOT_GAMES = 1
# A draw offer to the bot is accepted when its quick look says it stands this much worse (a man is 100).
DRAW_ACCEPT_BELOW = -50
DRAW_LOOK_SECONDS = 0.15


class Opponent(UseCase):
    """Games against the bot: /play, the bot's moves, its answer to a draw offer."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games) -> None:
        super().__init__(runtime, outlet)
        self.games = games

    def start_game(self, caller: Caller, spec: PlayArgs, lang: str) -> BotGameStarted | Refused:
        """Start a game against the bot: /play [variant] [level 1-5] [white|black|random] [move time]
        (no variant: the chat's, ``lang`` - its language - the last guess)."""
        ev = caller
        mine = [g for g in self.storage.games.against_bot(ev.platform)
                if g.chat_id == ev.chat_id and ev.user_id in (g.white_id, g.black_id)]
        if len(mine) >= MAX_BOT_GAMES:
            return Refused("play.already", values=(("id", mine[0].id),))
        variant = spec.variant or self.games.default_variant(caller, lang)
        color = spec.color if spec.color != "random" else self.rng.choice(["white", "black"])
        # Stored neutral: each language renders the bot's name when it shows the game.
        stored = neutral_bot_name(spec.level)
        human = (ev.user_id, ev.name)
        white, black = (human, (BOT_ID, stored)) if color == "white" else ((BOT_ID, stored), human)
        start = Position.start(variant)
        bot_first = white[0] == BOT_ID
        game_id = self.storage.games.create(NewGame(
            platform=ev.platform, chat_id=ev.chat_id, variant=variant,
            white_id=white[0], white_name=white[1], black_id=black[0], black_name=black[1],
            fen=start.fen(), move_seconds=spec.move_seconds,
            deadline_at=None if bot_first else caller.at + spec.move_seconds, created_at=caller.at,
            bot_level=spec.level,
        ))
        row = self.games.game_row(game_id)
        if bot_first:
            self.think(row)
        return BotGameStarted(row, human[1], color, caller.at)

    # -- the bot's move ------------------------------------------------------------------------------

    def think(self, row: GameRecord) -> bool:
        """Hand the position to the engine pool unless it is already being thought about; the
        move is written by ``_bot_moved`` when the search ends."""
        key = ("move", row.id, row.ply)
        if row.bot_level is None:
            return False            # not a game against the bot: nothing to think about
        if self.thinker.busy(key):
            return False            # the usual case when timed work looks again: nothing to read
        seed = self.rng.randrange(2 ** 31)
        human = row.black_id if row.white_id == BOT_ID else row.white_id
        # The pool takes turns between chats and players, and a quick level goes before long searches.
        return self.thinker.submit(
            key, move_job, (row.variant, row.fen, row.bot_level, self.games.recent_fens(row), seed, self.bot_seconds),
            on_done=lambda result: self._bot_moved(row.id, row.ply, result),
            chat=(row.platform, row.chat_id), user=(row.platform, human),
            seconds=move_seconds(row.bot_level, self.bot_seconds))

    def _bot_moved(self, game_id: int, ply: int, result: dict[str, Any]) -> None:
        """The engine's answer: play it (if the game is still where it was) and say it in the
        chat through the outbox, in the same transaction."""
        try:
            row = self.storage.games.get(game_id)
        except StorageUnavailable:
            return          # the next round of timed work after the server's return thinks again
        if row is None or row.ply != ply or not self.games.bot_to_move(row):
            return
        now = self.clock()
        lang = self.games.game_lang(row, row.black_id if row.white_id == BOT_ID else row.white_id)
        game = self.games.load(row)
        before = game.position.fen()
        if before != row.fen:
            # Another process played the bot's move between the two reads: nothing to play here.
            return
        played = game.play(result["move"])
        # The bot's move answers a standing draw offer with a no.
        deadline = now + row.move_seconds
        def write() -> None:
            fresh = self.games.write_move(row, game, played, BOT_ID, now, None, deadline)
            # Worded and drawn when delivered, from the game as this move left it.
            self.tell(row.platform, row.chat_id, BotMoved(row.id, lang, str(played), before, GameState.of(fresh),
                                                            now, self.games.turn_notice(fresh, now)))

        try:
            # Run again when it loses a race it may still win (a serialization failure on a
            # server with row locks); a game that moved on meanwhile is StaleGame.
            in_transaction(self.storage, write)
        except StaleGame:
            # The human resigned or the game changed while the bot thought: nothing to play.
            return
        except (StorageFull, StorageUnavailable):
            # The store logs the full disk or the server's outage (once a minute); the game is
            # looked at again by the next round of timed work, and the bot moves once there is
            # room, or once the server is back.
            return
        log.info("bot (level %s) played %s in game %s: score %s, depth %s, %.2f s", row.bot_level, played,
                 row.id, result.get("score"), result.get("depth"), result.get("seconds", 0.0))
        self._notify(row.platform)

    def resume_bots(self, platform: str | None) -> int:
        """Start thinking in every game of ``platform`` where the bot is to move and nothing is
        thinking yet (after a restart, or after a search that failed); how many were started."""
        started = 0
        for row in self.storage.games.against_bot(platform):
            if self.games.bot_to_move(row) and self.think(row):
                started += 1
        return started

    # -- a draw offered to the bot ---------------------------------------------------------------------

    def answer_draw(self, caller: Caller, row: GameRecord) -> BotDrawAnswer | Refused:
        """The bot takes a draw when a quick look says it stands worse, or only kings are left
        level; otherwise it plays on."""
        pos = Position.from_fen(row.variant, row.fen)
        bot_to_move = self.games.bot_to_move(row, pos)
        try:
            score = search_position(pos, 4, DRAW_LOOK_SECONDS).score
        except ValueError:
            score = 0
        bot_score = score if bot_to_move else -score
        (wm, wk), (bm, bk) = pos.count(Color.WHITE), pos.count(Color.BLACK)
        level_kings = wm == bm == 0 and wk == bk
        if bot_score <= DRAW_ACCEPT_BELOW or level_kings:
            result = Game(row.variant, row.fen).agree_draw()
            try:
                fresh = self.games.finish_game(row, result, caller.at, origin=caller.origin)
            except StaleGame:
                return Refused("move.stale")
            return BotDrawAnswer(fresh, result)
        return BotDrawAnswer(row, None)
