"""A long reply is split as Telegram counts: its 4096 (a text) and 1024 (a caption) are UTF-16 code
units, and an emoji is two of them.  Split by characters, a reply full of emoji came in pieces
Telegram refuses as too long (the tg fixture fails a test on any refusal of the fake's own)."""

from __future__ import annotations

import io

from PIL import Image

from bot.platforms.base import utf16_units
from bot.service import Reply

WIDE = "\U0001F600"          # one character, two UTF-16 code units


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 64), "white").save(out, "PNG")
    return out.getvalue()


async def test_a_reply_of_emoji_arrives_in_pieces_telegram_takes(tg):
    private = tg.http.start_private("ana")
    text = WIDE * 3000                                  # 3000 characters, 6000 units
    await tg.adapter.send(str(private["id"]), Reply(text))
    sent = [m.text for m in tg.http.bot_messages(private["id"])]
    assert len(sent) == 2 and all(utf16_units(t) <= 4096 for t in sent), [utf16_units(t) for t in sent]
    assert "".join(sent) == text
    assert [c.status for c in tg.http.calls if c.method == "sendMessage"] == [200, 200]


async def test_lines_of_emoji_are_cut_at_line_ends_within_the_units(tg):
    private = tg.http.start_private("ana")
    lines = [f"{n} " + WIDE * 40 for n in range(120)]          # 82-84 units a line, ~10,000 in all
    text = "\n".join(lines)
    await tg.adapter.send(str(private["id"]), Reply(text))
    sent = [m.text for m in tg.http.bot_messages(private["id"])]
    assert len(sent) == 3 and all(utf16_units(t) <= 4096 for t in sent)
    assert "\n".join(sent) == text


async def test_a_caption_of_emoji_too_long_for_one_goes_before_the_board(tg):
    private = tg.http.start_private("ana")
    caption = WIDE * 600                                # 600 characters, within 1024; 1200 units, not
    await tg.adapter.send(str(private["id"]), Reply(caption, image=png()))
    first, board = tg.http.bot_messages(private["id"])
    assert (first.kind, first.text) == ("text", caption)
    assert board.kind == "photo" and not board.text
