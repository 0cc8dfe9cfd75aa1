"""The board always reaches the chat: button edits Telegram accepts, a new board when an edit is
refused, bounded retries of transient failures, and exactly one answer to every button press.

Everything runs against the strict fake Bot API (telegram_fake_api) through the ``tg`` fixture,
which also checks after each test that every press was answered exactly once and that the fake
refused nothing the test did not provoke."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest
from telegram_fake_api import GROUP
from tg_helpers import SPEED, limiter_waits

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CHAT = GROUP["id"]


async def started(tg):
    """Ana (white, Spanish client) against Bob, Italian draughts, 5 minutes a move; the first board."""
    await tg.say("ana", "/new italian white 5m")
    await tg.say("bob", "/accept")
    return tg.last_board()


def buttons(call) -> list[str]:
    return [b["callback_data"] for row in json.loads(call.wire["reply_markup"])["inline_keyboard"] for b in row]


def board_rows(tg) -> list[tuple[str, int]]:
    return tg.storage.board_messages("telegram", str(CHAT))


def assert_attached_png(tg, call) -> None:
    """An editMessageMedia Telegram accepts: the InputMedia names its upload, and only that one."""
    assert call.status == 200, call.error
    media = tg.http.media_json(call)
    assert media["type"] == "photo"
    assert media["media"].startswith("attach://")
    name = media["media"].removeprefix("attach://")
    assert set(call.files) == {name}
    assert call.files[name][:8] == PNG_MAGIC


# -- editMessageMedia carries the board by attach:// reference ---------------------------------------------


async def test_every_button_step_is_an_edit_telegram_accepts(tg):
    board = await started(tg)
    steps = ["s:1:0:22", "p:1:0", "s:1:0:22", "d:1:0:22:18"]
    for data in steps:
        await tg.press("ana", data, message_id=board.message_id)
    edits = tg.http.named("editMessageMedia")
    assert len(edits) == len(steps) - 1          # the move's board is a new message that pings
    for call in edits:
        assert_attached_png(tg, call)
        assert int(call.wire["message_id"]) == board.message_id and int(call.wire["chat_id"]) == CHAT
    # The move is on the new board, with Bob's pieces as its buttons.
    shown = tg.http.bot_messages(CHAT, "photo")[-1]
    assert "Ana jugó 22-18" in shown.text and shown.buttons()[0].startswith("d:1:1:")
    assert shown.media_digest != board.media_digest
    assert len(tg.http.named("sendPhoto")) == 2


async def test_a_stale_board_is_refreshed_in_place(tg):
    board = await started(tg)
    await tg.say("ana", "/m 22-18")                                 # a typed move: a new board is sent
    await tg.press("ana", "s:1:0:21", message_id=board.message_id)  # a button on the old board
    edit = tg.http.named("editMessageMedia")[-1]
    assert_attached_png(tg, edit)
    assert int(edit.wire["message_id"]) == board.message_id
    assert "desactualizado" in tg.http.messages[(CHAT, board.message_id)].text
    assert buttons(edit)[0].startswith("d:1:1:")


# -- an edit that is refused: the board is sent anew ---------------------------------------------------------


@pytest.mark.parametrize("description", ["Bad Request: message to edit not found",
                                         "Bad Request: message can't be edited"])
async def test_a_refused_edit_after_a_button_move_sends_the_board(tg, description):
    board = await started(tg)
    tg.http.fail("editMessageMedia", 400, description)
    await tg.press("ana", "d:1:0:22:18", message_id=board.message_id)
    assert tg.storage.game(1).ply == 1
    new = tg.http.named("sendPhoto", ok_only=True)[-1]
    assert len(tg.http.named("sendPhoto", ok_only=True)) == 2
    assert "Ana jugó 22-18" in new.params["caption"] and buttons(new)[0].startswith("d:1:1:")
    shown = tg.last_board()
    assert shown.message_id != board.message_id
    # The new message is the game's board now: Bob answers by replying to it with a bare move.
    assert board_rows(tg)[-1] == (str(shown.message_id), 1)
    await tg.say("bob", "11-15", reply_to=shown.message_id)
    assert tg.storage.game(1).ply == 2


async def test_a_deleted_board_gets_a_new_one(tg):
    board = await started(tg)
    query = tg.http.callback_query(GROUP, {"id": 1, "is_bot": False, "first_name": "Ana", "username": "ana",
                                           "language_code": "es"}, "s:1:0:22", board.message_id)
    del tg.http.messages[(CHAT, board.message_id)]                  # an admin removed the board meanwhile
    tg.expect_refusals(1)                                           # the fake: "message to edit not found"
    await tg.update(callback_query=query)
    assert tg.http.named("editMessageMedia")[-1].error == "Bad Request: message to edit not found"
    new = tg.http.named("sendPhoto", ok_only=True)[-1]
    assert buttons(new)[0] == "d:1:0:22:18"                         # the selection, on a new board


async def test_a_forbidden_edit_is_logged_and_not_chased(tg, caplog):
    board = await started(tg)
    tg.http.fail("editMessageMedia", 403, "Forbidden: bot was kicked from the supergroup chat")
    tg.http.kick(CHAT)
    calls = len(tg.http.calls)
    with caplog.at_level(logging.INFO, logger="bot.platforms.telegram"):
        await tg.press("ana", "s:1:0:22", message_id=board.message_id)
    # The board is not sent anew.
    assert [c.method for c in tg.http.calls[calls:]] == ["answerCallbackQuery", "editMessageMedia"]
    assert tg.http.calls[-1].status == 403
    assert any(str(CHAT) in r.getMessage() and r.levelno == logging.INFO for r in caplog.records)


# -- transient failures are retried, boundedly ---------------------------------------------------------------


async def test_a_typed_move_survives_a_bad_gateway(tg):
    await started(tg)
    tg.http.fail("sendPhoto", 502, "Bad Gateway")
    await tg.say("ana", "/m 22-18")
    delivered = tg.http.named("sendPhoto", ok_only=True)
    assert len(delivered) == 2 and "22-18" in delivered[-1].params["caption"]
    assert len(tg.http.named("sendPhoto")) == 3 and len(tg.sleeps) == 1


async def test_a_typed_move_waits_out_a_short_flood_control(tg):
    await started(tg)
    tg.http.fail("sendPhoto", 429, "Too Many Requests: retry after 3", retry_after=3)
    await tg.say("ana", "/m 22-18")
    refused, delivered = tg.http.named("sendPhoto")[-2:]
    assert refused.status == 429 and delivered.status == 200 and "22-18" in delivered.params["caption"]
    assert delivered.at - refused.at >= 3 / SPEED                   # honours retry_after (on Telegram's clock)


async def test_a_flood_wait_beyond_the_bound_leaves_the_board_to_the_outbox_until_it_ends(tg):
    await started(tg)
    now = time.time()
    tg.service.clock = lambda: now
    tg.http.fail("sendPhoto", 429, "Too Many Requests: retry after 7", retry_after=7)
    await tg.say("ana", "/m 22-18")
    assert len(tg.http.named("sendPhoto")) == 2                     # not slept through, not retried blindly
    [queued] = tg.storage.find_outbox(status="pending")
    assert 6.5 <= queued.next_attempt_at - now <= 7.5              # due when Telegram allows, not at a backoff
    await asyncio.sleep(7 / SPEED)                                 # Telegram's 7 s...
    tg.service.clock = lambda: now + 8                              # ...and the service's
    assert await tg.adapter.delivery_round() == 1
    assert "22-18" in tg.http.named("sendPhoto", ok_only=True)[-1].params["caption"]


async def test_retries_are_bounded(tg, caplog):
    await started(tg)
    tg.http.fail("sendPhoto", 502, "Bad Gateway", times=50)
    with caplog.at_level(logging.WARNING, logger="bot.platforms.telegram"):
        await tg.say("ana", "/m 22-18")
    attempts = len(tg.http.named("sendPhoto")) - 1
    assert 2 <= attempts <= 5 and len(tg.sleeps) == attempts - 1
    assert sum(tg.sleeps) < 60
    assert any("not delivered" in r.getMessage() for r in caplog.records)


async def test_a_board_still_failing_after_the_retries_reaches_the_chat_through_the_outbox(tg):
    await started(tg)
    now = time.time()
    tg.service.clock = lambda: now
    tg.http.fail("sendPhoto", 502, "Bad Gateway", times=4)          # every retry of the reply fails
    await tg.say("ana", "/m 22-18")
    assert tg.storage.game(1).ply == 1 and len(tg.http.named("sendPhoto", ok_only=True)) == 1
    [queued] = tg.storage.find_outbox(status="pending")
    assert queued.attempts == 1 and queued.next_attempt_at > now     # backs off before trying again
    tg.service.clock = lambda: now + 60
    await tg.adapter.delivery_round()
    delivered = tg.http.named("sendPhoto", ok_only=True)
    assert len(delivered) == 2 and "22-18" in delivered[-1].params["caption"]
    assert [m.status for m in tg.storage.find_outbox()] == ["sent"]
    assert board_rows(tg)[-1][1] == 1                                # the late board is known as game 1's


async def test_a_long_flood_wait_is_not_slept_through(tg):
    await started(tg)
    tg.http.fail("sendPhoto", 429, "Too Many Requests: retry after 3600", retry_after=3600, times=5)
    waits = limiter_waits(tg.limiter)
    await tg.say("ana", "/m 22-18")
    assert all(s < 3600 for s in tg.sleeps) and sum(waits) < 5 * SPEED    # at most 5 s of real time waited
    assert len(tg.http.named("sendPhoto")) == 2                     # given up at once, not retried blindly
    assert [m.status for m in tg.storage.find_outbox()] == ["pending"]  # ...and left to the outbox


async def test_an_edit_survives_a_bad_gateway(tg):
    board = await started(tg)
    tg.http.fail("editMessageMedia", 502, "Bad Gateway")
    await tg.press("ana", "s:1:0:22", message_id=board.message_id)
    assert_attached_png(tg, tg.http.named("editMessageMedia")[-1])
    assert tg.http.messages[(CHAT, board.message_id)].buttons()[0] == "d:1:0:22:18"
    assert len(tg.http.named("sendPhoto")) == 1


async def test_a_loss_on_time_survives_a_bad_gateway(tg):
    await started(tg)
    tg.service.clock = lambda: time.time() + 3600
    tg.http.fail("sendPhoto", 502, "Bad Gateway")
    await tg.adapter.delivery_round()
    delivered = tg.http.named("sendPhoto", ok_only=True)
    assert len(delivered) == 2 and "se le acabó el tiempo" in delivered[-1].params["caption"]


async def test_a_reminder_waits_out_flood_control(tg):
    await started(tg)
    tg.service.clock = lambda: time.time() + 285                    # 15 s of 5 minutes left
    tg.http.fail("sendMessage", 429, "Too Many Requests: retry after 3", retry_after=3)
    sent = len(tg.http.named("sendMessage", ok_only=True))
    await tg.adapter.delivery_round()
    reminders = tg.http.named("sendMessage", ok_only=True)[sent:]
    assert len(reminders) == 1 and "para mover en la partida #1" in reminders[0].params["text"]


# -- every press is answered exactly once (also checked after every test by the fixture) -----------------


async def test_a_press_is_answered_when_the_database_fails(tg, bot_errors):
    board = await started(tg)
    tg.storage.close()                                              # every storage call now raises
    query_id = await tg.press("ana", "s:1:0:22", message_id=board.message_id)
    answers = [c for c in tg.http.named("answerCallbackQuery") if c.params["callback_query_id"] == query_id]
    assert len(answers) == 1 and answers[0].status == 200
    assert bot_errors                                               # the failure is reported, not swallowed
    tg.errors.clear()
    bot_errors.clear()


async def test_a_press_is_answered_when_the_service_cannot_even_be_called(tg, bot_errors):
    board = await started(tg)
    # As at shutdown: no worker thread is left to run the service in, so the call itself raises.
    await asyncio.get_running_loop().shutdown_default_executor()
    query_id = await tg.press("ana", "s:1:0:22", message_id=board.message_id)
    answers = [c for c in tg.http.named("answerCallbackQuery") if c.params["callback_query_id"] == query_id]
    assert len(answers) == 1 and answers[0].status == 200
    assert [type(e) for e in tg.errors] == [RuntimeError]          # still reported to the error handler
    tg.errors.clear()
    bot_errors.clear()


async def test_each_kind_of_press_is_answered_once(tg):
    await tg.say("ana", "/new italian white")
    await tg.press("bob", "acc:1")                                  # the challenge's accept button
    board = tg.last_board()
    for user, data in [("eve", "s:1:0:22"), ("ana", "s:1:0:22"), ("ana", "p:1:0"), ("ana", "zz:9"),
                       ("ana", "d:1:0:22:18"), ("ana", "s:1:0:21"), ("bob", "dr:1:1")]:
        await tg.press(user, data, message_id=board.message_id)
    assert tg.storage.game(1).ply == 1
    assert len(tg.http.named("answerCallbackQuery")) == 8


# -- a full disk never makes the outbox send a message twice ---------------------------------------------


async def test_a_message_sent_while_the_disk_is_full_is_not_sent_again(tg, monkeypatch):
    """On a full disk the platform takes the message but the database cannot mark it sent: the
    rounds that follow (every 5 s until there is room) must not post it again."""
    from bot.storage import StorageFull

    await started(tg)
    tg.service.clock = lambda: time.time() + 3600                  # the game is lost on time
    real_mark = tg.storage.mark_sent

    def disk_full(*args, **kwargs):
        raise StorageFull("database or disk is full")

    monkeypatch.setattr(tg.storage, "mark_sent", disk_full)
    for _ in range(3):
        with pytest.raises(StorageFull):
            await tg.adapter.delivery_round()
    monkeypatch.setattr(tg.storage, "mark_sent", real_mark)         # room again
    await tg.adapter.delivery_round()
    await tg.adapter.delivery_round()
    time_outs = [c for c in tg.http.named("sendPhoto", ok_only=True) if "se le acabó el tiempo" in c.params["caption"]]
    assert len(time_outs) == 1
    assert all(m.status == "sent" for m in tg.storage.find_outbox())


async def test_a_press_on_a_capture_gif_edits_it_into_the_board(tg):
    """A message without a photo is not always a text board: a press on the capture GIF (it can
    carry the buttons where the GIF and the board went together) edits the media, never its text."""
    await started(tg)
    gif = await tg.app.bot.send_animation(CHAT, b"GIF89a" + b"\x00" * 32, caption="22x13")
    await tg.press("ana", "s:1:0:22", message_id=gif.message_id)
    assert [c for c in tg.http.named("editMessageText") if int(c.wire["message_id"]) == gif.message_id] == []
    shown = tg.http.messages[(CHAT, gif.message_id)]
    assert shown.buttons()[0] == "d:1:0:22:18"
