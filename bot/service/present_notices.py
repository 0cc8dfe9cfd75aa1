"""The presenters of the outbox's notifications (``bot.service.notifications``): each turns one
kind into the message it is delivered as, when it is delivered.

What a message shows is what it showed when the notification was written: a game's changing
fields come from the notification (``GameState``), only what a game never changes (its players,
variant, level) is read from storage.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.i18n import t
from bot.rules import Position
from bot.service import boards
from bot.service.events import Mention, Reply
from bot.service.features.common import _stored_result, reply_flipped
from bot.service.notifications import (
    BotMoved,
    LostOnTime,
    Notification,
    PrivateReminder,
    PrivateTurn,
    Reminder,
    TurnPing,
)
from bot.service.present_games import board_reply, bot_name, name_of, names, over_text, to_move_line
from bot.service.wording import duration, reminder
from bot.storage.records import GameRecord


def _named(reply: Reply, mention: Mention | None) -> Reply:
    """``reply`` pinging ``mention`` where its text names them (a ping needs the name to stand on)."""
    if mention is not None and mention.name in reply.text:
        reply.mentions.append(mention)
    return reply


class NoticePresenter:
    """Renders notifications; ``game`` reads a game as it is stored now (its unchanging fields)."""

    def __init__(self, game: Callable[[int], GameRecord]) -> None:
        self.game = game

    def __call__(self, notice: Notification) -> Reply:
        if isinstance(notice, BotMoved):
            return self.bot_moved(notice)
        if isinstance(notice, LostOnTime):
            row = notice.state.on(self.game(notice.game_id))
            return board_reply(notice.lang, row, over_text(notice.lang, row, _stored_result(row)))
        if isinstance(notice, Reminder | PrivateReminder):
            row = self.game(notice.game_id)
            name = name_of(notice.lang, row, notice.color)
            reply = Reply(reminder(notice.lang, name, row.id, notice.left), game_id=row.id)
            return _named(reply, notice.mention) if isinstance(notice, Reminder) else reply
        if isinstance(notice, PrivateTurn):
            white, black = names(notice.lang, self.game(notice.game_id))
            return Reply(t(notice.lang, "turn.private", id=notice.game_id, white=white, black=black,
                           left=duration(notice.lang, notice.left)), game_id=notice.game_id)
        if isinstance(notice, TurnPing):
            return Reply(t(notice.lang, "turn.ping", name=notice.mention.name, id=notice.game_id),
                         mentions=[notice.mention])
        raise ValueError(f"no presenter for {type(notice).__name__}")

    def bot_moved(self, notice: BotMoved) -> Reply:
        lang, row = notice.lang, notice.state.on(self.game(notice.game_id))
        text = t(lang, "bot.played", bot=bot_name(lang, row), move=notice.move, id=row.id)
        if row.status == "finished":
            text += "\n" + over_text(lang, row, _stored_result(row))
        else:
            text += "\n" + to_move_line(lang, row, notice.at)
        reply = board_reply(lang, row, text)
        before = Position.from_fen(row.variant, notice.before)
        reply.animation = boards.capture_animation(before, before.parse_move(notice.move), flipped=reply_flipped(row))
        return _named(reply, notice.mention)
