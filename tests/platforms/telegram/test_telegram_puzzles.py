"""The daily puzzle on Telegram (issue 9), through the real python-telegram-bot Application and
adapter, the real service on a real SQLite file, and the strict fake Bot API.

Telegram specifics: a group administrator is asked of Telegram (getChatMember) only for the
commands that need one; the post is a photo with buttons, delivered by the outbox's delivery
round; yesterday's solution is hidden behind a spoiler entity; a group has no message one member
alone sees, so a later solver's typed solve gets a reaction on their message, and a button that
would show one member a board sends them to the private chat (a deep link); a chat that removed
the bot is unsubscribed.  The service's clock is a list the test moves."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
from zoneinfo import ZoneInfo

import pytest
from puzzle_text import right_text
from telegram_fake_api import BOT, GROUP, USERS

from bot.i18n import t
from bot.puzzles import bank
from bot.rules import Position
from bot.service.chat.wording import day_words

CHAT = GROUP["id"]
DAY = dt.date(2026, 5, 4)
MADRID = ZoneInfo("Europe/Madrid")
PNG = b"\x89PNG\r\n\x1a\n"
PLATFORM = "telegram"




def private_chat(user: str) -> dict:
    u = USERS[user]
    return {"id": u["id"], "type": "private", "first_name": u["first_name"], "username": u["username"]}


def signed_payload(text: str, post_id: int) -> str:
    """The /start payload of a link the bot handed out: p<post>_<signature>, within Telegram's
    64 characters of [A-Za-z0-9_-]."""
    match = re.search(r"start=(p(\d+)_[A-Za-z0-9_-]{16})(?![A-Za-z0-9_-])", text)
    assert match and int(match.group(2)) == post_id, text
    assert len(match.group(1)) <= 64
    return match.group(1)


def at(day: dt.date, hour: int, minute: int = 0) -> float:
    return dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=MADRID).timestamp()


def buttons(call) -> list[str]:
    markup = json.loads(call.wire.get("reply_markup") or "{}")
    return [b.get("callback_data") for row in markup.get("inline_keyboard", []) for b in row]


def utf16_slice(text: str, offset: int, length: int) -> str:
    units = text.encode("utf-16-le")
    return units[offset * 2:(offset + length) * 2].decode("utf-16-le")


@pytest.fixture
def now(tg) -> list[float]:
    clock = [at(DAY, 8)]
    tg.service.clock = lambda: clock[0]
    return clock


def the_puzzle(tg, post_id: int) -> dict:
    post = tg.storage.puzzle_post(post_id)
    return next(p for p in bank.load(post.variant) if p["id"] == post.puzzle_id)


async def subscribed_and_posted(tg, now) -> tuple[int, dict, int]:
    """Ana (a group admin) subscribes the group in Spanish; the day's post goes out at 09:00:
    (post id, puzzle, the post's message id)."""
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/lang es")
    await tg.say("ana", "/daily on italian")
    now[0] = at(DAY, 9)
    assert await tg.adapter.delivery_round() == 1
    post = tg.storage.daily_posts(PLATFORM, str(CHAT), 1)[0]
    message = tg.last_board()
    return post.id, the_puzzle(tg, post.id), message.message_id


async def test_daily_on_needs_a_group_administrator_asked_of_telegram(tg, now):
    await tg.say("bob", "/daily")                               # seeing the setting is for anyone
    assert tg.http.named("getChatMember") == []                 # so Telegram is not asked
    assert tg.http.named("sendMessage")[-1].params["text"] == t("en", "daily.none")
    await tg.say("bob", "/daily on")
    asked = tg.http.named("getChatMember")
    assert len(asked) == 1 and asked[0].params["user_id"] == USERS["bob"]["id"]
    assert tg.http.named("sendMessage")[-1].params["text"] == t("en", "error.admins_only", command="daily")
    assert tg.storage.subscription(PLATFORM, str(CHAT)) is None
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/daily on 08:30 Europe/Rome italian")
    assert len(tg.http.named("getChatMember")) == 2
    sub = tg.storage.subscription(PLATFORM, str(CHAT))
    assert (sub.time, sub.timezone, sub.variant, sub.active) == ("08:30", "Europe/Rome", "italian", True)
    assert "08:30" in tg.http.named("sendMessage")[-1].params["text"]
    # In her private chat with the bot, Ana administers it herself.
    await tg.say("ana", "/daily on", chat=private_chat("ana"))
    assert tg.storage.subscription(PLATFORM, str(USERS["ana"]["id"])).active
    assert len(tg.http.named("getChatMember")) == 2


async def test_the_daily_post_arrives_as_a_photo_with_its_buttons(tg, now):
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/lang es")
    await tg.say("ana", "/daily on italian")
    now[0] = at(DAY, 8, 59)
    assert await tg.adapter.delivery_round() == 0
    now[0] = at(DAY, 9)
    assert await tg.adapter.delivery_round() == 1
    call = tg.http.named("sendPhoto", ok_only=True)[-1]
    assert int(call.params["chat_id"]) == CHAT
    assert call.files["photo"].startswith(PNG)
    post = tg.storage.daily_posts(PLATFORM, str(CHAT), 1)[0]
    p = the_puzzle(tg, post.id)
    pos = Position.from_fen("italian", p["fen"])
    assert t("es", f"puzzle.to_win.{pos.turn}") in call.params["caption"]
    starts = sorted({m.start for m in pos.legal_moves()})
    assert buttons(call) == [f"zs:{post.id}:0:{s}" for s in starts] + [f"zh:{post.id}:0"]
    # Posted once: later rounds the same day send nothing.
    now[0] = at(DAY, 12)
    assert await tg.adapter.delivery_round() == 0
    assert len(tg.http.named("sendPhoto")) == 1


def group_texts(tg, after: int = 0) -> list[str]:
    """Texts and captions the bot sent to the group (successfully), from call index ``after`` on."""
    return [c.params.get("text") or c.params.get("caption") or "" for c in tg.http.calls[after:]
            if c.method in ("sendMessage", "sendPhoto") and c.status == 200 and int(c.params["chat_id"]) == CHAT]


def reactions_on(tg, message_id: int) -> list[str]:
    return [r["emoji"] for r in tg.http.messages[(CHAT, message_id)].extra.get("reactions", [])]


async def test_typed_answers_the_first_solver_announced_and_a_later_one_gets_a_reaction(tg, now):
    """Issue 17, item 1: a member's steps go to their private chat, the group sees a reaction
    on their message and, at the end, only the first solver's announcement."""
    post_id, p, message_id = await subscribed_and_posted(tg, now)
    line = p["solution"]
    ana = private_chat("ana")
    await tg.say("ana", "/start", chat=ana)                     # Ana has a private chat with the bot
    before = len(tg.http.calls)
    typed = await tg.say("ana", f"/m {line[0]}")
    assert group_texts(tg, before) == []
    assert reactions_on(tg, typed) == ["👍"]
    board = tg.http.named("sendPhoto", ok_only=True)[-1]
    assert int(board.params["chat_id"]) == ana["id"]
    assert right_text(p, line[1], "es") in board.params["caption"]
    assert board.files["photo"].startswith(PNG)
    await tg.say("ana", "/hint")
    await tg.say("ana", "/m " + " ".join(line[2:]))
    announcement = group_texts(tg, before)
    assert announcement == [t("es", "puzzle.first", name="Ana", day=day_words("es", DAY), streak=t("es", "streak.one"))]
    # Bob solves it too, typing the whole line as a reply to the post: a reaction, no message.
    bob_chat = private_chat("bob")
    await tg.say("bob", "/start", chat=bob_chat)
    before = len(tg.http.calls)
    bob = await tg.say("bob", " ".join(line), reply_to=message_id)
    assert group_texts(tg, before) == []
    reaction = tg.http.named("setMessageReaction", ok_only=True)
    assert int(reaction[-1].params["message_id"]) == bob
    assert tg.http.messages[(CHAT, bob)].extra["reactions"] == [{"type": "emoji", "emoji": "🎉"}]
    assert tg.storage.attempt(post_id, str(USERS["bob"]["id"])).solved_at is not None


async def test_a_wrong_and_an_illegal_answer_and_a_hint_are_never_said_in_the_group(tg, now):
    """Issue 17, items 1 and 5: misses, illegal tries and hints reach the member alone (here Eve
    has not started the private chat: the group gets its link once, nothing of the puzzle)."""
    post_id, p, message_id = await subscribed_and_posted(tg, now)
    pos = Position.from_fen("italian", p["fen"])
    wrong = next(str(m) for m in pos.legal_moves() if str(m) not in p["tree"])
    before = len(tg.http.calls)
    typed = await tg.say("eve", f"/m {wrong}")
    assert reactions_on(tg, typed) == ["👎"]
    assert tg.storage.attempt(post_id, str(USERS["eve"]["id"])).misses == 1
    texts = group_texts(tg, before)
    assert len(texts) == 1 and "start=" in texts[0] and wrong not in texts[0]
    tg.refusals_expected += 1                                   # her private chat is not open
    await tg.say("eve", "/hint")
    await tg.say("eve", "/m 1-50")
    square = p["solution"][0].replace("x", "-").split("-")[0]
    assert group_texts(tg, before)[1:] == []                    # the link once; no hint, no rule
    # Once she opened the private chat, all of it is there.
    eve = private_chat("eve")
    await tg.say("eve", "/start", chat=eve)
    await tg.say("eve", "/hint")
    private = [c.params["text"] for c in tg.http.named("sendMessage", ok_only=True)
               if int(c.params["chat_id"]) == eve["id"]]
    assert any(t("es", "puzzle.hint", square=square) in text for text in private)
    assert group_texts(tg, before)[1:] == []


async def test_a_piece_pressed_on_the_group_post_opens_the_private_chat(tg, now):
    post_id, p, message_id = await subscribed_and_posted(tg, now)
    square = int(p["solution"][0].replace("x", "-").split("-")[0])
    photos = len(tg.http.named("sendPhoto"))
    query = await tg.press("eve", f"zs:{post_id}:0:{square}", message_id)
    answers = tg.http.queries[query]["answers"]
    payload = signed_payload(answers[0]["url"], post_id)
    assert answers == [{"text": None, "show_alert": False,
                        "url": f"https://t.me/{BOT['username']}?start={payload}"}]
    # Nothing for everyone in the group, and the shared post is left as it was.
    assert len(tg.http.named("sendPhoto")) == photos and tg.http.named("editMessageMedia") == []
    # The link opens the private chat with /start p<post>_<signature>: Eve's board, with its buttons.
    eve = private_chat("eve")
    await tg.say("eve", f"/start {payload}", chat=eve)
    board = tg.http.named("sendPhoto", ok_only=True)[-1]
    assert int(board.params["chat_id"]) == eve["id"]
    assert f"zs:{post_id}:0:{square}" in buttons(board)
    # She plays the golpe there with the buttons: the private board is edited in place.
    await tg.press("eve", f"zs:{post_id}:0:{square}", chat=eve)
    edited = tg.http.named("editMessageMedia", ok_only=True)
    assert len(edited) == 1 and int(edited[0].params["chat_id"]) == eve["id"]
    target = next(b for b in buttons(edited[0]) if b.startswith(f"zd:{post_id}:0:{square}:")
                  and b.endswith(":" + p["solution"][0].replace("x", "-").split("-")[-1]))
    await tg.press("eve", target, chat=eve)
    assert tg.storage.attempt(post_id, str(USERS["eve"]["id"])).progress[:2] == tuple(p["solution"][:2])


async def test_the_next_days_post_hides_yesterdays_solution_behind_a_spoiler(tg, now):
    post_id, p, _ = await subscribed_and_posted(tg, now)
    line = " ".join(p["solution"])
    await tg.say("ana", f"/m {line}")
    tg.refusals_expected += 1       # her rating change, for a private chat she has not opened
    now[0] = at(DAY + dt.timedelta(days=1), 9)
    before = len(tg.http.calls)
    assert await tg.adapter.delivery_round() == 2
    spoilers = [c for c in tg.http.calls[before:] if c.method == "sendMessage" and "entities" in c.wire]
    assert len(spoilers) == 1
    text = spoilers[0].params["text"]
    entities = json.loads(spoilers[0].wire["entities"])
    assert [e["type"] for e in entities] == ["spoiler"]
    assert utf16_slice(text, entities[0]["offset"], entities[0]["length"]) == line
    assert "Ana" in text.replace(line, "")                   # who solved it, not hidden
    assert text.count(line) == 1
    # Then the day's new post.
    methods = [c.method for c in tg.http.calls[before:] if c.method.startswith("send")]
    assert methods == ["sendMessage", "sendPhoto"]


async def test_a_personal_puzzle_asked_in_the_group_waits_in_the_private_chat(tg, now):
    await tg.say("bob", "/puzzle triestina")
    text = tg.http.named("sendMessage")[-1].params["text"]
    post = tg.storage.personal_posts(PLATFORM, str(USERS["bob"]["id"]), 1)[0]
    payload = signed_payload(text, post.id)
    assert f"https://t.me/{BOT['username']}?start={payload}" in text and tg.http.named("sendPhoto") == []
    await tg.say("bob", f"/start {payload}", chat=private_chat("bob"))
    board = tg.http.named("sendPhoto", ok_only=True)[-1]
    assert int(board.params["chat_id"]) == USERS["bob"]["id"]
    assert board.files["photo"].startswith(PNG)
    assert f"zh:{post.id}:0" in buttons(board)
    # Somebody else following the link is told it is not valid for them.
    await tg.say("eve", f"/start {payload}", chat=private_chat("eve"))
    assert tg.http.named("sendMessage")[-1].params["text"] == t("it", "puzzle.link_invalid")


async def test_a_chat_that_removed_the_bot_is_unsubscribed(tg, now):
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/daily on")
    tg.http.kick(CHAT)
    now[0] = at(DAY, 9)
    assert await tg.adapter.delivery_round() == 0
    assert not tg.storage.subscription(PLATFORM, str(CHAT)).active
    assert [m.status for m in tg.storage.find_outbox(PLATFORM)] == ["dropped"]
    calls = len(tg.http.calls)
    now[0] = at(DAY + dt.timedelta(days=1), 9)
    assert await tg.adapter.delivery_round() == 0
    assert [c.method for c in tg.http.calls[calls:]] == []
    assert len(tg.storage.daily_posts(PLATFORM, str(CHAT), 10)) == 1


async def _solve_by_buttons_in_private(tg, user: str, post_id: int, p: dict) -> None:
    """The golpe played with the buttons of the user's board in their private chat."""
    chat = private_chat(user)
    for step in range(0, len(p["solution"]), 2):
        move = p["solution"][step]
        path = [int(s) for s in move.replace("x", "-").split("-")]
        await tg.press(user, f"zs:{post_id}:{step}:{path[0]}", chat=chat)
        await tg.press(user, f"zd:{post_id}:{step}:{path[0]}:{path[-1]}", chat=chat)
        board = tg.http.bot_messages(chat["id"], "photo")[-1]
        paths = [b for b in board.buttons() if b.startswith(f"zm:{post_id}:{step}:")]
        if paths:
            row = (board.markup or {}).get("inline_keyboard", [])
            chosen = next(b["callback_data"] for r in row for b in r
                          if b.get("callback_data", "").startswith(f"zm:{post_id}:") and b["text"].endswith(move))
            await tg.press(user, chosen, chat=chat)


async def test_a_first_solve_made_in_the_private_chat_is_announced_in_the_group(tg, now):
    post_id, p, message_id = await subscribed_and_posted(tg, now)
    square = int(p["solution"][0].replace("x", "-").split("-")[0])
    query = await tg.press("eve", f"zs:{post_id}:0:{square}", message_id)
    payload = signed_payload(tg.http.queries[query]["answers"][0]["url"], post_id)
    await tg.say("eve", f"/start {payload}", chat=private_chat("eve"))
    await _solve_by_buttons_in_private(tg, "eve", post_id, p)
    assert tg.storage.attempt(post_id, str(USERS["eve"]["id"])).solved_at is not None
    assert tg.storage.puzzle_post(post_id).first_solver_id == str(USERS["eve"]["id"])
    # The group hears it from the outbox, as everything the bot says in a chat it was not asked in.
    assert await tg.adapter.delivery_round() == 1
    announced = [c for c in tg.http.named("sendMessage", ok_only=True) if int(c.params["chat_id"]) == CHAT
                 and "Eve" in c.params["text"]]
    assert announced, "the group never heard who solved it first"


async def test_hand_made_puzzle_buttons_from_another_group_and_bare_links_are_refused(tg, now):
    """Issue 21, item 1: Eve, in another group, presses hand-made zs:/zd:/zm: buttons for the
    club's post on a message of the bot there, and opens p<post> links by hand: nothing answered."""
    post_id, p, _ = await subscribed_and_posted(tg, now)
    other = {"id": -100999, "type": "supergroup", "title": "Elsewhere"}
    await tg.say("eve", "/help", chat=other)
    pos = Position.from_fen("italian", p["fen"])
    key = pos.parse_move(p["solution"][0])
    refusals = {t(lang, "puzzle.not_member") for lang in ("en", "es", "it")}
    for data in (f"zs:{post_id}:0:{key.start}", f"zd:{post_id}:0:{key.start}:{key.end}",
                 f"zm:{post_id}:0:{pos.legal_moves().index(key)}", f"zh:{post_id}:0"):
        query = await tg.press("eve", data, chat=other)
        answers = tg.http.queries[query]["answers"]
        assert len(answers) == 1 and answers[0]["text"] in refusals and not answers[0].get("url"), answers
    for payload in (f"p{post_id}", f"p{post_id}_{'A' * 16}"):
        await tg.say("eve", f"/start {payload}", chat=private_chat("eve"))
        assert tg.http.named("sendMessage")[-1].params["text"] in {
            t(lang, "puzzle.link_invalid") for lang in ("en", "es", "it")}
    assert tg.storage.attempt(post_id, str(USERS["eve"]["id"])) is None
    assert tg.storage.puzzle_post(post_id).first_solver_id is None


async def test_a_hint_too_late_for_an_alert_goes_to_the_private_chat_not_the_group(tg, now):
    """Issue 17, item 1: a late alert is posted instead of shown; for a puzzle in a group that
    would give the hint to everyone, so it goes to the member's private chat."""
    post_id, p, message_id = await subscribed_and_posted(tg, now)
    eve = private_chat("eve")
    await tg.say("eve", "/start", chat=eve)
    before = len(tg.http.calls)
    async with tg.adapter.chat_lock(str(CHAT)):                # the group is busy
        press = asyncio.create_task(tg.press("eve", f"zh:{post_id}:0", message_id))
        await asyncio.sleep(tg.adapter.answer_within + 0.3)     # answered without an alert by then
    await press
    square = p["solution"][0].replace("x", "-").split("-")[0]
    hint = t("es", "puzzle.hint", square=square)
    assert group_texts(tg, before) == []
    private = [c.params["text"] for c in tg.http.named("sendMessage", ok_only=True)[-3:]
               if int(c.params["chat_id"]) == eve["id"]]
    assert any(hint in text for text in private)
