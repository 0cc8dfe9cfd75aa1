"""The fake Bot API's inline mode is as strict as Telegram's: answers to inline queries, the
inline messages users send from them, their button presses and their edits.

Driven through a real python-telegram-bot ``Bot``; the few requests PTB would never build go
straight to ``do_request``."""

from __future__ import annotations

import itertools
import json

import pytest
from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InlineQueryResultPhoto,
    InputFile,
    InputMediaPhoto,
    InputTextMessageContent,
    WebAppInfo,
)
from telegram.error import BadRequest
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter
from telegram_fake_api import GROUP, USERS, FakeBotAPI

PNG = b"\x89PNG\r\n\x1a\nboard"


class Clock:
    """The age of queries, moved on by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def api():
    # Telegram's clock moves on a minute between requests here: flood control has its own tests.
    ticks = itertools.count(0.0, 60.0)
    fake = FakeBotAPI(clock=lambda: next(ticks))
    fake.add_chat(GROUP)
    clock = Clock()
    fake.query_clock = clock
    bot = Bot("123:TEST", request=fake, get_updates_request=fake)
    async with bot:
        yield fake, bot, clock


async def refused(coro, fragment: str) -> None:
    with pytest.raises(BadRequest) as err:
        await coro
    assert fragment.lower() in str(err.value).lower()


async def raw(fake: FakeBotAPI, method: str, **params) -> dict:
    """A request PTB would not build: parameters as given."""
    parts = [RequestParameter(k, v, None) for k, v in params.items()]
    status, body = await fake.do_request(f"https://api.telegram.org/bot123:TEST/{method}", "POST",
                                         RequestData(parts))
    return {"status": status, **json.loads(body)}


def article(result_id: str = "a", text: str = "A challenge", title: str = "Title", data: str = "ix:1",
            **extra) -> InlineQueryResultArticle:
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Accept", callback_data=data)]])
    return InlineQueryResultArticle(result_id, title, InputTextMessageContent(text), reply_markup=markup, **extra)


async def an_inline_message(fake: FakeBotAPI, bot: Bot, text: str = "A challenge") -> str:
    query = fake.inline_query(USERS["ana"])
    await bot.answer_inline_query(query["id"], [article(text=text)])
    return fake.choose_inline_result(query["id"], "a")


async def test_an_answer_is_kept_with_its_cache_time_and_personal_flag(api):
    fake, bot, _ = api
    query = fake.inline_query(USERS["ana"], "white", chat_type="private")
    assert (query["query"], query["chat_type"], query["from"]) == ("white", "private", USERS["ana"])
    assert await bot.answer_inline_query(query["id"], [article("a"), article("b", description="d")],
                                         cache_time=60, is_personal=True) is True
    answer = fake.inline_queries[query["id"]]["answers"][-1]
    assert [r["id"] for r in answer["results"]] == ["a", "b"]
    assert (answer["cache_time"], answer["is_personal"]) == (60, True)
    # Nothing to offer is an answer too (Telegram shows no results).
    empty = fake.inline_query(USERS["bob"])
    assert await bot.answer_inline_query(empty["id"], []) is True


async def test_a_query_is_answered_once_and_within_ten_seconds(api):
    fake, bot, clock = api
    query = fake.inline_query(USERS["ana"])
    await bot.answer_inline_query(query["id"], [article()])
    await refused(bot.answer_inline_query(query["id"], [article()]), "query is too old")
    late = fake.inline_query(USERS["ana"])
    clock.now += 10.5
    await refused(bot.answer_inline_query(late["id"], [article()]), "query is too old")
    await refused(bot.answer_inline_query("424242", [article()]), "query is too old")
    in_time = fake.inline_query(USERS["ana"])
    clock.now += 9.5
    await bot.answer_inline_query(in_time["id"], [article()])


@pytest.mark.parametrize(("results", "error"), [
    ([article(str(n)) for n in range(51)], "RESULTS_TOO_MUCH"),
    ([article("a"), article("a")], "RESULT_ID_DUPLICATE"),
    ([article("x" * 65)], "RESULT_ID_INVALID"),
    ([article("é" * 33)], "RESULT_ID_INVALID"),            # 66 bytes in UTF-8
    ([article(title=" ")], "RESULT_TITLE_EMPTY"),
    ([article(text=" ")], "MESSAGE_EMPTY"),
    ([article(text="x" * 4097)], "MESSAGE_TOO_LONG"),
    ([article(data="x" * 65)], "BUTTON_DATA_INVALID"),
    ([InlineQueryResultPhoto("p", "https://example.org/p.png", "https://example.org/t.png")], "article results only"),
])
async def test_malformed_results_are_refused(api, results, error):
    fake, bot, _ = api
    query = fake.inline_query(USERS["ana"])
    await refused(bot.answer_inline_query(query["id"], results), error)
    assert fake.inline_queries[query["id"]]["answers"] == []


async def test_results_without_an_id_or_content_and_bad_flags_are_refused(api):
    fake, _, _ = api
    good = {"type": "article", "id": "a", "title": "T", "input_message_content": {"message_text": "m"}}
    cases = [
        ({"results": json.dumps([{**good, "id": ""}])}, "RESULT_ID_INVALID"),
        ({"results": json.dumps([{k: v for k, v in good.items() if k != "input_message_content"}])}, "MESSAGE_EMPTY"),
        ({"results": json.dumps([{**good, "type": "carousel"}])}, "result type is invalid"),
        ({"results": json.dumps([good]), "cache_time": -5}, "cache_time"),
        ({"results": json.dumps([good]), "is_personal": "maybe"}, "is_personal"),
        ({"results": "{not json"}, "can't parse inline query results"),
    ]
    for params, error in cases:
        query = fake.inline_query(USERS["ana"])
        answer = await raw(fake, "answerInlineQuery", inline_query_id=query["id"], **params)
        assert answer["status"] == 400 and error.lower() in answer["description"].lower(), (params, answer)


async def test_a_press_on_an_inline_message_carries_its_id_and_no_message(api):
    fake, bot, clock = api
    inline_id = await an_inline_message(fake, bot)
    assert fake.inline_messages[inline_id].text == "A challenge"
    press = fake.inline_callback_query(USERS["bob"], inline_id, "ix:1")
    assert press["inline_message_id"] == inline_id and "message" not in press and press["data"] == "ix:1"
    assert await bot.answer_callback_query(press["id"], "fine") is True
    # Presses are answered within 15 s, from inline messages too.
    late = fake.inline_callback_query(USERS["bob"], inline_id, "anything a client sends")
    clock.now += 15.5
    await refused(bot.answer_callback_query(late["id"]), "query is too old")
    chosen = fake.chosen_inline_result(fake.inline_query(USERS["ana"])["id"], "a", inline_id)
    assert chosen["inline_message_id"] == inline_id


async def test_an_inline_message_is_edited_by_its_id_alone(api):
    fake, bot, _ = api
    inline_id = await an_inline_message(fake, bot)
    link = InlineKeyboardMarkup([[InlineKeyboardButton("Open board", url="https://t.me/DraughtsBot/board?startapp=g1")]])
    # The bot gets True for an inline message, not the message.
    assert await bot.edit_message_text("Game #1", inline_message_id=inline_id, reply_markup=link) is True
    stored = fake.inline_messages[inline_id]
    assert stored.text == "Game #1" and stored.markup == link.to_dict()
    await refused(bot.edit_message_text("Game #1", inline_message_id=inline_id, reply_markup=link), "not modified")
    assert await bot.edit_message_reply_markup(inline_message_id=inline_id) is True
    assert fake.inline_messages[inline_id].markup is None
    await refused(bot.edit_message_caption(inline_message_id=inline_id, caption="c"), "no caption")
    await refused(bot.edit_message_text("x", inline_message_id="AgAAAnope"), "MESSAGE_ID_INVALID")
    fake.forget_inline(inline_id)
    await refused(bot.edit_message_text("Game #2", inline_message_id=inline_id), "MESSAGE_ID_INVALID")


async def test_an_edit_names_the_message_one_way_only(api):
    fake, bot, _ = api
    inline_id = await an_inline_message(fake, bot)
    sent = await bot.send_message(GROUP["id"], "plain")
    both = await raw(fake, "editMessageText", text="x", chat_id=GROUP["id"], message_id=sent.message_id,
                     inline_message_id=inline_id)
    assert both["status"] == 400 and "can't be used together" in both["description"]
    neither = await raw(fake, "editMessageText", text="x")
    assert neither["status"] == 400 and "message identifier is not specified" in neither["description"]
    assert fake.inline_messages[inline_id].text == "A challenge"


async def test_an_inline_message_takes_no_uploaded_file(api):
    fake, bot, _ = api
    inline_id = await an_inline_message(fake, bot)
    upload = InputMediaPhoto(InputFile(PNG, filename="board.png", attach=True))
    await refused(bot.edit_message_media(upload, inline_message_id=inline_id), "uploaded files in inline messages")
    # By URL it could be, if the message had media: an article's message is text.
    await refused(bot.edit_message_media(InputMediaPhoto("https://example.org/board.png"), inline_message_id=inline_id),
                  "no media in the message")
    assert fake.inline_messages[inline_id].kind == "text"


async def test_url_buttons_must_be_links(api):
    fake, bot, _ = api
    for url in ("javascript:alert(1)", "https://", "board/1"):
        markup = InlineKeyboardMarkup([[InlineKeyboardButton("Open", url=url)]])
        await refused(bot.send_message(GROUP["id"], "m", reply_markup=markup), "BUTTON_URL_INVALID")
    for url in ("https://damas.example.org/game/1", "tg://resolve?domain=DraughtsBot"):
        markup = InlineKeyboardMarkup([[InlineKeyboardButton("Open", url=url)]])
        assert (await bot.send_message(GROUP["id"], url, reply_markup=markup)).text == url


async def test_web_app_buttons_only_in_private_chats_and_only_to_https(api):
    fake, bot, _ = api
    app = InlineKeyboardMarkup([[InlineKeyboardButton("Open", web_app=WebAppInfo("https://board.example.org/tg"))]])
    # A group, an inline message, an inline result: Telegram takes a Mini App button in none of them.
    await refused(bot.send_message(GROUP["id"], "m", reply_markup=app), "BUTTON_TYPE_INVALID")
    inline_id = await an_inline_message(fake, bot)
    await refused(bot.edit_message_text("n", inline_message_id=inline_id, reply_markup=app), "BUTTON_TYPE_INVALID")
    query = fake.inline_query(USERS["ana"])
    result = InlineQueryResultArticle("a", "T", InputTextMessageContent("x"), reply_markup=app)
    await refused(bot.answer_inline_query(query["id"], [result]), "BUTTON_TYPE_INVALID")
    # A private chat with the bot does, to an https address only.
    private = fake.start_private("ana")
    sent = await bot.send_message(private["id"], "m", reply_markup=app)
    assert sent.reply_markup.inline_keyboard[0][0].web_app.url == "https://board.example.org/tg"
    plain = InlineKeyboardMarkup([[InlineKeyboardButton("Open", web_app=WebAppInfo("http://board.example.org/tg"))]])
    await refused(bot.send_message(private["id"], "m", reply_markup=plain), "BUTTON_URL_INVALID")
