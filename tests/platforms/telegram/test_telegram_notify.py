"""Telling the player to move on Telegram (issue 15, item 14), through the real python-telegram-bot
and the strict fake: a text mention of that user alone on a typed move's board, a short pinging
message after a button move (the board edit notifies no one), the bot's move and reminders through
the outbox; /notify on sends it to the user's private chat instead, back to the group ping when the
user never started the bot."""

from __future__ import annotations

import time

from catalog_text import to_move
from telegram_fake_api import GROUP, USERS

from bot.i18n import t

CHAT = GROUP["id"]
BOB = USERS["bob"]["id"]
ANA = USERS["ana"]["id"]


async def english(tg) -> None:
    """The group speaks English (Ana, an admin, says so; her client is Spanish)."""
    tg.http.admins.add((CHAT, ANA))
    await tg.say("ana", "/lang en")


async def started(tg) -> None:
    """Ana (white) against Bob, italian, in English; Ana to move."""
    await english(tg)
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")


def name_at(text: str, name: str, color: str) -> int:
    """Where ``text``'s to-move line names the player (``color``: white or black)."""
    found = to_move("en", name, color).search(text)
    assert found is not None, text
    return found.start() + found.group(0).index(name)

def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


async def test_a_typed_move_pings_only_the_player_to_move_on_the_board(tg):
    await started(tg)
    await tg.say("ana", "/m 22-18")
    board = tg.last_board()
    assert tg.http.notified(board) == [BOB]
    entity = board.extra["caption_entities"][0]
    caption = board.text
    # The mention covers Bob's name where the to-move line names him (UTF-16 offsets).
    at = name_at(caption, "Bob", "black")
    assert (entity["offset"], entity["length"]) == (utf16(caption[:at]), 3)
    assert "parse_mode" not in tg.http.named("sendPhoto")[-1].wire


async def test_a_name_after_non_bmp_characters_is_pinged_at_its_utf16_offset(tg):
    await english(tg)
    dice = dict(USERS["ana"], first_name="Ana 🎲♛")
    await tg.update(message=tg.http.incoming(GROUP, dice, "/new italian white"))
    await tg.say("bob", "/accept")
    await tg.update(message=tg.http.incoming(GROUP, dice, "/m 22-18"))
    board = tg.last_board()
    assert "🎲" in board.text[:name_at(board.text, "Bob", "black")]
    entity = board.extra["caption_entities"][0]
    units = board.text.encode("utf-16-le")
    named = units[2 * entity["offset"]:2 * (entity["offset"] + entity["length"])].decode("utf-16-le")
    assert named == "Bob" and tg.http.notified(board) == [BOB]


async def test_a_button_move_posts_its_board_anew_with_the_ping(tg):
    # An edit notifies no one, and an edit and a ping would be two of the group's posts: the
    # move's board goes out as a new message that pings Bob (issue 29, item 6).
    await started(tg)
    await tg.press("ana", "s:1:0:22")
    edits, texts = len(tg.http.named("editMessageMedia")), len(tg.http.named("sendMessage"))
    await tg.press("ana", "d:1:0:22:18")
    assert len(tg.http.named("editMessageMedia")) == edits and len(tg.http.named("sendMessage")) == texts
    board = tg.http.bot_messages(CHAT, "photo")[-1]
    assert "22-18" in board.text and tg.http.notified(board) == [BOB]


async def test_a_reminder_from_the_outbox_pings_the_player_to_move(tg):
    now = [time.time()]
    tg.service.clock = lambda: now[0]
    await english(tg)
    await tg.say("ana", "/new italian white 1h")
    await tg.say("bob", "/accept")
    now[0] += 55 * 60
    assert await tg.adapter.delivery_round() == 1
    reminder = tg.http.bot_messages(CHAT, "text")[-1]
    assert reminder.text.startswith("Ana: 5m left")
    assert tg.http.notified(reminder) == [ANA]


async def test_notify_on_sends_the_turn_to_the_private_chat_instead(tg):
    await started(tg)
    private = tg.http.start_private("bob")
    await tg.say("bob", "/start", chat=private)
    await tg.say("bob", "/notify on")
    await tg.say("ana", "/m 22-18")
    assert tg.http.notified(tg.last_board()) == []
    assert await tg.adapter.delivery_round() == 1
    notice = tg.http.bot_messages(BOB, "text")[-1]
    assert notice.text == t("en", "turn.private", id=1, white="Ana", black="Bob", left="1d")
    # Nobody is pinged in the group.
    assert all(tg.http.notified(m) == [] for m in tg.http.bot_messages(CHAT)[-2:])


async def test_notify_on_without_starting_the_bot_falls_back_to_the_group_ping(tg):
    await started(tg)
    await tg.say("bob", "/notify on")
    notify_answer = tg.http.named("sendMessage")[-1].params["text"]
    assert "https://t.me/DraughtsBot?start=notify" in notify_answer
    await tg.say("ana", "/m 22-18")
    tg.expect_refusals(1)           # the private message: Bob never started the bot
    await tg.adapter.delivery_round()
    refused = tg.http.refused(injected=False)[-1]
    assert refused.status == 403 and int(refused.params["chat_id"]) == BOB
    await tg.adapter.delivery_round()
    ping = tg.http.bot_messages(CHAT, "text")[-1]
    assert ping.text == t("en", "turn.ping", name="Bob", id=1)
    assert tg.http.notified(ping) == [BOB]
    assert tg.storage.notify_setting("telegram", str(BOB)).unreachable


# -- a closed challenge's buttons go (issue 15, item 15) ---------------------------------------------------


async def test_an_accepted_challenge_loses_its_buttons(tg):
    await english(tg)
    await tg.say("ana", "/new italian white")
    challenge = tg.http.bot_messages(CHAT, "text")[-1]
    assert challenge.buttons() == ["acc:1"]
    await tg.say("bob", "/accept")
    # Updated with the answer, not later through the outbox.
    assert await tg.adapter.delivery_round() == 0
    updated = tg.http.messages[(CHAT, challenge.message_id)]
    assert updated.markup is None and updated.buttons() == []
    assert updated.text.endswith(t("en", "challenge.was_accepted", by="Bob", game=1))
    assert tg.http.named("editMessageText")[-1].status == 200


async def test_a_withdrawn_challenge_whose_message_was_deleted_is_left_alone(tg):
    await english(tg)
    await tg.say("ana", "/new @bob")
    challenge = tg.http.bot_messages(CHAT, "text")[-1]
    assert challenge.buttons() == ["acc:1", "dec:1"]
    del tg.http.messages[(CHAT, challenge.message_id)]        # an admin deleted it
    tg.expect_refusals(1)
    await tg.say("ana", "/cancel")
    assert "not found" in tg.http.named("editMessageText")[-1].error
    # Settled: not retried later, and the chat is not taken for gone.
    assert await tg.adapter.delivery_round() == 0 and tg.storage.find_outbox() == []
    assert "Withdrawn" not in tg.http.named("sendMessage")[-1].params["text"]


async def test_a_text_board_where_photos_are_forbidden_still_pings_the_player_to_move(tg):
    await started(tg)
    tg.http.restrict(CHAT, "photos")
    await tg.say("ana", "/m 22-18")
    board = [m for m in tg.http.bot_messages(CHAT, "text") if m.buttons()][-1]
    assert tg.http.notified(board) == [BOB]
    mention = next(e for e in board.extra["entities"] if e["type"] == "text_mention")
    at = name_at(board.text, "Bob", "black")
    assert (mention["offset"], mention["length"]) == (utf16(board.text[:at]), 3)
    assert any(e["type"] == "pre" for e in board.extra["entities"])        # the board drawn in text
