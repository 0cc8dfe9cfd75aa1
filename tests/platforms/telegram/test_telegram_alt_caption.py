"""A board photo on Telegram carries the position in words in its caption, after the reply's own
text and within Telegram's 1024 UTF-16 units (issue 34, readable without sight): the real
python-telegram-bot against the strict fake Bot API, which refuses a longer caption."""

from __future__ import annotations

import io

from PIL import Image
from tg_helpers import GROUP

from bot.platforms.base import utf16_units
from bot.rules import Position
from bot.service import Reply
from bot.service.chat.describe import describe

WIDE = "\U0001F600"          # one character, two UTF-16 code units


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 64), "white").save(out, "PNG")
    return out.getvalue()


async def test_a_moves_board_has_its_position_after_the_caption(tg):
    await tg.say("ana", "/new spanish white @bob")
    await tg.say("bob", "/accept")
    (game,) = tg.storage.active_games("telegram", str(GROUP["id"]))
    move = str(sorted(Position.from_fen(game.variant, game.fen).legal_moves(), key=str)[0])
    await tg.say("ana", f"/m {move}")
    row = tg.storage.game(game.id)
    # In the reply's own language (the fake's users' clients are Spanish).
    words = describe("es", Position.from_fen(row.variant, row.fen))
    board = tg.last_board()
    assert board.text.endswith("\n\n" + words)
    assert move in board.text.split("\n\n" + words)[0]          # the reply's own text first


async def test_the_words_are_cut_to_the_room_left_and_the_text_never(tg):
    private = tg.http.start_private("ana")
    words = "White to move. White: men on " + ", ".join(str(n) for n in range(1, 200)) + "."
    text = WIDE * 400                                   # 800 units: 224 left, less the blank line
    await tg.adapter.send(str(private["id"]), Reply(text, image=png(), alt=words))
    (board,) = tg.http.bot_messages(private["id"])
    assert board.kind == "photo" and utf16_units(board.text) == 1024
    head, tail = board.text.split("\n\n", 1)
    assert head == text and tail.endswith("…") and words.startswith(tail[:-1])
    # No room worth the words: the caption is the text alone.
    full = WIDE * 500                                   # 1000 units
    await tg.adapter.send(str(private["id"]), Reply(full, image=png(), alt=words))
    assert tg.http.bot_messages(private["id"])[-1].text == full
