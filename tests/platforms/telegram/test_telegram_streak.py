"""/streak on Telegram (issue 33), through the real python-telegram-bot Application and adapter,
the real service on a real SQLite file, and the strict fake Bot API.

A Telegram group can show nothing to one member: the group sees the run's start link and, at the
end, the chat's record message; every board, answer and the run's end go to the member's private
chat.  The record message is posted once and, when someone beats the record, edited in place (the
same message id, through the outbox's delivery round)."""

from __future__ import annotations

import re

from catalog_text import tr
from telegram_fake_api import GROUP, USERS

from bot.puzzles import bank
from bot.rules import Position

CHAT = GROUP["id"]
PLATFORM = "telegram"


def private_chat(user: str) -> dict:
    u = USERS[user]
    return {"id": u["id"], "type": "private", "first_name": u["first_name"], "username": u["username"]}


def group_calls(tg, after: int = 0) -> list:
    """What the bot sent or edited in the group (successfully), from call index ``after`` on."""
    return [c for c in tg.http.calls[after:] if c.status == 200 and str(c.params.get("chat_id")) == str(CHAT)
            and c.method in ("sendMessage", "sendPhoto", "editMessageText", "editMessageCaption",
                             "editMessageMedia")]


def current_puzzle(tg, user: str) -> dict:
    run = tg.storage.puzzle_runs.running(PLATFORM, str(USERS[user]["id"]), "streak")
    assert run is not None and run.post_id is not None
    post = tg.storage.puzzle_post(run.post_id)
    puzzle = bank.by_id(post.variant, post.puzzle_id)
    assert puzzle is not None
    return puzzle


async def run_streak(tg, user: str, solves: int) -> None:
    """``user`` starts a streak in the group, opens it in their private chat with the link, solves
    ``solves`` puzzles and misses the next one."""
    mine = private_chat(user)
    await tg.say(user, "/start", chat=mine)
    before = len(tg.http.calls)
    await tg.say(user, "/streak italian")
    (link,) = group_calls(tg, before)
    assert link.method == "sendMessage"
    payload = re.search(r"start=(p\d+_[A-Za-z0-9_-]{16})", link.params["text"])
    assert payload is not None, link.params["text"]
    await tg.say(user, f"/start {payload.group(1)}", chat=mine)
    for _ in range(solves):
        await tg.say(user, "/m " + " ".join(current_puzzle(tg, user)["solution"]), chat=mine)
    puzzle = current_puzzle(tg, user)
    pos = Position.from_fen(puzzle["variant"], puzzle["fen"])
    wrong = next(str(m) for m in pos.legal_moves() if str(m) not in puzzle["tree"])
    await tg.say(user, f"/m {wrong}", chat=mine)
    # Nothing of the run itself reached the group: only the link.
    assert [c.method for c in group_calls(tg, before)] == ["sendMessage"]
    assert tg.storage.puzzle_runs.running(PLATFORM, str(USERS[user]["id"]), "streak") is None


async def test_the_record_message_is_posted_once_then_edited_in_place(tg) -> None:
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/lang es")
    await run_streak(tg, "ana", 1)
    before = len(tg.http.calls)
    assert await tg.adapter.delivery_round() == 1
    (posted,) = group_calls(tg, before)
    assert posted.method == "sendMessage"
    lang = "es"                                   # the group's language
    text = tr(lang, "records.message", mode=tr(lang, "records.mode.streak"), variant=tr(lang, "variant.italian"),
              score=1, name="Ana")
    assert posted.params["text"] == text
    (message_id,) = [mid for (chat, mid), m in tg.http.messages.items() if chat == CHAT and m.text == text]
    best = tg.storage.puzzle_runs.chat_best(PLATFORM, str(CHAT), "streak", "italian")
    assert best is not None and best.message_id == str(message_id)
    # Bob beats it: the same message is edited, no new one is posted.
    await run_streak(tg, "bob", 2)
    before = len(tg.http.calls)
    assert await tg.adapter.delivery_round() == 1
    (edited,) = group_calls(tg, before)
    assert edited.method == "editMessageText"
    assert int(edited.params["message_id"]) == message_id
    assert edited.params["text"].startswith(tr(lang, "records.message", mode=tr(lang, "records.mode.streak"),
                                               variant=tr(lang, "variant.italian"), score=2, name="Bob"))
    assert tr(lang, "records.beaten", name="Ana", score=1) in edited.params["text"]
    assert tg.http.messages[(CHAT, message_id)].text == edited.params["text"]
    # Eve does not beat it: nothing is sent or edited in the group.
    await run_streak(tg, "eve", 0)
    before = len(tg.http.calls)
    await tg.adapter.delivery_round()
    assert group_calls(tg, before) == []


async def test_two_records_before_a_delivery_round_make_one_message(tg) -> None:
    """Ana's record and Bob's, which beats it, are both queued before the outbox goes out (two runs
    ending close together): the group gets one record message, posted then edited, never two."""
    await run_streak(tg, "ana", 1)
    await run_streak(tg, "bob", 2)
    before = len(tg.http.calls)
    assert await tg.adapter.delivery_round() == 2
    posted, edited = group_calls(tg, before)
    assert (posted.method, edited.method) == ("sendMessage", "editMessageText")
    message_id = next(mid for (chat, mid), m in tg.http.messages.items()
                      if chat == CHAT and m.text == edited.params["text"])
    assert int(edited.params["message_id"]) == message_id
    assert edited.params["text"].startswith(tr("en", "records.message", mode=tr("en", "records.mode.streak"),
                                               variant=tr("en", "variant.italian"), score=2, name="Bob"))
    best = tg.storage.puzzle_runs.chat_best(PLATFORM, str(CHAT), "streak", "italian")
    assert best is not None and best.message_id == str(message_id)


async def test_a_deleted_record_message_is_posted_again(tg) -> None:
    """An admin deleted the record message: the next record is a new message (Telegram says the one
    to edit is not found), and the one after edits that new one."""
    await run_streak(tg, "ana", 1)
    await tg.adapter.delivery_round()
    best = tg.storage.puzzle_runs.chat_best(PLATFORM, str(CHAT), "streak", "italian")
    assert best is not None and best.message_id is not None
    del tg.http.messages[(CHAT, int(best.message_id))]
    tg.expect_refusals(1)
    await run_streak(tg, "bob", 2)
    before = len(tg.http.calls)
    await tg.adapter.delivery_round()
    refused = [c for c in tg.http.calls[before:] if c.method == "editMessageText"]
    assert [c.status for c in refused] == [400]
    (posted,) = group_calls(tg, before)
    assert posted.method == "sendMessage"
    assert posted.params["text"].startswith(tr("en", "records.message", mode=tr("en", "records.mode.streak"),
                                               variant=tr("en", "variant.italian"), score=2, name="Bob"))
    best = tg.storage.puzzle_runs.chat_best(PLATFORM, str(CHAT), "streak", "italian")
    assert best is not None and (CHAT, int(best.message_id or 0)) in tg.http.messages
    await run_streak(tg, "eve", 3)
    before = len(tg.http.calls)
    await tg.adapter.delivery_round()
    (edited,) = group_calls(tg, before)
    assert edited.method == "editMessageText" and int(edited.params["message_id"]) == int(best.message_id or 0)
