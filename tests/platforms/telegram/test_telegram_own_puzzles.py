"""Puzzles from one's own games on Telegram (issue 33), through the real python-telegram-bot
application and the real service on a real SQLite file, with only Telegram's HTTP faked: in a
group, ``/puzzle mine`` leaves nothing of the member's puzzle in the chat but a link to their
private chat, where it opens with where it comes from; there ``/problema miei`` (an Italian alias, answered in the
private chat's language) shows it with where it comes from."""

from __future__ import annotations

import json
import re

from catalog_text import says
from telegram_fake_api import BOT, USERS

from bot.puzzles.from_games import scan_game
from bot.storage.repositories import NewOwnPuzzle

PLATFORM = "telegram"
PNG = b"\x89PNG\r\n\x1a\n"
# White's 29-26 here lets Black in with 15-19 22x15 13x22x29 (tests/puzzles/test_from_games.py).
BEFORE_SLIP = "W:W16,17,18,20,22,24,25,29,30,31,32:B2,4,5,6,7,8,9,10,11,13,15"


def private_chat(user: str) -> dict:
    u = USERS[user]
    return {"id": u["id"], "type": "private", "first_name": u["first_name"], "username": u["username"]}


async def test_ones_own_puzzle_asked_in_the_group_waits_in_the_private_chat(tg) -> None:
    now = [tg.service.clock()]
    [found] = scan_game("italian", BEFORE_SLIP, ["29-26"])
    user_id = str(USERS["bob"]["id"])
    tg.storage.own_puzzles.add(NewOwnPuzzle(
        platform=PLATFORM, user_id=user_id, variant="italian", puzzle=json.dumps(found.puzzle), game_id=9,
        ply=found.ply, move_number=found.move_number, opponent="Ana", kind=found.kind, now=now[0]))
    await tg.say("bob", "/puzzle mine")
    text = tg.http.named("sendMessage")[-1].params["text"]
    post = tg.storage.personal_posts(PLATFORM, user_id, 1)[0]
    assert post.puzzle_id.startswith("own:")
    match = re.search(r"start=(p\d+_[A-Za-z0-9_-]{16})", text)
    assert match and f"https://t.me/{BOT['username']}?start=" in text, text
    assert "Ana" not in text and tg.http.named("sendPhoto") == []       # nothing of it in the group
    await tg.say("bob", f"/start {match.group(1)}", chat=private_chat("bob"))
    board = tg.http.named("sendPhoto", ok_only=True)[-1]
    assert int(board.params["chat_id"]) == USERS["bob"]["id"] and board.files["photo"].startswith(PNG)
    assert says(board.params["caption"], "en", "own.intro.allowed", game=9, opponent="Ana", move=1)
    await tg.say("bob", "/problema miei", chat=private_chat("bob"))
    board = tg.http.named("sendPhoto", ok_only=True)[-1]
    caption = board.params["caption"]
    assert says(caption, "en", "own.intro.allowed", game=9, opponent="Ana", move=1), caption
