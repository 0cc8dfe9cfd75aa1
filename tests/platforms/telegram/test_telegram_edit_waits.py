"""A board edit that flood control holds back longer than the limiter waits inline (issue 29, item
3): before, the edit fell back to posting the board anew (queued in the outbox for after the wait),
and the old board kept live buttons next to the new one.  Now the edit waits for its turn (up to
MAX_FLOOD_WAIT) and the board is edited in place: one board per game with buttons.

Through the ``tg`` harness; the adapter's waits are real here (on Telegram's sped-up clock)."""

from __future__ import annotations

from telegram_fake_api import GROUP
from tg_helpers import telegram_sleep

CHAT = GROUP["id"]


def live_boards(tg, game: int) -> list[int]:
    """The bot's photos in the group whose buttons still play ``game``."""
    return [m.message_id for m in tg.http.bot_messages(CHAT, "photo")
            if any(data.split(":")[1:2] == [str(game)] for data in m.buttons() if data[:2] in ("s:", "d:", "m:"))]


async def test_a_board_edit_held_back_for_longer_than_the_inline_wait_waits_for_its_turn(tg):
    await tg.say("ana", "/new italian white 5m")
    await tg.say("bob", "/accept")
    board = tg.last_board()
    photos = len(tg.http.named("sendPhoto", ok_only=True))
    tg.adapter.sleep = telegram_sleep               # the harness records waits; this one is waited
    tg.http.flood(CHAT, 8)                          # longer than the limiter waits inline (5 s)
    tg.expect_refusals(0)
    await tg.press("ana", "s:1:0:22", message_id=board.message_id)
    edits = tg.http.named("editMessageMedia", ok_only=True)
    assert edits and int(edits[-1].wire["message_id"]) == board.message_id
    # Before: "sending it anew" (a new board queued in the outbox, the old one's buttons live).
    assert len(tg.http.named("sendPhoto", ok_only=True)) == photos
    assert tg.storage.find_outbox(status="pending") == []
    assert live_boards(tg, 1) == [board.message_id]
    assert "d:1:0:22:18" in tg.http.messages[(CHAT, board.message_id)].buttons()
