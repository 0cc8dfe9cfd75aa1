"""Messages written as a chat (issue 15, item 8).  An anonymous group admin writes as the group
(``from`` @GroupAnonymousBot, a bot; ``sender_chat`` the group): that counts as an admin's for
admin commands, and other commands answer "write as yourself to play".  A member writing as
their channel is no admin; a channel's automatic forward into its discussion group is no command.

Real PTB Application, real service and SQLite, the strict fake Bot API."""

from __future__ import annotations

from telegram_fake_api import CHANNEL, GROUP

from bot.i18n import t

CHAT = GROUP["id"]
PLATFORM = "telegram"


def answers(tg) -> list[str]:
    return [m.text or "" for m in tg.http.bot_messages(CHAT)]


async def test_an_anonymous_admin_turns_the_daily_puzzle_on(tg):
    await tg.say("ana", "/daily on italian", sender_chat=GROUP)
    sub = tg.storage.subscription(PLATFORM, str(CHAT))
    assert sub is not None and sub.active and sub.variant == "italian"
    assert tg.http.named("getChatMember") == []          # the group itself wrote: no need to ask
    assert len(answers(tg)) == 1


async def test_an_anonymous_admin_is_asked_to_write_as_themselves_to_play(tg):
    await tg.say("ana", "/new italian", sender_chat=GROUP)
    await tg.say("ana", "/m 22-18", sender_chat=GROUP)
    assert answers(tg) == [t("en", "error.write_as_yourself", command="new"),
                           t("en", "error.write_as_yourself", command="m")]
    assert tg.storage.open_challenges(PLATFORM, str(CHAT)) == []
    # The answer is in the chat's language.
    tg.http.admins.add((CHAT, 1))
    await tg.say("ana", "/lang it")
    await tg.say("bob", "/play", sender_chat=GROUP)
    assert answers(tg)[-1] == t("it", "error.write_as_yourself", command="play")


async def test_a_member_writing_as_a_channel_is_no_admin(tg):
    await tg.say("bob", "/daily on", sender_chat=CHANNEL)
    await tg.say("bob", "/new", sender_chat=CHANNEL)
    assert answers(tg) == [t("en", "error.admins_only", command="daily"),
                           t("en", "error.write_as_yourself", command="new")]
    assert tg.storage.subscription(PLATFORM, str(CHAT)) is None


async def test_a_channels_automatic_forward_and_plain_text_as_the_group_get_no_answer(tg):
    forward = tg.http.incoming(GROUP, {"id": 777000, "is_bot": False, "first_name": "Telegram"}, "/new",
                               sender_chat=CHANNEL)
    forward["is_automatic_forward"] = True
    await tg.update(message=forward)
    asked = await tg.say("bob", "/help")
    await tg.say("ana", "22-18", sender_chat=GROUP, reply_to=asked + 1)     # a reply to the bot's answer
    assert len(answers(tg)) == 1
