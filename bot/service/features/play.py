"""Playing: typed moves and buttons, draws, resignation, the board, PDN.

What each returns is typed (``results``, ``results_games``); ``bot.service.chat.present_games`` words it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

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
    _resign_key,
)
from bot.service.features.games import Games
from bot.service.features.identity import Caller
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

    def move(self, caller: Caller, request: MoveRequest) -> MoveOutcome | Unresolved | Acted:
        """Play a move in your game, or answer a puzzle: the one replied to, else, for a user with
        no game here, their open puzzle or the chat's puzzle of the day."""
        ref, text = request.game, request.move
        post = self.puzzles.find_post(request.post) if request.post is not None else None
        mine: list[GameRecord] | None = None
        if post is None and ref is None and not request.aimed:
            # Read once: resolving the game below looks at the same list.
            mine = self.games.my_games(caller)
            if not mine:
                post = self.puzzles.puzzle_for(caller, text=text)
        if post is not None:
            return self.puzzles.answer_puzzle(caller, post, text)
        row = self.games.resolve(caller, ref, mine=mine)
        if not isinstance(row, GameRecord):
            return row
        return self._play(caller, row, text)

    def _play(self, caller: Caller, row: GameRecord, move: str | Move) -> MoveOutcome:
        """Play a move for the caller in ``row``; what happened (a presenter words it)."""
        game = self.games.load(row)
        before = game.position
        color = self.games.color_of(row, caller.user_id)
        typed = move if isinstance(move, str) else str(move)
        try:
            played = game.play(move, by=color)
        except IllegalMove as err:
            mover = row.white_name if before.turn == Color.WHITE else row.black_name
            return MoveIllegal(err, before, typed[:40], mover, row)
        # Moving answers an opponent's draw offer with a no; one's own offer stands.
        draw_offer = row.draw_offer if row.draw_offer == color else None
        bot_next = game.result is None and self.games.bot_to_move(row, game.position)
        # The bot's clock does not run: it answers as soon as it has thought.
        deadline = None if bot_next else caller.at + row.move_seconds
        try:
            fresh = self.games.write_move(row, game, played, caller.user_id, caller.at, draw_offer, deadline,
                                          caller.origin)
        except StaleGame:
            return MoveStale(self.games.game_row(row.id))
        declined = game.result is None and draw_offer is None and bool(row.draw_offer) and row.draw_offer != color
        # The opponent hears it is their turn (privately, if they asked for that, and then here not at all).
        turn = self.games.turn_notice(fresh, now=caller.at)
        if bot_next:
            # After the move is committed: the engine's answer is written against the stored game.
            self.opponent.think(fresh)
        return MoveMade(fresh, before, played, caller.name, game.result, declined, bot_next, caller.at, turn)

    def resign(self, caller: Caller, request: GameRef) -> GameAnswer:
        """Resign your game, once confirmed: the Resign button of the question, or /resign again
        within a minute (a typo such as '/resign #2' for '#3' must not end a game at once).

        The question is kept in storage per game and player with the ply it was asked at, so it
        lapses when a move is played, and a restart within the minute still honours it."""
        ref = request.game
        row = self.games.resolve(caller, ref)
        if not isinstance(row, GameRecord):
            return row
        key = _resign_key(row.id, caller.user_id)
        asked = self.storage.settings.pending(key)
        # The minute is between the two messages as the user sent them: in a throttled group the
        # second may be handled long after it was typed.
        if asked and asked["ply"] == row.ply and 0 <= caller.sent - asked["at"] <= RESIGN_CONFIRM_SECONDS:
            return self._resign(caller, row)
        self.storage.settings.set_pending(key, {"ply": row.ply, "at": caller.sent})
        return ResignAsked(row, caller.name, self.games.color_of(row, caller.user_id))

    def _resign(self, caller: Caller, row: GameRecord) -> GameEnded | MoveStale:
        color = self.games.color_of(row, caller.user_id)
        assert color is not None              # resolve gives a player only their own games
        # One unit with the result: a result that loses a race (a tournament's round ended by two
        # games at once) is run again with the question still standing, not asked anew.
        with self.storage.transaction():
            self.storage.settings.drop_pending(_resign_key(row.id, caller.user_id))
            return self._end_by_players(caller, row, self.games.load(row).resign(color))

    def _end_by_players(self, caller: Caller, row: GameRecord, result: Result) -> GameEnded | MoveStale:
        try:
            return GameEnded(self.games.finish_game(row, result, caller.at, origin=caller.origin), result)
        except StaleGame:
            return MoveStale(self.games.game_row(row.id))

    def draw(self, caller: Caller, request: GameRef) -> GameAnswer:
        """Offer a draw, or accept the opponent's offer."""
        ref = request.game
        row = self.games.resolve(caller, ref)
        if not isinstance(row, GameRecord):
            return row
        if row.bot_level is not None:
            return self.opponent.answer_draw(caller, row)
        color = self.games.color_of(row, caller.user_id)
        if row.draw_offer and row.draw_offer != color:
            return self._end_by_players(caller, row, self.games.load(row).agree_draw())
        if row.draw_offer == color:
            return Refused("draw.already")
        try:
            self.storage.games.update(row.id, row.version, GameChange(draw_offer=color))
        except StaleGame:
            return Refused("move.stale")
        return DrawOffered(row, caller.name, color)

    def board(self, caller: Caller, request: GameRef) -> BoardShown | Unresolved:
        """Show a game's board, with its buttons."""
        ref = request.game
        row = self.games.resolve(caller, ref, mine_only=False, finished_ok=True)
        if not isinstance(row, GameRecord):
            return row
        return BoardShown(row, caller.at)

    def pdn(self, caller: Caller, request: GameRef) -> PdnText | Unresolved:
        """A game as PDN, as text and as a file."""
        ref = request.game
        row = self.games.resolve(caller, ref, mine_only=False, finished_ok=True)
        if not isinstance(row, GameRecord):
            return row
        return PdnText(row.id, write_pdn(self.games.stored_game(row)))

    # -- the buttons of a game's board and questions (decoded by the chat layer) --------------------------

    def confirm_resign(self, caller: Caller, game: int, ply: int) -> GameAnswer:
        """The Resign button of the question asked at ``ply``: only the player who asked, and only
        while nothing was played since."""
        row = self._pressed_game(caller, game)
        if not isinstance(row, GameRecord):
            return row
        asked = self.storage.settings.pending(_resign_key(game, caller.user_id))
        if not asked or asked["ply"] != ply or row.ply != ply:
            return Refused("resign.not_asked", private=True)
        return self._resign(caller, row)

    def accept_draw(self, caller: Caller, game: int, ply: int) -> GameAnswer:
        """The Accept draw button under the board of ``ply``: only a standing offer from the
        opponent can be accepted so."""
        row = self._pressed_game(caller, game)
        if not isinstance(row, GameRecord):
            return row
        if row.ply != ply or row.draw_offer in (None, self.games.color_of(row, caller.user_id)):
            return Refused("draw.none", private=True)
        return self._end_by_players(caller, row, self.games.load(row).agree_draw())

    def show_pieces(self, caller: Caller, game: int, ply: int) -> GameAnswer:
        """The pieces that can move, to choose one (the board of ``ply``)."""
        row = self._to_move(caller, game, ply)
        return PiecesShown(row, caller.at) if isinstance(row, GameRecord) else row

    def pick_piece(self, caller: Caller, game: int, ply: int, square: int) -> GameAnswer:
        """The piece on ``square`` chosen: its destinations are offered."""
        row = self._to_move(caller, game, ply)
        return PiecePicked(row, square) if isinstance(row, GameRecord) else row

    def choose_destination(self, caller: Caller, game: int, ply: int, start: int,
                           end: int) -> GameAnswer | MoveOutcome:
        """The move from ``start`` to ``end``: played when only one move goes so, else its paths
        are offered."""
        def pressed(legal: list[Move]) -> list[Move]:
            return [m for m in legal if (m.start, m.end) == (start, end)]
        row = self._to_move(caller, game, ply, pressed)
        if not isinstance(row, GameRecord):
            return row
        legal = Position.from_fen(row.variant, row.fen).legal_moves()
        matching = pressed(legal)
        if len(matching) == 1:
            return self._play(caller, row, matching[0])
        if not matching:
            return Refused("button.stale", private=True)
        return PathsOffered(row, tuple(legal), tuple(matching))

    def choose_path(self, caller: Caller, game: int, ply: int, index: int) -> GameAnswer | MoveOutcome:
        """The legal move number ``index`` of the board of ``ply`` (one of several paths)."""
        def pressed(legal: list[Move]) -> list[Move]:
            return legal[index:index + 1]
        row = self._to_move(caller, game, ply, pressed)
        if not isinstance(row, GameRecord):
            return row
        legal = Position.from_fen(row.variant, row.fen).legal_moves()
        if index >= len(legal):
            return Refused("button.stale", private=True)
        return self._play(caller, row, legal[index])

    def play_path(self, caller: Caller, game: int, path: tuple[int, ...],
                  ply: int | None = None) -> MoveOutcome | Unresolved | Refused:
        """Play the legal move that goes along ``path`` in game #``game`` (a web board's tap; at
        ``ply``, when the board it was tapped on says): a path that is no legal move goes to the
        rules as typed, so they say why."""
        row = self.games.resolve(caller, game)
        if not isinstance(row, GameRecord):
            return row
        if ply is not None and ply != row.ply:
            return Refused("move.stale")
        chosen = [m for m in Position.from_fen(row.variant, row.fen).legal_moves() if m.path == path]
        move: str | Move = chosen[0] if chosen else ("-" if len(path) == 2 else "x").join(map(str, path))
        return self._play(caller, row, move)

    def _pressed_game(self, caller: Caller, game: int) -> GameRecord | Unresolved:
        """The game a button names; from a button, only the presser needs to hear why it did nothing."""
        row = self.games.resolve(caller, game)
        if isinstance(row, NoGame | TimedOut):
            return dataclasses.replace(row, private=True)
        return row

    def _to_move(self, caller: Caller, game: int, ply: int,
                 pressed: Callable[[list[Move]], list[Move]] | None = None) -> GameRecord | GameAnswer:
        """The game of a move button pressed on the board of ``ply``, when the presser is to move
        there; else the answer (``pressed``: the moves the button plays, to know a double tap)."""
        row = self._pressed_game(caller, game)
        if not isinstance(row, GameRecord):
            return row
        if row.ply != ply:
            repeat = None if pressed is None else self._repeated_press(caller, row, ply, pressed)
            if repeat is not None:
                return repeat
            return Refused("button.stale", row, board=True, replaces=True)
        if self.games.color_of(row, caller.user_id) != Position.from_fen(row.variant, row.fen).turn:
            return Refused("err.not_your_turn", row, private=True)
        return row

    def _repeated_press(self, caller: Caller, row: GameRecord, ply: int,
                        pressed: Callable[[list[Move]], list[Move]]) -> RepeatedPress | None:
        """The answer to a second press of the button that just played this user's move (a double
        tap: both presses left before the first answer arrived), or None for any other old button.

        The board it pressed on already shows the move, so it is not out of date: the answer is the
        same board and words the first press gave."""
        if ply != row.ply - 1:
            return None
        moves = self.storage.games.moves(row.id)
        if not moves or moves[-1].ply != row.ply or moves[-1].by_user != caller.user_id:
            return None
        before = (Position.from_fen(row.variant, moves[-2].fen_after) if len(moves) > 1
                  else Position.from_fen(row.variant, row.start_fen) if row.start_fen
                  else Position.start(row.variant))
        played = pressed(before.legal_moves())
        if len(played) != 1 or str(played[0]) != moves[-1].notation:
            return None
        return RepeatedPress(row, caller.name, moves[-1].notation, caller.at)
