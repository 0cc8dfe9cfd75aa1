"""Playing: typed moves and buttons, draws, resignation, the board, PDN."""

from __future__ import annotations

from bot.i18n import t
from bot.rules import (
    Color,
    IllegalMove,
    Move,
    Position,
    Result,
    write_pdn,
)
from bot.service import boards
from bot.service.commands import (
    game_ref,
)
from bot.service.events import Button, Reply
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import (
    RESIGN_CONFIRM_SECONDS,
    Ctx,
    _last_move,
    _name,
    _resign_key,
    _rows,
    reply_flipped,
)
from bot.service.features.games import Games
from bot.service.features.opponent import Opponent
from bot.service.features.puzzles import Puzzles
from bot.service.features.results import MoveIllegal, MoveMade, MoveOutcome, MoveRequest, MoveStale
from bot.service.features.results_puzzles import Acted
from bot.service.registry import ButtonKind, action
from bot.service.wording import to_name
from bot.storage import StaleGame
from bot.storage.records import GameRecord


class Play(UseCase):
    """Playing: typed moves and buttons, draws, resignation, the board, PDN."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games, opponent: Opponent, puzzles: Puzzles) -> None:
        super().__init__(runtime, outlet)
        self.games = games
        self.opponent = opponent
        self.puzzles = puzzles

    def move(self, ctx: Ctx, request: MoveRequest) -> list[Reply] | MoveOutcome | Acted:
        """Play a move in your game, or answer a puzzle: the one replied to, else, for a user with
        no game here, their open puzzle or the chat's puzzle of the day."""
        ref, text = request.game, request.move
        post = self.puzzles.puzzle_reply_target(ctx)
        if post is None and ref is None and not self.games.my_games(ctx) and not ctx.event.reply_to:
            post = self.puzzles.puzzle_for(ctx, text=text)
        if post is not None:
            return self.puzzles.answer_puzzle(ctx, post, text)
        row, problem = self.games.resolve(ctx, ref)
        if row is None:
            return problem
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
            return MoveIllegal(err, before, typed[:40], self.games.name_of(ctx.lang, row, before.turn), via_button)
        # Moving answers an opponent's draw offer with a no; one's own offer stands.
        draw_offer = row.draw_offer if row.draw_offer == color else None
        bot_next = game.result is None and self.games.bot_to_move(row, game.position)
        # The bot's clock does not run: it answers as soon as it has thought.
        deadline = None if bot_next else ctx.now + row.move_seconds
        try:
            fresh = self.games.write_move(row, game, played, ctx.event.user_id, ctx.now, draw_offer, deadline)
        except StaleGame:
            return MoveStale(self.storage.game(row.id))
        declined = game.result is None and draw_offer is None and bool(row.draw_offer) and row.draw_offer != color
        # The opponent hears it is their turn (privately, if they asked for that, and then here not at all).
        turn = self.games.turn_notice(fresh, now=ctx.now)
        if bot_next:
            # After the move is committed: the engine's answer is written against the stored game.
            self.opponent.think(fresh)
        return MoveMade(fresh, before, played, _name(ctx.event), game.result, declined, bot_next, via_button, ctx.now,
                        turn)

    def cmd_resign(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Resign your game, once confirmed: the Resign button of the question, or /resign again
        within a minute (a typo such as '/resign #2' for '#3' must not end a game at once).

        The question is kept in storage per game and player with the ply it was asked at, so it
        lapses when a move is played, and a restart within the minute still honours it."""
        ref, _ = game_ref(args)
        row, problem = self.games.resolve(ctx, ref)
        if row is None:
            return problem
        key = _resign_key(row.id, ctx.event.user_id)
        asked = self.storage.pending(key)
        # The minute is between the two messages as the user sent them: in a throttled group the
        # second may be handled long after it was typed.
        if asked and asked["ply"] == row.ply and 0 <= ctx.sent - asked["at"] <= RESIGN_CONFIRM_SECONDS:
            return self._resign(ctx, row)
        self.storage.set_pending(key, {"ply": row.ply, "at": ctx.sent})
        button = Button(t(ctx.lang, "button.resign"), action(ButtonKind.RESIGN, row.id, row.ply),
                        f"/resign #{row.id}", style="stop")
        mine = self.games.color_of(row, ctx.event.user_id)
        other = self.games.name_of(ctx.lang, row, Color.BLACK if mine == Color.WHITE else Color.WHITE)
        text = t(ctx.lang, "resign.confirm", name=_name(ctx.event), id=row.id, other=other)
        return [Reply(text, buttons=[[button]])]

    def _resign(self, ctx: Ctx, row: GameRecord) -> list[Reply]:
        self.storage.drop_pending(_resign_key(row.id, ctx.event.user_id))
        result = self.games.load(row).resign(self.games.color_of(row, ctx.event.user_id))
        return self._end_by_players(ctx, row, result)

    def _end_by_players(self, ctx: Ctx, row: GameRecord, result: Result) -> list[Reply]:
        try:
            self.games.finish_game(row, result, ctx.now)
        except StaleGame:
            return [self.games.board_reply(ctx.lang, self.storage.game(row.id), t(ctx.lang, "move.stale"))]
        over = self.games.over_text(ctx.lang, row, result)
        return [self.games.board_reply(ctx.lang, self.storage.game(row.id), over)]

    def cmd_draw(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Offer a draw, or accept the opponent's offer."""
        ref, _ = game_ref(args)
        row, problem = self.games.resolve(ctx, ref)
        if row is None:
            return problem
        if row.bot_level is not None:
            return self.opponent.answer_draw(ctx, row)
        color = self.games.color_of(row, ctx.event.user_id)
        if row.draw_offer and row.draw_offer != color:
            return self._end_by_players(ctx, row, self.games.load(row).agree_draw())
        if row.draw_offer == color:
            return [Reply(t(ctx.lang, "draw.already"))]
        try:
            self.storage.update_game(row.id, row.version, {"draw_offer": color})
        except StaleGame:
            return [Reply(t(ctx.lang, "move.stale"))]
        other = self.games.name_of(ctx.lang, row, Color.BLACK if color == Color.WHITE else Color.WHITE)
        return [Reply(t(ctx.lang, "draw.offered", name=_name(ctx.event), other=other, id=row.id),
                      buttons=[[Button(t(ctx.lang, "button.accept_draw"),
                                       action(ButtonKind.DRAW, row.id, row.ply),
                                       f"/draw #{row.id}", style="go")]])]

    def cmd_board(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Show a game's board, with its buttons."""
        ref, _ = game_ref(args)
        row, problem = self.games.resolve(ctx, ref, mine_only=False, finished_ok=True)
        if row is None:
            return problem
        if row.status == "active":
            text = self.games.game_line(ctx.lang, row) + "\n" + self.games.to_move_line(ctx.lang, row, ctx.now)
        else:
            text = self.games.over_text(ctx.lang, row)
        return [self.games.board_reply(ctx.lang, row, text)]

    def cmd_pdn(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """A game as PDN, as text and as a file."""
        ref, _ = game_ref(args)
        row, problem = self.games.resolve(ctx, ref, mine_only=False, finished_ok=True)
        if row is None:
            return problem
        text = write_pdn(self.games.stored_game(row))
        return [Reply(text, document=(f"game-{row.id}.pdn", text.encode("utf-8")))]

    def press_game(self, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply] | MoveOutcome:
        """A button of a game's board or question: the numbers start with the game and its ply."""
        gid, ply = ids[0], ids[1]
        row, problem = self.games.resolve(ctx, gid)
        if row is None:
            for reply in problem:
                reply.private = True
            return problem
        if kind is ButtonKind.RESIGN:
            # Only the player who asked, and only while nothing was played since the question.
            asked = self.storage.pending(_resign_key(gid, ctx.event.user_id))
            if not asked or asked["ply"] != ply or row.ply != ply:
                return [Reply(t(ctx.lang, "resign.not_asked"), private=True)]
            return self._resign(ctx, row)
        if row.ply != ply:
            if kind is ButtonKind.DRAW:
                return [Reply(t(ctx.lang, "draw.none"), private=True)]
            repeat = self._repeated_press(ctx, row, kind, ids)
            if repeat is not None:
                return [repeat]
            return [self.games.board_reply(ctx.lang, row, t(ctx.lang, "button.stale"), replaces=True)]
        color = self.games.color_of(row, ctx.event.user_id)
        if kind is ButtonKind.DRAW:
            # Only a standing offer from the opponent can be accepted by this button.
            if row.draw_offer in (None, color):
                return [Reply(t(ctx.lang, "draw.none"), private=True)]
            return self._end_by_players(ctx, row, self.games.load(row).agree_draw())
        pos = Position.from_fen(row.variant, row.fen)
        if color != pos.turn:
            mover = self.games.name_of(ctx.lang, row, pos.turn)
            return [Reply(t(ctx.lang, "err.not_your_turn", name=mover, to_name=to_name(ctx.lang, mover)), private=True)]
        legal = pos.legal_moves()
        if kind is ButtonKind.PIECES:
            line = self.games.to_move_line(ctx.lang, row, ctx.now)
            return [self.games.board_reply(ctx.lang, row, line, replaces=True)]
        if kind is ButtonKind.SELECT:
            return [self._select_reply(ctx.lang, row, pos, ids[2])]
        if kind is ButtonKind.DESTINATION:
            matching = [m for m in legal if m.start == ids[2] and m.end == ids[3]]
            if len(matching) == 1:
                return self._play(ctx, row, matching[0], via_button=True)
            if not matching:
                return [Reply(t(ctx.lang, "button.stale"), private=True)]
            return [self._paths_reply(ctx.lang, row, pos, legal, matching)]
        index = ids[2]
        if index >= len(legal):
            return [Reply(t(ctx.lang, "button.stale"), private=True)]
        return self._play(ctx, row, legal[index], via_button=True)

    def _repeated_press(self, ctx: Ctx, row: GameRecord, kind: str, ids: list[int]) -> Reply | None:
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
        text = t(ctx.lang, "move.played", name=_name(ctx.event), move=moves[-1].notation, id=row.id)
        text += "\n" + self.games.to_move_line(ctx.lang, row, ctx.now)
        return self.games.board_reply(ctx.lang, row, text, replaces=True)

    def _select_reply(self, lang: str, row: GameRecord, pos: Position, square: int) -> Reply:
        moves = [m for m in pos.legal_moves() if m.start == square]
        if not moves:
            return Reply(t(lang, "button.stale"), private=True)
        ends = sorted({m.end for m in moves})
        # The opponent's last move stays drawn while the player chooses.
        view = boards.board_view(pos, *_last_move(row), dots=ends, selected=square, flipped=reply_flipped(row))
        gid, ply = row.id, row.ply
        buttons = []
        for end in ends:
            same = [m for m in moves if m.end == end]
            command = f"/m {same[0]}" if len(same) == 1 else None
            buttons.append(Button(f"{square}→{end}", action(ButtonKind.DESTINATION, gid, ply, square, end), command))
        rows = _rows(buttons, reserve=1)
        rows.append([Button(t(lang, "button.back"), action(ButtonKind.PIECES, gid, ply), style="back")])
        return Reply(t(lang, "select.piece", square=square), image=boards.png(view), board_text=boards.text(view),
                     buttons=rows, replaces_board=True, game_id=gid)

    def _paths_reply(self, lang: str, row: GameRecord, pos: Position, legal: list[Move],
                     matching: list[Move]) -> Reply:
        gid, ply = row.id, row.ply
        # Button n is the route drawn with number n; no more routes are drawn than fit as buttons.
        buttons = [Button(f"{n}: {m}", action(ButtonKind.PATH, gid, ply, legal.index(m)), f"/m {m}")
                   for n, m in enumerate(matching, 1)]
        rows = _rows(buttons, reserve=1)
        shown = matching[:sum(len(r) for r in rows)]
        rows.append([Button(t(lang, "button.back"), action(ButtonKind.PIECES, gid, ply), style="back")])
        view = boards.board_view(pos, *_last_move(row), dots=[matching[0].end], selected=matching[0].start,
                                 flipped=reply_flipped(row), routes=[m.path for m in shown])
        return Reply(t(lang, "select.path"), image=boards.png(view), board_text=boards.text(view), buttons=rows,
                     replaces_board=True, game_id=gid)
