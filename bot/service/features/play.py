"""Playing: typed moves and buttons, draws, resignation, the board, PDN.

What each returns is typed (``results``, ``results_games``); ``bot.service.present_games`` words it."""

from __future__ import annotations

import dataclasses

from bot.rules import (
    Color,
    IllegalMove,
    Move,
    Position,
    Result,
    write_pdn,
)
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import (
    RESIGN_CONFIRM_SECONDS,
    Ctx,
    _name,
    _resign_key,
)
from bot.service.features.games import Games
from bot.service.features.opponent import Opponent
from bot.service.features.puzzles import Puzzles
from bot.service.features.results import MoveIllegal, MoveMade, MoveOutcome, MoveRequest, MoveStale
from bot.service.features.results_games import (
    BoardShown,
    BotDrawAnswer,
    DrawOffered,
    GameEnded,
    GameRef,
    NoGame,
    PathsOffered,
    PdnText,
    PiecePicked,
    PiecesShown,
    Refused,
    RepeatedPress,
    ResignAsked,
    TimedOut,
)
from bot.service.features.results_puzzles import Acted
from bot.service.registry import ButtonKind
from bot.storage import StaleGame
from bot.storage.records import GameRecord
from bot.storage.repositories import GameChange

# What a command of a game answers when no game could be meant.
Unresolved = NoGame | TimedOut
# What /resign, /draw and the game's buttons answer.
GameAnswer = (Unresolved | Refused | GameEnded | ResignAsked | DrawOffered | BotDrawAnswer | PiecesShown
              | PiecePicked | PathsOffered | RepeatedPress | MoveStale)


class Play(UseCase):
    """Playing: typed moves and buttons, draws, resignation, the board, PDN."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games, opponent: Opponent, puzzles: Puzzles) -> None:
        super().__init__(runtime, outlet)
        self.games = games
        self.opponent = opponent
        self.puzzles = puzzles

    def move(self, ctx: Ctx, request: MoveRequest) -> MoveOutcome | Unresolved | Acted:
        """Play a move in your game, or answer a puzzle: the one replied to, else, for a user with
        no game here, their open puzzle or the chat's puzzle of the day."""
        ref, text = request.game, request.move
        post = self.puzzles.puzzle_reply_target(ctx)
        mine: list[GameRecord] | None = None
        if post is None and ref is None and not ctx.event.reply_to:
            # Read once: resolving the game below looks at the same list.
            mine = self.games.my_games(ctx)
            if not mine:
                post = self.puzzles.puzzle_for(ctx, text=text)
        if post is not None:
            return self.puzzles.answer_puzzle(ctx, post, text)
        row = self.games.resolve(ctx, ref, mine=mine)
        if not isinstance(row, GameRecord):
            return row
        return self._play(ctx, row, text, via_button=False)

    def _play(self, ctx: Ctx, row: GameRecord, move: str | Move, via_button: bool) -> MoveOutcome:
        """Play a move for the event's user in ``row``; what happened (a presenter words it)."""
        game = self.games.load(row)
        before = game.position
        color = self.games.color_of(row, ctx.event.user_id)
        typed = move if isinstance(move, str) else str(move)
        try:
            played = game.play(move, by=color)
        except IllegalMove as err:
            mover = row.white_name if before.turn == Color.WHITE else row.black_name
            return MoveIllegal(err, before, typed[:40], mover, via_button, row)
        # Moving answers an opponent's draw offer with a no; one's own offer stands.
        draw_offer = row.draw_offer if row.draw_offer == color else None
        bot_next = game.result is None and self.games.bot_to_move(row, game.position)
        # The bot's clock does not run: it answers as soon as it has thought.
        deadline = None if bot_next else ctx.now + row.move_seconds
        try:
            fresh = self.games.write_move(row, game, played, ctx.event.user_id, ctx.now, draw_offer, deadline)
        except StaleGame:
            return MoveStale(self.games.game_row(row.id))
        declined = game.result is None and draw_offer is None and bool(row.draw_offer) and row.draw_offer != color
        # The opponent hears it is their turn (privately, if they asked for that, and then here not at all).
        turn = self.games.turn_notice(fresh, now=ctx.now)
        if bot_next:
            # After the move is committed: the engine's answer is written against the stored game.
            self.opponent.think(fresh)
        return MoveMade(fresh, before, played, _name(ctx.event), game.result, declined, bot_next, via_button, ctx.now,
                        turn)

    def resign(self, ctx: Ctx, request: GameRef) -> GameAnswer:
        """Resign your game, once confirmed: the Resign button of the question, or /resign again
        within a minute (a typo such as '/resign #2' for '#3' must not end a game at once).

        The question is kept in storage per game and player with the ply it was asked at, so it
        lapses when a move is played, and a restart within the minute still honours it."""
        ref = request.game
        row = self.games.resolve(ctx, ref)
        if not isinstance(row, GameRecord):
            return row
        key = _resign_key(row.id, ctx.event.user_id)
        asked = self.storage.pending(key)
        # The minute is between the two messages as the user sent them: in a throttled group the
        # second may be handled long after it was typed.
        if asked and asked["ply"] == row.ply and 0 <= ctx.sent - asked["at"] <= RESIGN_CONFIRM_SECONDS:
            return self._resign(ctx, row)
        self.storage.set_pending(key, {"ply": row.ply, "at": ctx.sent})
        return ResignAsked(row, _name(ctx.event), self.games.color_of(row, ctx.event.user_id))

    def _resign(self, ctx: Ctx, row: GameRecord) -> GameEnded | MoveStale:
        self.storage.drop_pending(_resign_key(row.id, ctx.event.user_id))
        color = self.games.color_of(row, ctx.event.user_id)
        assert color is not None              # resolve gives a player only their own games
        return self._end_by_players(ctx, row, self.games.load(row).resign(color))

    def _end_by_players(self, ctx: Ctx, row: GameRecord, result: Result) -> GameEnded | MoveStale:
        try:
            return GameEnded(self.games.finish_game(row, result, ctx.now), result)
        except StaleGame:
            return MoveStale(self.games.game_row(row.id))

    def draw(self, ctx: Ctx, request: GameRef) -> GameAnswer:
        """Offer a draw, or accept the opponent's offer."""
        ref = request.game
        row = self.games.resolve(ctx, ref)
        if not isinstance(row, GameRecord):
            return row
        if row.bot_level is not None:
            return self.opponent.answer_draw(ctx, row)
        color = self.games.color_of(row, ctx.event.user_id)
        if row.draw_offer and row.draw_offer != color:
            return self._end_by_players(ctx, row, self.games.load(row).agree_draw())
        if row.draw_offer == color:
            return Refused("draw.already")
        try:
            self.storage.games.update(row.id, row.version, GameChange(draw_offer=color))
        except StaleGame:
            return Refused("move.stale")
        return DrawOffered(row, _name(ctx.event), color)

    def board(self, ctx: Ctx, request: GameRef) -> BoardShown | Unresolved:
        """Show a game's board, with its buttons."""
        ref = request.game
        row = self.games.resolve(ctx, ref, mine_only=False, finished_ok=True)
        if not isinstance(row, GameRecord):
            return row
        return BoardShown(row, ctx.now)

    def pdn(self, ctx: Ctx, request: GameRef) -> PdnText | Unresolved:
        """A game as PDN, as text and as a file."""
        ref = request.game
        row = self.games.resolve(ctx, ref, mine_only=False, finished_ok=True)
        if not isinstance(row, GameRecord):
            return row
        return PdnText(row.id, write_pdn(self.games.stored_game(row)))

    def press_game(self, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> GameAnswer | MoveOutcome:
        """A button of a game's board or question: the numbers start with the game and its ply."""
        gid, ply = ids[0], ids[1]
        row = self.games.resolve(ctx, gid)
        # From a button, only the presser needs to hear why it did nothing.
        if isinstance(row, NoGame):
            return dataclasses.replace(row, private=True)
        if isinstance(row, TimedOut):
            return dataclasses.replace(row, private=True)
        if kind is ButtonKind.RESIGN:
            # Only the player who asked, and only while nothing was played since the question.
            asked = self.storage.pending(_resign_key(gid, ctx.event.user_id))
            if not asked or asked["ply"] != ply or row.ply != ply:
                return Refused("resign.not_asked", private=True)
            return self._resign(ctx, row)
        if row.ply != ply:
            if kind is ButtonKind.DRAW:
                return Refused("draw.none", private=True)
            repeat = self._repeated_press(ctx, row, kind, ids)
            if repeat is not None:
                return repeat
            return Refused("button.stale", row, board=True, replaces=True)
        color = self.games.color_of(row, ctx.event.user_id)
        if kind is ButtonKind.DRAW:
            # Only a standing offer from the opponent can be accepted by this button.
            if row.draw_offer in (None, color):
                return Refused("draw.none", private=True)
            return self._end_by_players(ctx, row, self.games.load(row).agree_draw())
        pos = Position.from_fen(row.variant, row.fen)
        if color != pos.turn:
            return Refused("err.not_your_turn", row, private=True)
        legal = pos.legal_moves()
        if kind is ButtonKind.PIECES:
            return PiecesShown(row, ctx.now)
        if kind is ButtonKind.SELECT:
            return PiecePicked(row, ids[2])
        if kind is ButtonKind.DESTINATION:
            matching = [m for m in legal if m.start == ids[2] and m.end == ids[3]]
            if len(matching) == 1:
                return self._play(ctx, row, matching[0], via_button=True)
            if not matching:
                return Refused("button.stale", private=True)
            return PathsOffered(row, tuple(legal), tuple(matching))
        index = ids[2]
        if index >= len(legal):
            return Refused("button.stale", private=True)
        return self._play(ctx, row, legal[index], via_button=True)

    def _repeated_press(self, ctx: Ctx, row: GameRecord, kind: str, ids: list[int]) -> RepeatedPress | None:
        """The answer to a second press of the button that just played this user's move (a double
        tap: both presses left before the first answer arrived), or None for any other old button.

        The board it pressed on already shows the move, so it is not out of date: the answer is the
        same board and words the first press gave."""
        if kind not in (ButtonKind.DESTINATION, ButtonKind.PATH) or ids[1] != row.ply - 1:
            return None
        moves = self.storage.moves(row.id)
        if not moves or moves[-1].ply != row.ply or moves[-1].by_user != ctx.event.user_id:
            return None
        before = (Position.from_fen(row.variant, moves[-2].fen_after) if len(moves) > 1
                  else Position.from_fen(row.variant, row.start_fen) if row.start_fen
                  else Position.start(row.variant))
        legal = before.legal_moves()
        if kind is ButtonKind.DESTINATION:
            pressed = [m for m in legal if (m.start, m.end) == (ids[2], ids[3])]
        else:
            pressed = legal[ids[2]:ids[2] + 1]
        if len(pressed) != 1 or str(pressed[0]) != moves[-1].notation:
            return None
        return RepeatedPress(row, _name(ctx.event), moves[-1].notation, ctx.now)
