"""The fake Bot API's group rules: forum topics, the command menu, privacy-mode delivery, messages
written as a chat, and a second poller.  Each refusal the real Bot API gives is checked here,
through a real python-telegram-bot ``Bot``."""

from __future__ import annotations

import json

import pytest
from telegram import Bot, BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeChat, InputFile, Message
from telegram.error import BadRequest, Conflict
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter
from telegram_fake_api import (
    ANONYMOUS_ADMIN,
    BOT,
    CHANNEL,
    CHANNEL_BOT,
    GROUP,
    USERS,
    FakeBotAPI,
)

CHAT = GROUP["id"]
PNG = b"\x89PNG\r\n\x1a\nboard"


@pytest.fixture
async def api():
    fake = FakeBotAPI()
    fake.add_chat(GROUP)
    bot = Bot("123:TEST", request=fake, get_updates_request=fake)
    async with bot:
        yield fake, bot


async def refused(coro, fragment: str, kind: type[Exception] = BadRequest) -> None:
    with pytest.raises(kind) as err:
        await coro
    assert fragment.lower() in str(err.value).lower()


# -- forum topics -------------------------------------------------------------------------------


async def test_a_send_with_a_thread_id_lands_in_that_topic_and_without_one_in_general(api):
    fake, bot = api
    topic = fake.open_topic(GROUP, "Draughts", USERS["ana"])
    there = await bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), message_thread_id=topic)
    general = await bot.send_message(CHAT, "hi")
    assert (there.message_thread_id, there.is_topic_message) == (topic, True)
    assert general.message_thread_id is None and not general.is_topic_message
    assert fake.messages[(CHAT, there.message_id)].thread == topic


async def test_a_reply_without_thread_id_follows_its_message_into_the_topic(api):
    fake, bot = api
    topic = fake.open_topic(GROUP, "Draughts", USERS["ana"])
    asked = Message.de_json(fake.incoming(GROUP, USERS["bob"], "/help", thread=topic), bot)
    # As Telegram sends it: in the topic, and a reply to the topic's creation message.
    assert asked.is_topic_message and asked.message_thread_id == topic
    assert asked.reply_to_message.message_id == topic and asked.reply_to_message.forum_topic_created
    answer = await bot.send_message(CHAT, "r", reply_to_message_id=asked.message_id)
    assert answer.message_thread_id == topic


async def test_a_send_to_a_closed_topic_is_refused_topic_closed(api):
    fake, bot = api
    topic = fake.open_topic(GROUP, "Draughts", USERS["ana"])
    fake.close_topic(CHAT, topic)
    await refused(bot.send_message(CHAT, "x", message_thread_id=topic), "TOPIC_CLOSED")
    await refused(bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), message_thread_id=topic), "TOPIC_CLOSED")
    await bot.send_message(CHAT, "General is still open")


async def test_a_send_to_a_closed_general_is_refused_topic_closed(api):
    fake, bot = api
    topic = fake.open_topic(GROUP, "Draughts", USERS["ana"])
    fake.close_topic(CHAT, None)
    await refused(bot.send_message(CHAT, "x"), "TOPIC_CLOSED")
    await bot.send_message(CHAT, "the topic is still open", message_thread_id=topic)


@pytest.mark.parametrize("case", ["unknown", "general", "deleted", "not_a_forum"])
async def test_a_send_to_a_thread_that_is_no_open_topic_is_refused(api, case):
    fake, bot = api
    chat = CHAT
    if case == "not_a_forum":
        chat, thread = -100555, 7
        fake.add_chat(dict(GROUP, id=chat))
    else:
        topic = fake.open_topic(GROUP, "Draughts", USERS["ana"])
        thread = {"unknown": 4242, "general": 1, "deleted": topic}[case]
        if case == "deleted":
            fake.delete_topic(CHAT, topic)
    await refused(bot.send_message(chat, "x", message_thread_id=thread), "message thread not found")


async def test_in_a_topic_a_reply_to_a_missing_message_is_refused_even_when_allowed(api):
    fake, bot = api
    topic = fake.open_topic(GROUP, "Draughts", USERS["ana"])
    await refused(bot.send_message(CHAT, "r", message_thread_id=topic, reply_to_message_id=777,
                                   allow_sending_without_reply=True), "message to be replied not found")
    await bot.send_message(CHAT, "r", reply_to_message_id=777, allow_sending_without_reply=True)     # General


# -- the command menu ------------------------------------------------------------------------------


async def test_valid_command_menus_are_kept_per_scope_and_language(api):
    fake, bot = api
    await bot.set_my_commands([BotCommand("m", "play a move"), BotCommand("new_game", "x" * 256)])
    await bot.set_my_commands([BotCommand("mover", "jugar")], language_code="es",
                              scope=BotCommandScopeAllGroupChats())
    assert [c.command for c in await bot.get_my_commands()] == ["m", "new_game"]
    assert [c.command for c in await bot.get_my_commands(language_code="es",
                                                         scope=BotCommandScopeAllGroupChats())] == ["mover"]
    assert await bot.get_my_commands(language_code="it") == ()


@pytest.mark.parametrize("name", ["", "x" * 33, "Move", "máquina", "m-1", "m 1"])
async def test_a_command_name_outside_a_to_z_0_to_9_and_underscore_is_refused(api, name):
    _, bot = api
    await refused(bot.set_my_commands([BotCommand(name, "d")]), "BOT_COMMAND_INVALID")


@pytest.mark.parametrize("description", ["", "   ", "x" * 257])
async def test_a_command_description_outside_1_to_256_characters_is_refused(api, description):
    _, bot = api
    await refused(bot.set_my_commands([BotCommand("m", description)]), "BOT_COMMAND_DESCRIPTION_INVALID")


async def test_more_than_100_commands_are_refused(api):
    _, bot = api
    await bot.set_my_commands([BotCommand(f"c{i}", "d") for i in range(100)])
    await refused(bot.set_my_commands([BotCommand(f"c{i}", "d") for i in range(101)]), "BOT_COMMANDS_TOO_MUCH")


async def test_a_bad_language_code_or_scope_chat_is_refused(api):
    _, bot = api
    await refused(bot.set_my_commands([BotCommand("m", "d")], language_code="spa"), "invalid language code")
    await refused(bot.set_my_commands([BotCommand("m", "d")], scope=BotCommandScopeChat(-555)), "chat not found")


# -- who writes, and what reaches the bot ----------------------------------------------------------


async def test_an_anonymous_admin_writes_as_the_group_and_a_member_as_their_channel(api):
    fake, bot = api
    anonymous = Message.de_json(fake.incoming(GROUP, USERS["ana"], "/daily on", sender_chat=GROUP), bot)
    assert anonymous.from_user.id == ANONYMOUS_ADMIN["id"] and anonymous.from_user.is_bot
    assert anonymous.sender_chat.id == CHAT
    as_channel = Message.de_json(fake.incoming(GROUP, USERS["bob"], "/daily on", sender_chat=CHANNEL), bot)
    assert as_channel.from_user.id == CHANNEL_BOT["id"] and as_channel.sender_chat.type == "channel"


async def test_privacy_mode_a_bare_command_reaches_only_the_bot_that_spoke_last(api):
    fake, bot = api
    board = await bot.send_photo(CHAT, InputFile(PNG, filename="b.png"))
    assert fake.reaches_bot(fake.incoming(GROUP, USERS["ana"], "/m 22-18"))        # ours spoke last
    fake.other_bot_says(GROUP)
    assert not fake.reaches_bot(fake.incoming(GROUP, USERS["ana"], "/m 22-18"))
    assert fake.reaches_bot(fake.incoming(GROUP, USERS["ana"], f"/m@{BOT['username']} 22-18"))
    assert not fake.reaches_bot(fake.incoming(GROUP, USERS["ana"], "/m@OtherChessBot e4"))
    assert fake.reaches_bot(fake.incoming(GROUP, USERS["ana"], "22-18", reply_to=board.message_id))
    assert not fake.reaches_bot(fake.incoming(GROUP, USERS["ana"], "22-18"))       # plain text: never
    await bot.send_message(CHAT, "ours again")
    assert fake.reaches_bot(fake.incoming(GROUP, USERS["ana"], "/m 22-18"))
    private = {"id": 1, "type": "private", "first_name": "Ana"}
    assert fake.reaches_bot(fake.incoming(private, USERS["ana"], "22-18"))


# -- polling ---------------------------------------------------------------------------------------


async def test_get_updates_answers_409_while_another_instance_polls(api):
    fake, bot = api
    fake.queue_update(message=fake.incoming(GROUP, USERS["ana"], "/help"))
    fake.conflict(2)
    for _ in range(2):
        await refused(bot.get_updates(timeout=0), "terminated by other getUpdates request", Conflict)
    updates = await bot.get_updates(timeout=0)
    assert [u.message.text for u in updates] == ["/help"]
    assert await bot.get_updates(offset=updates[-1].update_id + 1, timeout=0) == ()


@pytest.mark.parametrize("params, fragment", [
    ({"commands": "not json"}, "can't parse commands JSON object"),
    ({"commands": json.dumps({"command": "m"})}, "can't parse commands JSON object"),
    ({"commands": json.dumps([{"command": "m", "description": "d"}]),
      "scope": json.dumps({"type": "everyone"})}, "can't parse BotCommandScope JSON object"),
])
async def test_malformed_command_lists_and_scopes_are_refused(api, params, fragment):
    # Requests PTB would not build, straight to the fake's request layer.
    fake, _ = api
    parts = [RequestParameter(k, v, None) for k, v in params.items()]
    status, body = await fake.do_request("https://api.telegram.org/bot123:TEST/setMyCommands", "POST",
                                         RequestData(parts))
    assert status == 400 and fragment in json.loads(body)["description"]
