"""Privacy mode (issue 15, item 7).  With privacy mode on (BotFather's default) a bot in a group
gets commands addressed to it (/m@OurBot), replies to its messages and button presses; a bare
/m 22-18 reaches it only when no other bot wrote after it, so in a group with another bot bare
moves are lost.  The bot registers its command menu (setMyCommands, es/it/en and the default) at
start-up, since a command picked from the menu is addressed to it, and /help says what works.

Real PTB Application, real service and SQLite, the strict fake Bot API (which hands the bot only
what Telegram would: FakeBotAPI.reaches_bot)."""

from __future__ import annotations

import asyncio

from telegram_fake_api import BOT, GROUP

from bot.i18n import t
from bot.service.chat.registry import REGISTRY

CHAT = GROUP["id"]


async def menus_registered(tg, timeout: float = 3.0) -> dict:
    give_up = asyncio.get_running_loop().time() + timeout
    while len(tg.http.commands) < 4 and asyncio.get_running_loop().time() < give_up:
        await asyncio.sleep(0.01)
    return tg.http.commands


async def test_the_command_menu_is_registered_at_start_in_spanish_italian_english_and_by_default(tg):
    await tg.app.start()
    try:
        menus = await menus_registered(tg)
    finally:
        await tg.app.stop()
    assert set(menus) == {("default", ""), ("default", "es"), ("default", "it"), ("default", "en")}
    listed = [spec.name for spec in REGISTRY if spec.listed]
    for lang in ("es", "it", "en"):
        menu = {c["command"]: c["description"] for c in menus[("default", lang)]}
        assert list(menu) == [*listed, "help"]
        assert menu["move"] == t(lang, "help.move")
        assert menu["help"] == t(lang, "help.help").removeprefix("- ")
    assert menus[("default", "")] == menus[("default", "en")]
    assert menus[("default", "es")] != menus[("default", "en")]


async def test_a_menu_telegram_refuses_does_not_stop_the_bot(tg):
    tg.http.fail("setMyCommands", 400, "Bad Request: BOT_COMMAND_INVALID")
    await tg.app.start()
    try:
        await asyncio.sleep(0.1)
        await tg.say("bob", "/help")
    finally:
        await tg.app.stop()
    assert len(tg.http.named("setMyCommands")) == 1          # one refusal: the rest is not tried
    assert tg.http.bot_messages(CHAT)[-1].text.startswith(t("en", "help.intro"))


async def test_with_another_bot_a_bare_move_is_lost_but_an_addressed_one_and_a_reply_arrive(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    board = tg.last_board()
    tg.http.other_bot_says(GROUP)
    await tg.say("ana", "/m 22-18")                                  # goes to the other bot
    assert tg.storage.game(1).ply == 0
    await tg.say("ana", f"/m@{BOT['username']} 22-18")
    assert tg.storage.game(1).ply == 1
    tg.http.other_bot_says(GROUP)
    await tg.say("bob", "11-15", reply_to=tg.last_board().message_id)   # a reply to the board
    assert tg.storage.game(1).ply == 2
    assert board.message_id != tg.last_board().message_id


async def test_help_says_what_works_in_groups(tg):
    await tg.say("ana", "/help")                                     # Ana's client is Spanish
    text = tg.http.bot_messages(CHAT)[-1].text
    assert t("es", "help.groups", bot=BOT["username"]) in text
    assert f"/m@{BOT['username']} 22-18" in text
    assert len(text) <= 4096
