"""A game against the bot through Discord: the /play slash command (options variant, level,
colour), the human's move, and the bot's move posted to the channel by the outbox delivery.

The harness's service is the real one; its engine is given two threads and a short time per move
(the ``thinker`` and ``bot_seconds`` of the same service object the bot holds)."""

from __future__ import annotations

import asyncio

from catalog_text import pattern, to_move, tr
from discord_fake import CHANNEL_ID, Harness, uid

from bot.i18n import t
from bot.rules import Position
from bot.storage import BOT_ID

PNG = b"\x89PNG\r\n\x1a\n"
POSTS = "/channels/{channel_id}/messages"
BOT_1 = tr("en", "bot.name_start", level=1)



def legal_starts(h: Harness, game_id: int) -> list[int]:
    row = h.storage.game(game_id)
    return sorted({m.start for m in Position.from_fen(row.variant, row.fen).legal_moves()})


def posted_files(h: Harness) -> list[dict[str, bytes]]:
    return [c.files for c in h.fake.requests(method="POST", path_end=POSTS) if c.error is None]


async def settle(h: Harness) -> None:
    assert await asyncio.to_thread(h.bot.service.settle, 20)


async def test_play_then_a_move_then_the_bots_move_is_posted_with_its_board(bot_h: Harness):
    h = bot_h
    token = await h.slash("play", "ana", {"variant": "italian", "level": 2, "color": "white"})
    start = h.only_answer(token)
    assert not start.ephemeral
    assert pattern("en", "play.started", id=1, level=2).match(start.content), start.content
    assert start.filenames() == ["board.png"]
    assert start.custom_ids() == [f"dr:s:1:0:{sq}" for sq in legal_starts(h, 1)]
    row = h.storage.game(1)
    assert (row.white_id, row.black_id, row.bot_level, row.variant) == (uid("ana"), BOT_ID, 2, "italian")

    token = await h.slash("move", "ana", {"move": "22-18"})
    answer = h.only_answer(token)
    assert tr("en", "move.played", name="Ana", move="22-18", id=1) in answer.content
    assert t("en", "bot.thinking", bot=tr("en", "bot.name_start", level=2)) in answer.content
    assert answer.custom_ids() == []                               # the bot's turn: no buttons

    await settle(h)
    assert h.fake.channel_posts() == []                             # nothing posted before the round
    assert await h.bot.delivery_round() == 1
    [post] = h.fake.channel_posts()
    moves = h.storage.moves(1)
    assert [m.by_user for m in moves] == [uid("ana"), BOT_ID]
    bot_move = moves[-1].notation
    assert post.content.startswith(t("en", "bot.played", bot=tr("en", "bot.name_start", level=2), move=bot_move, id=1))
    assert to_move("en", f"<@{uid('ana')}>", "white").search(post.content) and post.notified == [uid("ana")]
    assert post.filenames() == ["board.png"] and posted_files(h)[-1]["board.png"].startswith(PNG)
    assert post.custom_ids() == [f"dr:s:1:2:{sq}" for sq in legal_starts(h, 1)]
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(post.id)) == 1
    after_human = Position.start("italian").play(Position.start("italian").parse_move("22-18"))
    assert str(after_human.parse_move(bot_move)) == bot_move        # a legal answer
    assert await h.bot.delivery_round() == 0                        # posted once


async def test_play_as_black_the_bot_opens_and_the_human_answers_with_its_buttons(bot_h: Harness):
    h = bot_h
    token = await h.slash("play", "bob", {"variant": "italian", "level": 1, "color": "black"})
    start = h.only_answer(token)
    assert t("en", "bot.thinking", bot=BOT_1) in start.content and start.custom_ids() == []
    row = h.storage.game(1)
    assert (row.white_id, row.black_id) == (BOT_ID, uid("bob"))

    await settle(h)
    assert await h.bot.delivery_round() == 1
    [post] = h.fake.channel_posts()
    assert tr("en", "bot.played", bot=BOT_1, move=h.storage.moves(1)[0].notation, id=1) in post.content
    # Bob plays from the bot's board: a piece, then its destination.
    await h.click(post.custom_ids()[0], "bob", post)
    edited = h.fake.messages[post.id]
    destination = next(cid for cid in edited.custom_ids() if cid.startswith("dr:d:1:1:"))
    await h.click(destination, "bob", edited)
    await settle(h)
    assert h.storage.moves(1)[1].by_user == uid("bob")
    assert await h.bot.delivery_round() == 1
    moves = h.storage.moves(1)
    assert [m.by_user for m in moves] == [BOT_ID, uid("bob"), BOT_ID]
    latest = h.fake.channel_posts()[-1]
    assert tr("en", "bot.played", bot=BOT_1, move=moves[-1].notation, id=1) in latest.content
    assert latest.custom_ids() == [f"dr:s:1:3:{sq}" for sq in legal_starts(h, 1)]
    pos = Position.start("italian")
    for m in moves:
        pos = pos.play(pos.parse_move(m.notation))
    assert pos.fen() == h.storage.game(1).fen


async def test_a_play_option_the_service_refuses_is_explained_and_starts_nothing(bot_h: Harness):
    h = bot_h
    token = await h.slash("play", "ana", {"level": 3, "move_time": "1m"})
    answer = h.only_answer(token)
    assert answer.content == t("en", "new.bad_time", word="1m") + " " + t("en", "play.usage")
    assert h.storage.find_games("discord") == []


async def test_an_analysis_is_posted_with_its_picture_and_pdn_in_one_message(bot_h: Harness):
    h = bot_h
    game_id, _ = await h.new_game()
    for user, move in zip(["ana", "bob", "ana", "bob"], ["24-20", "12-15", "22-19", "15x24"], strict=True):
        await h.slash("move", user, {"move": move})
    await h.slash("resign", "ana", {})
    await h.slash("resign", "ana", {})
    assert h.storage.game(game_id).result_reason == "resign"
    token = await h.slash("analysis", "bob", {})
    assert pattern("en", "analysis.started", id=game_id).match(h.only_answer(token).content)
    await settle(h)
    assert await h.bot.delivery_round() == 1
    [post] = h.fake.channel_posts()
    assert post.content.startswith(tr("en", "analysis.title", id=game_id, white="Ana", black="Bob"))
    assert "22-19" in post.content
    assert post.filenames() == ["board.png", f"game-{game_id}-analysis.pdn"]
    files = posted_files(h)[-1]
    assert files["board.png"].startswith(PNG)
    assert b'[Annotator "draughts-bot"]' in files[f"game-{game_id}-analysis.pdn"]
