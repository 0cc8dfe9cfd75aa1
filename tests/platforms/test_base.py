"""The one way every adapter turns a reply into messages (bot.platforms.base.pieces)."""

from __future__ import annotations

from bot.platforms.base import Piece, pieces, split_text, utf16_units
from bot.service import Button, Reply

BUTTONS = [[Button("22", "s:1:0:22")]]
PNG, GIF = b"\x89PNG board", b"GIF89a capture"


def test_text_is_split_at_line_ends_and_never_lost():
    text = "\n".join(f"line {i} " + "x" * 50 for i in range(100))
    chunks = split_text(text, 2000)
    assert len(chunks) > 1 and all(len(c) <= 2000 for c in chunks)
    assert "\n".join(chunks) == text
    assert "".join(split_text("y" * 9000, 4096)) == "y" * 9000
    assert [len(c) for c in split_text("y" * 9000, 4096)] == [4096, 4096, 808]
    assert split_text("", 10) == [""]


def test_a_platform_that_counts_utf16_code_units_gets_pieces_within_them():
    wide = "\U0001F600"                                  # one character, two units (Telegram's count)
    assert [utf16_units(c) for c in split_text(wide * 3000, 4096, utf16_units)] == [4096, 1904]
    assert [len(c) for c in split_text(wide * 3000, 4096)] == [3000]       # by characters (Discord's count)
    # Never inside a character: an odd limit leaves its last unit unused.
    assert split_text(wide * 5, 3, utf16_units) == [wide] * 5
    out = pieces(Reply("a" * 10, spoiler=wide * 3000), text_limit=4096, caption_limit=1024, files_together=False,
                 measure=utf16_units)
    assert out[-1].spoiler == wide * 1024 and utf16_units(out[-1].text + out[-1].spoiler) + 1 <= 4096


def test_a_short_board_is_one_message_with_its_caption_and_buttons():
    reply = Reply("Ana played 22-18", image=PNG, buttons=BUTTONS, game_id=1)
    for together in (False, True):
        assert pieces(reply, text_limit=4096, caption_limit=1024, files_together=together) == [
            Piece("Ana played 22-18", image=PNG, buttons=BUTTONS, board=True)]


def test_files_go_together_where_the_platform_allows_else_one_message_each_after_the_board():
    reply = Reply("x", image=PNG, animation=GIF, document=("game-1.pdn", b"pdn"), buttons=BUTTONS, game_id=1)
    assert pieces(reply, text_limit=2000, caption_limit=2000, files_together=True) == [
        Piece("x", image=PNG, animation=GIF, document=("game-1.pdn", b"pdn"), buttons=BUTTONS, board=True)]
    assert pieces(reply, text_limit=4096, caption_limit=1024, files_together=False) == [
        Piece("x", image=PNG, buttons=BUTTONS, board=True), Piece("", animation=GIF),
        Piece("", document=("game-1.pdn", b"pdn"))]


def test_a_text_longer_than_a_caption_goes_first_and_the_board_comes_last_with_the_buttons():
    text = "a" * 3000
    reply = Reply(text, image=PNG, buttons=BUTTONS, game_id=1)
    assert pieces(reply, text_limit=4096, caption_limit=1024, files_together=False) == [
        Piece(text), Piece("", image=PNG, buttons=BUTTONS, board=True)]
    long = "b " * 3000
    out = pieces(Reply(long, image=PNG, game_id=1), text_limit=2000, caption_limit=2000, files_together=True)
    assert "".join(p.text for p in out) == long.rstrip("\n") and out[-1].image == PNG and out[-1].board
    assert all(not p.has_file for p in out[:-1]) and all(len(p.text) <= 2000 for p in out)


def test_a_text_without_files_carries_the_buttons_on_its_last_message():
    reply = Reply("z" * 5000, buttons=BUTTONS, game_id=3)
    out = pieces(reply, text_limit=4096, caption_limit=1024, files_together=False)
    assert [len(p.text) for p in out] == [4096, 904]
    assert (out[0].buttons, out[0].board) == ([], False) and (out[1].buttons, out[1].board) == (BUTTONS, True)
    assert not pieces(Reply("hi"), text_limit=10, caption_limit=10, files_together=False)[0].board
