"""A board picture on Discord carries the position in words as its attachment's alt text
(``description``, at most 1024 characters; issue 34, readable without sight): the real discord.py
client against the fake Discord, which refuses a longer one."""

from __future__ import annotations

from discord_fake import Harness

from bot.platforms.discord.render import ALT_LIMIT, files_of
from bot.rules import Position
from bot.service import Reply
from bot.service.chat.describe import describe


def position(h: Harness, game_id: int) -> Position:
    row = h.storage.game(game_id)
    return Position.from_fen(row.variant, row.fen)


async def test_a_board_reply_has_the_position_as_alt_text(h: Harness):
    game_id, board = await h.new_game()
    assert board.message["attachments"][0]["description"] == describe("en", position(h, game_id))
    move = h.legal(game_id)[0]
    token = await h.slash("move", "ana", {"move": move, "game": game_id})
    answer = h.only_answer(token)
    picture = answer.message["attachments"][0]
    assert picture["filename"] == "board.png"
    assert picture["description"] == describe("en", position(h, game_id))
    assert picture["description"].startswith("Black to move.")


async def test_the_alt_text_is_cut_to_discords_limit():
    long = "White to move. " + "White: men on 1, 2, 3; " * 100
    (file,) = files_of(Reply("board", image=b"\x89PNG", alt=long))
    assert file.description == long[:ALT_LIMIT] and len(file.description) == 1024
    (plain,) = files_of(Reply("board", image=b"\x89PNG"))
    assert plain.description is None
