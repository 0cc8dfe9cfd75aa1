"""The fake Bot API is strict: each class of request the real Bot API refuses is refused here too.

Driven through a real python-telegram-bot ``Bot``, so the requests are exactly what PTB puts on
the wire; the few malformed ones PTB would never build go straight to ``do_request``."""

from __future__ import annotations

import itertools
import json

import pytest
from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    InputMediaPhoto,
    MessageEntity,
    User,
)
from telegram.error import BadRequest, ChatMigrated, Forbidden, RetryAfter
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter
from telegram_fake_api import GROUP, USERS, FakeBotAPI
from tg_helpers import PRIVATE_ANA as PRIVATE
from tg_helpers import fake_on_a_hand_clock, told_to_wait

from bot.platforms.telegram.limiter import retry_seconds

PNG = b"\x89PNG\r\n\x1a\nboard-one"
PNG2 = b"\x89PNG\r\n\x1a\nboard-two"
CHAT = GROUP["id"]


@pytest.fixture
async def api():
    # Telegram's clock moves on a minute between requests here: flood control has its own tests.
    ticks = itertools.count(0.0, 60.0)
    fake = FakeBotAPI(clock=lambda: next(ticks))
    fake.add_chat(GROUP)
    bot = Bot("123:TEST", request=fake, get_updates_request=fake)
    async with bot:
        yield fake, bot


def keyboard(*rows: list[str]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d[:10] or "x", callback_data=d) for d in row]
                                 for row in rows])


def photo(data: bytes = PNG, caption: str | None = "c") -> InputMediaPhoto:
    return InputMediaPhoto(InputFile(data, filename="board.png", attach=True), caption=caption)


async def raw(fake: FakeBotAPI, method: str, files: dict[str, bytes] | None = None, **params) -> dict:
    """A request PTB would not build: parameters as given, optional extra upload parts."""
    parts = [RequestParameter(k, v, None) for k, v in params.items()]
    parts += [RequestParameter(name, None, [InputFile(data, filename=name, attach=False)])
              for name, data in (files or {}).items()]
    status, body = await fake.do_request(f"https://api.telegram.org/bot123:TEST/{method}", "POST",
                                         RequestData(parts))
    return {"status": status, **json.loads(body)}


async def refused(coro, fragment: str, kind: type[Exception] = BadRequest) -> None:
    with pytest.raises(kind) as err:
        await coro
    assert fragment.lower() in str(err.value).lower()


async def test_a_valid_board_send_and_edit_go_through(api):
    fake, bot = api
    sent = await bot.send_photo(CHAT, InputFile(PNG, filename="board.png"), caption="start",
                                reply_markup=keyboard(["s:1:0:22"]))
    edited = await bot.edit_message_media(photo(PNG2, "next"), CHAT, sent.message_id, reply_markup=keyboard(["p:1:0"]))
    assert edited.caption == "next" and fake.refused() == []
    media = fake.media_json(fake.named("editMessageMedia")[-1])
    assert media["media"].startswith("attach://") and fake.upload(fake.named("editMessageMedia")[-1]) == PNG2


async def test_media_not_attached_by_reference_is_refused(api):
    # The adapter's old bug: an InputFile built without attach=True goes up as a stray part.
    fake, bot = api
    sent = await bot.send_photo(CHAT, InputFile(PNG, filename="board.png"))
    stray = InputMediaPhoto(InputFile(PNG2, filename="board.png"), caption="x")
    await refused(bot.edit_message_media(stray, CHAT, sent.message_id), "can't parse InputMedia: media not found")


async def test_attach_name_missing_from_the_body_is_refused(api):
    fake, bot = api
    sent = await bot.send_photo(CHAT, InputFile(PNG, filename="board.png"))
    answer = await raw(fake, "editMessageMedia", chat_id=CHAT, message_id=sent.message_id,
                       media=json.dumps({"type": "photo", "media": "attach://board"}),
                       files={"other": PNG2})
    assert answer["status"] == 400 and "not found in the request" in answer["description"]


async def test_a_stray_upload_part_is_refused(api):
    fake, _ = api
    answer = await raw(fake, "sendMessage", chat_id=CHAT, text="hi", files={"photo": PNG})
    assert answer["status"] == 400 and "not referenced" in answer["description"]


@pytest.mark.parametrize("media, fragment", [
    ({"media": "attach://x"}, "media type invalid"),
    ({"type": "sticker", "media": "attach://x"}, "media type invalid"),
    ({"type": "photo", "media": 5}, "media is not a string"),
    ({"type": "photo", "media": "not-a-file-we-know"}, "wrong file identifier"),
    ({"type": "photo", "media": "attach://x", "caption": "c" * 1025}, "caption is too long"),
])
async def test_bad_input_media_is_refused(api, media, fragment):
    fake, bot = api
    sent = await bot.send_photo(CHAT, InputFile(PNG, filename="board.png"))
    answer = await raw(fake, "editMessageMedia", chat_id=CHAT, message_id=sent.message_id,
                       media=json.dumps(media), files={"x": PNG2})
    assert answer["status"] == 400 and fragment in answer["description"]


@pytest.mark.parametrize("method, params, fragment", [
    ("sendMessage", {"chat_id": CHAT}, "message text is empty"),
    ("sendMessage", {"text": "hi"}, "chat_id is empty"),
    ("sendPhoto", {"chat_id": CHAT}, "photo is empty"),
    ("sendDocument", {"chat_id": CHAT}, "document is empty"),
    ("editMessageMedia", {"chat_id": CHAT, "message_id": 1}, "media is empty"),
    ("answerCallbackQuery", {}, "callback_query_id is empty"),
])
async def test_required_parameters(api, method, params, fragment):
    answer = await raw(api[0], method, **params)
    assert answer["status"] == 400 and fragment in answer["description"]


async def test_unknown_methods_and_chats(api):
    fake, bot = api
    assert (await raw(fake, "sendSticker", chat_id=CHAT, sticker="x"))["status"] == 404
    await refused(bot.send_message(-555, "hi"), "chat not found")


async def test_text_and_caption_limits(api):
    fake, bot = api
    await bot.send_message(CHAT, "x" * 4096)
    await refused(bot.send_message(CHAT, "x" * 4097), "message is too long")
    await refused(bot.send_message(CHAT, "   "), "message text is empty")
    await bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), caption="c" * 1024)
    await refused(bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), caption="c" * 1025), "caption is too long")


@pytest.mark.parametrize("rows, fragment", [
    ([["x" * 65]], "BUTTON_DATA_INVALID"),
    ([["é" * 33]], "BUTTON_DATA_INVALID"),              # 33 characters, 66 bytes
    ([[str(i) for i in range(9)]], "REPLY_MARKUP_TOO_LONG"),
    ([[f"{r}:{c}" for c in range(8)] for r in range(13)], "REPLY_MARKUP_TOO_LONG"),   # 104 buttons
])
async def test_keyboard_limits(api, rows, fragment):
    _, bot = api
    await refused(bot.send_message(CHAT, "k", reply_markup=keyboard(*rows)), fragment)


async def test_keyboards_at_the_limits_pass(api):
    _, bot = api
    await bot.send_message(CHAT, "k", reply_markup=keyboard(*[[f"{r}:{c}" for c in range(8)] for r in range(12)],
                                                             ["a", "b", "c", "d"]))       # 100 buttons
    await bot.send_message(CHAT, "k", reply_markup=keyboard(["x" * 64]))


async def test_empty_callback_data_and_buttons_without_action(api):
    fake, _ = api
    empty = {"inline_keyboard": [[{"text": "a", "callback_data": ""}]]}
    none = {"inline_keyboard": [[{"text": "a"}]]}
    no_text = {"inline_keyboard": [[{"text": "", "callback_data": "x"}]]}
    for markup, fragment in ((empty, "BUTTON_DATA_INVALID"), (none, "exactly one"), (no_text, "Text buttons")):
        answer = await raw(fake, "sendMessage", chat_id=CHAT, text="k", reply_markup=json.dumps(markup))
        assert answer["status"] == 400 and fragment in answer["description"]


async def test_edits_only_of_the_bots_own_media_messages_in_their_chat(api):
    fake, bot = api
    other = dict(GROUP, id=-100999)
    fake.add_chat(other)
    board = await bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), caption="c")
    text = await bot.send_message(CHAT, "just text")
    user = fake.incoming(GROUP, USERS["ana"], "hello")
    await refused(bot.edit_message_media(photo(), CHAT, 4242), "message to edit not found")
    await refused(bot.edit_message_media(photo(), other["id"], board.message_id), "message to edit not found")
    await refused(bot.edit_message_media(photo(), CHAT, user["message_id"]), "message can't be edited")
    await refused(bot.edit_message_media(photo(), CHAT, text.message_id), "there is no media in the message to edit")


async def test_identical_edit_is_not_modified(api):
    _, bot = api
    board = await bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), caption="c", reply_markup=keyboard(["a"]))
    await refused(bot.edit_message_media(photo(PNG, "c"), CHAT, board.message_id, reply_markup=keyboard(["a"])),
                  "message is not modified")
    await bot.edit_message_media(photo(PNG, "c"), CHAT, board.message_id)          # keyboard removed: a change


async def test_replies_only_to_existing_messages(api):
    fake, bot = api
    await refused(bot.send_message(CHAT, "r", reply_to_message_id=777), "message to be replied not found")
    await bot.send_message(CHAT, "r", reply_to_message_id=777, allow_sending_without_reply=True)
    asked = fake.incoming(GROUP, USERS["bob"], "/help")
    await bot.send_message(CHAT, "r", reply_to_message_id=asked["message_id"])


async def test_callback_queries_are_answered_once(api):
    fake, bot = api
    await bot.send_message(CHAT, "k", reply_markup=keyboard(["a"]))
    query = fake.callback_query(GROUP, USERS["ana"], "a")
    await refused(bot.answer_callback_query(query["id"], "x" * 201, show_alert=True), "MESSAGE_TOO_LONG")
    await bot.answer_callback_query(query["id"], "fine")
    await refused(bot.answer_callback_query(query["id"]), "query is too old")
    await refused(bot.answer_callback_query("424242"), "query is too old")
    assert fake.unanswered_or_twice() == [query["id"]]          # three attempts on one query


async def test_scenes_a_test_can_stage(api):
    fake, bot = api
    fake.fail("sendMessage", 502, "Bad Gateway")
    with pytest.raises(Exception, match="Bad Gateway"):
        await bot.send_message(CHAT, "x")
    await bot.send_message(CHAT, "x")
    fake.migrate(CHAT, -100888)
    with pytest.raises(ChatMigrated):
        await bot.send_message(CHAT, "x")
    fake.kick(-100888)
    await refused(bot.send_message(-100888, "x"), "kicked", Forbidden)
    assert all(c.injected for c in fake.refused())


# -- mentions and private chats (issue 15, item 14) ----------------------------------------------------


async def test_a_text_mention_is_kept_and_tells_who_is_notified(api):
    fake, bot = api
    bob = User(USERS["bob"]["id"], "Bob", is_bot=False)
    sent = await bot.send_message(CHAT, "Your turn, Bob", entities=[MessageEntity("text_mention", 11, 3, user=bob)])
    assert fake.notified(fake.messages[(CHAT, sent.message_id)]) == [USERS["bob"]["id"]]
    assert sent.entities[0].user.id == USERS["bob"]["id"]
    shown = await bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), caption="Bob to move",
                                 caption_entities=[MessageEntity("text_mention", 0, 3, user=bob)])
    assert fake.notified(fake.messages[(CHAT, shown.message_id)]) == [USERS["bob"]["id"]]
    plain = await bot.send_message(CHAT, "Bob to move")
    assert fake.notified(fake.messages[(CHAT, plain.message_id)]) == []


async def test_an_at_mention_notifies_that_user(api):
    fake, bot = api
    sent = await bot.send_message(CHAT, "hi @eve")
    stored = fake.messages[(CHAT, sent.message_id)]
    stored.extra["entities"] = [{"type": "mention", "offset": 3, "length": 4}]
    assert fake.notified(stored) == [USERS["eve"]["id"]]


async def test_a_text_mention_without_a_user_or_outside_the_caption_is_refused(api):
    fake, bot = api
    bad_user = json.dumps([{"type": "text_mention", "offset": 0, "length": 3}])
    answer = await raw(fake, "sendMessage", chat_id=CHAT, text="Bob", entities=bad_user)
    assert answer["status"] == 400 and "text_mention" in answer["description"]
    bob = User(USERS["bob"]["id"], "Bob", is_bot=False)
    await refused(bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), caption="Bob",
                                 caption_entities=[MessageEntity("text_mention", 2, 5, user=bob)]),
                  "out of the text")


async def test_parse_mode_with_entities_is_refused(api):
    fake, _ = api
    bold = json.dumps([{"type": "bold", "offset": 0, "length": 3}])
    answer = await raw(fake, "sendMessage", chat_id=CHAT, text="Bob", entities=bold, parse_mode="HTML")
    assert answer["status"] == 400 and "parse_mode" in answer["description"]


async def test_a_user_who_never_started_the_bot_cannot_be_written_to(api):
    fake, bot = api
    with pytest.raises(Forbidden, match="initiate conversation"):
        await bot.send_message(USERS["bob"]["id"], "your turn")
    fake.start_private("bob")
    sent = await bot.send_message(USERS["bob"]["id"], "your turn")
    assert sent.chat.type == "private"


# -- flood control, permissions, expiring queries ------------------------------------------------------------


@pytest.fixture
async def timed():
    """A fake on a clock the test moves by hand (``now[0]``)."""
    async for fake_bot_now in fake_on_a_hand_clock():
        yield fake_bot_now


async def test_a_chat_takes_a_short_burst_then_one_message_a_second(timed):
    fake, bot, now = timed
    for n in range(3):
        await bot.send_message(PRIVATE["id"], f"m{n}")
    assert await told_to_wait(bot.send_message(PRIVATE["id"], "one too many")) == 1
    assert fake.refused()[-1].status == 429 and not fake.refused()[-1].injected
    now[0] += 1.0
    await bot.send_message(PRIVATE["id"], "a second later")


async def test_a_group_takes_twenty_messages_a_minute(timed):
    fake, bot, now = timed
    sent = 0
    with pytest.raises(RetryAfter) as err:
        while sent < 60:
            await bot.send_message(CHAT, f"m{sent}")      # one a second: fine in a private chat
            sent += 1
            now[0] += 1.0
    # A burst of 20, then one every 3 s: the budget runs out before the first minute does.
    assert 20 <= sent < 30
    wait = retry_seconds(err.value)
    assert 1 <= wait <= 3
    now[0] += wait
    await bot.send_message(CHAT, "later")
    await bot.send_message(PRIVATE["id"], "another chat is not held back")


async def test_the_bot_posts_thirty_messages_a_second_in_all(timed):
    fake, bot, now = timed
    for n in range(30):
        fake.add_chat({"id": 100 + n, "type": "private", "first_name": f"U{n}"})
        await bot.send_message(100 + n, "hello")
    fake.add_chat({"id": 99, "type": "private", "first_name": "Late"})
    assert await told_to_wait(bot.send_message(99, "the 31st in a second")) == 1


async def test_edits_count_against_flood_control_and_answers_do_not(timed):
    fake, bot, now = timed
    sent = await bot.send_photo(CHAT, InputFile(PNG, filename="board.png"), caption="start",
                                reply_markup=keyboard(["s:1:0:22"]))
    await bot.edit_message_caption(CHAT, sent.message_id, caption="one")
    await bot.edit_message_caption(CHAT, sent.message_id, caption="two")
    await told_to_wait(bot.edit_message_caption(CHAT, sent.message_id, caption="three"))
    query = fake.callback_query(GROUP, USERS["ana"], "s:1:0:22")
    assert await bot.answer_callback_query(query["id"]) is True


async def test_a_chat_held_in_flood_control_gets_429_until_it_ends(timed):
    fake, bot, now = timed
    fake.flood(CHAT, 3600)
    assert await told_to_wait(bot.send_message(CHAT, "hello")) == 3600
    now[0] += 3000
    assert await told_to_wait(bot.send_message(CHAT, "hello")) == 600
    await bot.send_message(PRIVATE["id"], "other chats are not held")
    now[0] += 600
    await bot.send_message(CHAT, "over")


async def test_an_answer_to_a_query_older_than_15_s_is_refused(api):
    fake, bot = api
    await bot.send_message(CHAT, "board", reply_markup=keyboard(["s:1:0:22"]))
    query = fake.callback_query(GROUP, USERS["ana"], "s:1:0:22")
    fake.queries[query["id"]]["at"] -= 16
    await refused(bot.answer_callback_query(query["id"]), "query is too old")
    fresh = fake.callback_query(GROUP, USERS["ana"], "s:1:0:22")
    fake.queries[fresh["id"]]["at"] -= 14
    assert await bot.answer_callback_query(fresh["id"]) is True


async def test_a_group_that_forbids_photos_refuses_photos_and_photo_edits(api):
    fake, bot = api
    sent = await bot.send_photo(CHAT, InputFile(PNG, filename="board.png"), caption="before")
    fake.restrict(CHAT, "photos")
    await refused(bot.send_photo(CHAT, InputFile(PNG, filename="board.png")),
                  "not enough rights to send photos to the chat")
    await refused(bot.edit_message_media(photo(PNG2, "next"), CHAT, sent.message_id),
                  "not enough rights to send photos to the chat")
    await bot.send_message(CHAT, "text still goes")
    await bot.send_document(CHAT, InputFile(b"[Event]", filename="game.pdn"))


async def test_a_group_that_forbids_documents_refuses_documents(api):
    fake, bot = api
    fake.restrict(CHAT, "documents")
    await refused(bot.send_document(CHAT, InputFile(b"[Event]", filename="game.pdn")),
                  "not enough rights to send documents to the chat")
    await bot.send_photo(CHAT, InputFile(PNG, filename="board.png"))


async def test_a_group_that_forbids_gifs_refuses_animations(api):
    fake, bot = api
    fake.restrict(CHAT, "animations")
    await refused(bot.send_animation(CHAT, InputFile(b"GIF89a", filename="capture.gif")),
                  "not enough rights to send animations to the chat")
    await bot.send_photo(CHAT, InputFile(PNG, filename="board.png"))


async def test_a_group_where_the_bot_may_not_write_refuses_every_message(api):
    fake, bot = api
    fake.restrict(CHAT, "messages")
    await refused(bot.send_message(CHAT, "hello"), "not enough rights to send text messages to the chat")
    await refused(bot.send_photo(CHAT, InputFile(PNG, filename="board.png")), "not enough rights to send")


async def test_a_text_board_is_edited_as_text(api):
    fake, bot = api
    sent = await bot.send_message(CHAT, "board", reply_markup=keyboard(["s:1:0:22"]))
    edited = await bot.edit_message_text("moved", CHAT, sent.message_id, reply_markup=keyboard(["p:1:0"]))
    assert edited.text == "moved" and fake.messages[(CHAT, sent.message_id)].buttons() == ["p:1:0"]
    await refused(bot.edit_message_text("moved", CHAT, sent.message_id, reply_markup=keyboard(["p:1:0"])),
                  "message is not modified")
    photo_board = await bot.send_photo(CHAT, InputFile(PNG, filename="board.png"))
    await refused(bot.edit_message_text("x", CHAT, photo_board.message_id), "there is no text in the message")
