"""Presenters: use-case results turned into the replies a chat gets (catalog text, board images,
buttons).  They run after the use case returned, outside its write transaction, so rendering a
board never holds the database's write lock."""

from __future__ import annotations

from bot.i18n import t
from bot.service.chat import boards, present_puzzles
from bot.service.chat.present_games import (
    board_reply,
    bot_name,
    closed_edit,
    name_of,
    names,
    over_text,
    present_game,
    to_move_line,
    turn_ping,
)
from bot.service.chat.wording import illegal_move_text, variant_name
from bot.service.events import Reply
from bot.service.features.common import _ids, reply_flipped
from bot.service.features.results import (
    GameStarted,
    MoveIllegal,
    MoveMade,
    MoveOutcome,
    MoveStale,
)
from bot.service.features.results_games import GameResult
from bot.service.features.results_puzzles import Acted


def replies(lang: str, outcome: MoveOutcome | GameResult | GameStarted | Acted,
            via_button: bool = False) -> list[Reply]:
    """The replies to what a use case of games returned, or a move that answered a puzzle.
    ``via_button``: the request came from a board's button (see ``present_move``)."""
    if isinstance(outcome, Acted):
        return present_puzzles.present(lang, outcome)     # a puzzle answered with /move
    if isinstance(outcome, MoveMade | MoveIllegal | MoveStale):
        return present_move(lang, outcome, via_button)
    if isinstance(outcome, GameStarted):
        return present_game_start(lang, outcome)
    return present_game(lang, outcome)


def present_game_start(lang: str, started: GameStarted) -> list[Reply]:
    """A game that began from a challenge: its board with who plays which side and whose move it
    is, the ping of that player, then the updated messages of the closed challenges."""
    row = started.game
    white, black = names(lang, row)
    lines = [t(lang, "game.started", id=row.id, variant=variant_name(lang, row.variant), white=white, black=black)]
    if started.withdrawn:
        key = "challenge.other_withdrawn" if len(started.withdrawn) == 1 else "challenge.others_withdrawn"
        lines.append(t(lang, key, name=started.challenger_name, ids=_ids(started.withdrawn)))
    lines.append(to_move_line(lang, row, started.now))
    reply = board_reply(lang, row, "\n".join(lines))
    return [reply, *turn_ping(lang, row, started.turn, reply), *(closed_edit(e) for e in started.edits)]


def move_made_text(lang: str, outcome: MoveMade) -> str:
    """What a played move's board says: who played what, then the result or whose turn it is
    (also the web board's answer, which needs the words without the picture)."""
    fresh = outcome.game
    text = t(lang, "move.played", name=outcome.mover, move=str(outcome.played), id=fresh.id)
    if outcome.result is not None:
        return text + "\n" + over_text(lang, fresh, outcome.result)
    if outcome.draw_declined:
        text += "\n" + t(lang, "draw.declined_by_move")
    return text + "\n" + (t(lang, "bot.thinking", bot=bot_name(lang, fresh)) if outcome.bot_next
                          else to_move_line(lang, fresh, outcome.now))


def present_move(lang: str, outcome: MoveOutcome, via_button: bool = False) -> list[Reply]:
    """A move's outcome in words and a board: the new board with what the move did, the result or
    whose turn it is, the capture animation, and the ping of the player to move.  ``via_button``:
    played with a board's buttons, so the new board replaces the pressed one and a refusal is the
    presser's alone (how the move came in is the chat layer's to know, not the use case's)."""
    if isinstance(outcome, MoveIllegal):
        to_move = (name_of(lang, outcome.game, outcome.before.turn) if outcome.game is not None
                   else outcome.to_move)
        text = illegal_move_text(lang, outcome.error, outcome.before, typed=outcome.typed, to_move=to_move)
        return [Reply(text, private=via_button)]
    if isinstance(outcome, MoveStale):
        return [board_reply(lang, outcome.game, t(lang, "move.stale"))]
    assert isinstance(outcome, MoveMade)
    fresh = outcome.game
    reply = board_reply(lang, fresh, move_made_text(lang, outcome), replaces=via_button)
    reply.animation = boards.capture_animation(outcome.before, outcome.played, flipped=reply_flipped(fresh))
    # The opponent hears it is their turn: on the new board, or, when the board was edited in place
    # (an edit notifies no one), in a short message of its own.
    pings = turn_ping(lang, fresh, outcome.turn, None if via_button else reply)
    return [reply, *pings]
