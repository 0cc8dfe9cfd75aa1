"""The Telegram adapter with the real python-telegram-bot objects; only HTTP is replaced, by the
strict fake Bot API in telegram_fake_api (the ``tg`` fixture is in conftest.py)."""

from __future__ import annotations

import json
import time
import warnings

from catalog_text import says
from telegram_fake_api import GROUP, NOT_MODIFIED, QUERY_INVALID, USERS


def photo_buttons(call) -> list[str]:
    markup = json.loads(call.wire["reply_markup"])
    return [b["callback_data"] for row in markup["inline_keyboard"] for b in row]


async def test_challenge_accept_and_board_photo_with_buttons(tg):
    await tg.say("ana", "/new@DraughtsBot italian white")
    text = tg.http.named("sendMessage")[-1].params["text"]
    assert "Reto #1" in text                                   # Ana's client is Spanish
    await tg.say("bob", "/accept")
    call = tg.http.named("sendPhoto")[-1]
    assert says(call.params["caption"], "en", "game.started", id=1)
    png = call.files["photo"]
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 40_000
    # In a group every move is a button of its own (one press, one post: issue 29, item 6).
    assert photo_buttons(call) == ["d:1:0:21:17", "d:1:0:21:18", "d:1:0:22:18", "d:1:0:22:19", "d:1:0:23:19",
                                   "d:1:0:23:20", "d:1:0:24:20"]


async def test_typed_move_and_reply_to_the_board(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    await tg.say("eve", "/new italian white")
    await tg.say("bob", "/accept")                 # Bob now plays two games here, black in both
    await tg.say("ana", "/m 22-18")
    assert tg.storage.game(1).ply == 1
    board_of_game_1 = [m for m, g in tg.storage.board_messages("telegram", str(GROUP["id"])) if g == 1][-1]
    await tg.say("bob", "11-15", reply_to=int(board_of_game_1))   # a bare move replying to the board
    assert (tg.storage.game(1).ply, tg.storage.game(2).ply) == (2, 0)


async def test_commands_for_another_bot_are_ignored(tg):
    await tg.say("ana", "/new italian")
    before = len(tg.http.calls)
    await tg.say("bob", "/accept@SomeOtherBot")
    assert len(tg.http.calls) == before
    assert tg.storage.active_games("telegram", str(GROUP["id"])) == []


async def test_piece_button_edits_the_board_and_destination_plays(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    board = tg.last_board()
    await tg.press("ana", "s:1:0:22")
    call = tg.http.named("editMessageMedia")[-1]
    assert photo_buttons(call)[:2] == ["d:1:0:22:18", "d:1:0:22:19"]
    assert int(call.wire["message_id"]) == board.message_id
    await tg.press("ana", "d:1:0:22:18")
    assert tg.storage.game(1).ply == 1
    # The move's board is a new message that pings Bob (one post, not an edit and a ping).
    new = tg.last_board()
    assert new.message_id != board.message_id and "22-18" in new.text
    assert tg.http.notified(new) == [USERS["bob"]["id"]]
    assert [c.status for c in tg.http.named("editMessageMedia")] == [200]


async def test_wrong_player_gets_an_alert_and_nothing_changes(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    await tg.press("eve", "s:1:0:22")
    params = tg.http.named("answerCallbackQuery")[-1].params
    assert params.get("show_alert") is True and params.get("text")
    assert tg.storage.game(1).ply == 0


async def test_garbage_button_data_is_answered(tg):
    await tg.say("ana", "/help")
    await tg.press("ana", "zz:1:2:3")
    params = tg.http.named("answerCallbackQuery")[-1].params
    assert params.get("text")


async def test_message_not_modified_is_harmless(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    tg.http.fail("editMessageMedia", 400, NOT_MODIFIED)
    photos = len(tg.http.named("sendPhoto"))
    await tg.press("ana", "p:1:0")
    assert len(tg.http.named("editMessageMedia")) == 1 and tg.http.pending_failures("editMessageMedia") == 0
    assert len(tg.http.named("sendPhoto")) == photos          # nothing to fall back on: the board is right


async def test_a_chat_that_removed_the_bot_is_skipped(tg):
    tg.http.kick(GROUP["id"])
    await tg.say("ana", "/help")
    assert len(tg.http.named("sendMessage")) == 1          # tried once, refused, nothing raised


async def test_a_refused_button_answer_still_shows_the_played_move(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    tg.http.fail("answerCallbackQuery", 400, QUERY_INVALID)
    await tg.press("ana", "d:1:0:22:18")
    assert tg.storage.game(1).ply == 1
    board = tg.http.named("sendPhoto")[-1]
    assert board.status == 200 and "Ana jugó 22-18" in board.params["caption"]   # Ana plays in Spanish


async def test_one_failed_deadline_message_does_not_silence_the_others(tg):
    other = dict(GROUP, id=-100456)
    for chat in (GROUP, other):
        await tg.say("ana", "/new italian white 5m", chat=chat)
        await tg.say("bob", "/accept", chat=chat)
    tg.service.clock = lambda: time.time() + 3600
    tg.http.fail("sendPhoto", 400, "Bad Request: chat not found")
    before = len(tg.http.named("sendPhoto"))
    await tg.adapter.delivery_round()
    sent = tg.http.named("sendPhoto")[before:]
    assert len(sent) == 2                                   # the second chat still hears its result
    assert "acabó el tiempo" in sent[1].params["caption"]
    # "chat not found" is for good: that message is dropped, not tried again.
    statuses = sorted(m.status for m in tg.storage.find_outbox())
    assert statuses == ["dropped", "sent"]


async def test_a_send_to_a_migrated_group_follows_it(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    tg.http.migrate(GROUP["id"], -100888)
    await tg.say("ana", "/games")
    assert tg.http.named("sendMessage")[-1].params["chat_id"] == -100888
    assert tg.storage.active_games("telegram", "-100888")[0].id == 1


async def test_group_migration_moves_the_games(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    await tg.update(message={"message_id": 77, "date": int(time.time()), "chat": GROUP, "from": USERS["ana"],
                             "migrate_to_chat_id": -100777})
    assert tg.storage.active_games("telegram", "-100777")[0].id == 1


async def test_the_delivery_round_posts_the_loss_on_time(tg):
    await tg.say("ana", "/new italian white 5m")
    await tg.say("bob", "/accept")
    tg.service.clock = lambda: time.time() + 3600
    await tg.adapter.delivery_round()
    params = tg.http.named("sendPhoto")[-1].params
    # Said in the language of the player who lost (Ana's client is Spanish).
    assert "Gana Bob: a Ana se le acabó el tiempo" in params["caption"]
    assert tg.storage.game(1).result_reason == "time"


async def test_pdn_is_sent_as_a_document(tg):
    await tg.say("ana", "/new spanish white")
    await tg.say("bob", "/accept")
    await tg.say("ana", "/pdn")
    files = tg.http.named("sendDocument")[-1].files
    assert b'[GameType "24,W,8,8,N1,1"]' in files["document"]


async def test_long_text_is_split_under_the_limit(tg):

    from bot.service import Reply
    await tg.adapter.send(GROUP["id"], Reply("x" * 9000))
    texts = [c.params["text"] for c in tg.http.named("sendMessage")]
    assert [len(t) for t in texts] == [4096, 4096, 808]


def test_tokens_are_redacted_from_every_log_line():
    import io
    import logging

    from bot.app import RedactSecrets
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RedactSecrets(["123456:REAL-SECRET"]))
    log = logging.getLogger("test.redaction")
    log.addHandler(handler)
    try:
        log.warning("GET https://api.telegram.org/bot%s/getMe", "123456:REAL-SECRET")
        try:
            raise RuntimeError("The token `123456:REAL-SECRET` was rejected by the server.")
        except RuntimeError:
            log.exception("stopped")
    finally:
        log.removeHandler(handler)
    text = out.getvalue()
    assert "REAL-SECRET" not in text
    assert text.count("[redacted]") >= 2 and "Traceback" in text


def test_missing_token_is_one_clear_line_pointing_to_the_console(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k not in ("TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN")}
    env["DRAUGHTS_DB"] = str(tmp_path / "x.db")
    root = Path(__file__).resolve().parents[3]
    for platform in ("telegram", "discord"):
        out = subprocess.run([sys.executable, "-m", "bot", platform], cwd=root, env=env, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{platform.upper()}_BOT_TOKEN is not set" in lines[0]
        assert "python -m bot" in lines[0]


async def test_a_board_whose_text_outgrows_a_caption_comes_after_the_text_and_is_remembered(tg):
    from bot.service import Button, Reply

    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    png = tg.http.named("sendPhoto")[-1].files["photo"]
    before = len(tg.http.calls)
    await tg.adapter.send(GROUP["id"], Reply("y" * 1500, image=png, buttons=[[Button("22", "s:1:0:22")]], game_id=1))
    sent = tg.http.calls[before:]
    assert [c.method for c in sent] == ["sendMessage", "sendPhoto"]
    assert sent[0].params["text"] == "y" * 1500 and "caption" not in sent[1].params
    assert photo_buttons(sent[1]) == ["s:1:0:22"]
    board = tg.last_board()
    assert tg.storage.game_of_message("telegram", str(GROUP["id"]), str(board.message_id)) == 1


async def test_no_job_queue_is_built(tg):
    # Issue 31: PTB's job-queue extra is not a dependency; timed work goes through the outbox, so
    # the application has no JobQueue (and no APScheduler thread) even where APScheduler is installed.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # PTB warns that there is none, which is the point
        assert tg.app.job_queue is None
