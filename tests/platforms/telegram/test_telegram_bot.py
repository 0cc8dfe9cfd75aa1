"""A game against the bot through Telegram: /play, the human's move, and the bot's move delivered
by the adapter's outbox delivery (a round driven by the test, and the running delivery task woken
by the engine's thread).

The harness's service is the real one; its engine is given two threads and a short time per move
(the ``thinker`` and ``bot_seconds`` of the same service object the adapter holds)."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from catalog_text import Phrase, pattern
from telegram_fake_api import GROUP

from bot.i18n import t
from bot.rules import Position
from bot.service.thinking import Thinker
from bot.storage import BOT_ID

PNG = b"\x89PNG\r\n\x1a\n"
CHAT = GROUP["id"]


@pytest.fixture
def bot_tg(tg):
    """The Telegram harness with the engine in two threads, 0.2 s per move."""
    pool = ThreadPoolExecutor(2)
    tg.service.thinker = Thinker(pool)
    tg.service.bot_seconds = 0.2
    yield tg
    assert tg.service.settle(20)
    pool.shutdown(wait=True)


def buttons(call) -> list[str]:
    markup = json.loads(call.wire.get("reply_markup") or "{}")
    return [b["callback_data"] for row in markup.get("inline_keyboard", []) for b in row]


def photos_after(tg, index: int) -> list:
    return [c for c in tg.http.calls[index:] if c.method == "sendPhoto" and c.status == 200]


async def wait_for_photo(tg, said: Phrase, after: int, timeout: float = 10.0):
    """The first photo sent after call ``after`` whose caption says ``said`` (waiting for it)."""
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        for call in photos_after(tg, after):
            if said.search(call.params.get("caption") or ""):
                return call
        await asyncio.sleep(0.01)
    raise AssertionError(f"no photo saying {said!r} within {timeout} s")


BOT_2 = t("en", "bot.name_start", level=2)
BOT_2_PLAYED = pattern("en", "bot.played", bot=BOT_2, id=1)


async def test_play_move_and_the_bots_answer_delivered_by_a_delivery_round(bot_tg):
    tg = bot_tg
    await tg.say("ana", "/play italian level 1 white")               # Ana's client is Spanish
    start = tg.http.named("sendPhoto")[-1]
    assert start.params["caption"].startswith("Empieza la partida #1")
    assert tg.http.upload(start).startswith(PNG)
    assert buttons(start)[:3] == ["d:1:0:21:17", "d:1:0:21:18", "d:1:0:22:18"]      # a group: moves as buttons
    row = tg.storage.game(1)
    assert (row.white_id, row.black_id, row.bot_level) == ("1", BOT_ID, 1)

    await tg.say("ana", "/m 22-18")
    answer = tg.http.named("sendPhoto")[-1]
    assert "Ana jugó 22-18 (partida #1)." in answer.params["caption"]
    assert t("es", "bot.thinking", bot=t("es", "bot.name_start", level=1)) in answer.params["caption"]
    assert buttons(answer) == []                                      # the bot's turn

    assert await asyncio.to_thread(tg.service.settle, 20)
    before = len(tg.http.calls)
    assert await tg.adapter.delivery_round() == 1
    [delivered] = photos_after(tg, before)
    moves = tg.storage.moves(1)
    assert [m.by_user for m in moves] == ["1", BOT_ID]
    bot_move = moves[-1].notation
    caption = delivered.params["caption"]
    assert caption.startswith(t("es", "bot.played", bot=t("es", "bot.name_start", level=1), move=bot_move, id=1))
    assert int(delivered.params["chat_id"]) == CHAT
    assert tg.http.upload(delivered).startswith(PNG)
    # The bot's move is legal, and the board carries the buttons of the human's pieces.
    after_human = Position.start("italian").play(Position.start("italian").parse_move("22-18"))
    assert str(after_human.parse_move(bot_move)) == bot_move
    pos = Position.from_fen("italian", tg.storage.game(1).fen)
    assert buttons(delivered) == [f"d:1:2:{a}:{b}" for a, b in sorted({(m.start, m.end) for m in pos.legal_moves()})]
    # The delivered board is remembered for the game, and it goes out once.
    message_id = tg.http.bot_messages(CHAT, "photo")[-1].message_id
    assert tg.storage.game_of_message("telegram", str(CHAT), str(message_id)) == 1
    assert await tg.adapter.delivery_round() == 0
    assert [m.status for m in tg.storage.find_outbox()] == ["sent"]


async def test_the_running_delivery_task_brings_the_bots_moves_on_its_own(bot_tg):
    tg = bot_tg
    await tg.app.start()
    try:
        before = len(tg.http.calls)
        await tg.say("bob", "/play italian black level 2")            # Bob's client is English: the bot opens
        opened = await wait_for_photo(tg, BOT_2_PLAYED, before)
        first = tg.storage.moves(1)
        assert [m.by_user for m in first] == [BOT_ID]
        assert t("en", "bot.played", bot=BOT_2, move=first[0].notation, id=1) in opened.params["caption"]
        # Bob answers with a button of that very board: a move (in a group each move is a button).
        board = tg.http.bot_messages(CHAT, "photo")[-1]
        destination = buttons(opened)[0]
        before = len(tg.http.calls)
        await tg.press("bob", destination, board.message_id)
        assert tg.storage.moves(1)[1].by_user == "2"                  # Bob's move (the bot may answer already)
        answered = await wait_for_photo(tg, BOT_2_PLAYED, before)
        moves = tg.storage.moves(1)
        assert [m.by_user for m in moves] == [BOT_ID, "2", BOT_ID]
        assert t("en", "bot.played", bot=BOT_2, move=moves[-1].notation, id=1) in answered.params["caption"]
        pos = Position.start("italian")
        for m in moves:
            pos = pos.play(pos.parse_move(m.notation))
        assert pos.fen() == tg.storage.game(1).fen
    finally:
        await tg.app.stop()
    assert [m.status for m in tg.storage.find_outbox()] == ["sent", "sent"]


async def test_an_analysis_reaches_the_chat_as_a_picture_and_a_pdn_file(bot_tg):
    tg = bot_tg
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    for user, move in zip(["ana", "bob", "ana", "bob"], ["24-20", "12-15", "22-19", "15x24"], strict=True):
        await tg.say(user, f"/m {move}")
    await tg.say("ana", "/resign")
    await tg.say("ana", "/resign")
    assert tg.storage.game(1).result_reason == "resign"
    await tg.say("bob", "/analysis")
    assert pattern("en", "analysis.started", id=1).match(tg.http.named("sendMessage")[-1].params["text"])
    assert await asyncio.to_thread(tg.service.settle, 20)
    before = len(tg.http.calls)
    assert await tg.adapter.delivery_round() == 1
    sent = [c for c in tg.http.calls[before:] if c.status == 200]
    assert [c.method for c in sent] == ["sendPhoto", "sendDocument"]
    photo, document = sent
    assert photo.params["caption"].startswith(t("en", "analysis.title", id=1, white="Ana", black="Bob"))
    assert "22-19" in photo.params["caption"] and tg.http.upload(photo).startswith(PNG)
    pdn = tg.http.upload(document).decode("utf-8")
    assert '[Annotator "draughts-bot"]' in pdn and "22-19" in pdn
