"""A channel where the bot may not post on its own (issue 15, item 10).

Interactions are answered through their webhook whatever the channel allows; the bot's own posts
(REST) need View Channel, Send Messages (in Threads), Attach Files.  The fake refuses those posts
as Discord does; the bot says what it lacks when a command comes, and delivers the bot's reply
move as a follow-up of the player's interaction while its token lives."""

from __future__ import annotations

import asyncio

from discord_fake import (
    ATTACH_FILES,
    CHANNEL_ID,
    SEND_MESSAGES,
    SEND_MESSAGES_IN_THREADS,
    THREAD_ID,
    VIEW_CHANNEL,
    Harness,
)

from bot.i18n import t

POSTS = "/channels/{channel_id}/messages"



def notice(lang: str, *names: str) -> str:
    return t(lang, "discord.missing_permissions",
             permissions=", ".join(t(lang, f"discord.perm.{n}") for n in names))


async def test_a_command_where_the_bot_may_not_post_says_what_it_lacks(h: Harness):
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES | ATTACH_FILES)
    token = await h.slash("games", "ana", locale="es-ES")
    answers = h.fake.answers(token)
    assert [a.content for a in answers] == [t("es", "games.empty"),
                                            notice("es", "send_messages", "attach_files")]
    assert answers[1].ephemeral
    # Said once an hour to each member, not with every command.
    token = await h.slash("games", "ana", locale="es-ES")
    assert [a.content for a in h.fake.answers(token)] == [t("es", "games.empty")]
    token = await h.slash("games", "bob")
    assert h.fake.answers(token)[-1].content == notice("en", "send_messages", "attach_files")


async def test_nothing_is_said_where_the_bot_may_post(h: Harness):
    token = await h.slash("games", "ana")
    assert [a.content for a in h.fake.answers(token)] == [t("en", "games.empty")]


async def test_the_bots_reply_move_comes_as_a_follow_up_where_it_may_not_post(bot_h: Harness):
    h = bot_h
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES)
    await h.slash("play", "ana", {"variant": "italian", "level": 1, "color": "white"})
    token = await h.slash("move", "ana", {"move": "22-18"})
    assert await asyncio.to_thread(h.bot.service.settle, 20)
    assert await h.bot.delivery_round() == 1
    assert not h.fake.channel_posts()
    bot_move = h.storage.moves(1)[-1].notation
    follow_up = h.fake.answers(token)[-1]
    assert not follow_up.ephemeral and follow_up.filenames() == ["board.png"]
    assert follow_up.content.startswith(t("en", "bot.played", bot=t("en", "bot.name_start", level=1), move=bot_move,
                                                    id=1))
    assert [m.status for m in h.storage.find_outbox()] == ["sent"]
    # Its buttons work like any board's.
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(follow_up.id)) == 1


async def test_without_view_channel_the_follow_up_still_carries_the_move(bot_h: Harness):
    h = bot_h
    await h.slash("play", "ana", {"variant": "italian", "level": 1, "color": "white"})
    h.fake.deny(CHANNEL_ID, VIEW_CHANNEL)              # taken away after the game began
    token = await h.slash("move", "ana", {"move": "22-18"})
    assert await asyncio.to_thread(h.bot.service.settle, 20)
    assert await h.bot.delivery_round() == 1
    assert h.fake.answers(token)[-1].filenames() == ["board.png"]


async def test_an_expired_interaction_is_not_used_and_the_post_is_dropped(bot_h: Harness):
    h = bot_h
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES)
    await h.slash("play", "ana", {"variant": "italian", "level": 1, "color": "white"})
    token = await h.slash("move", "ana", {"move": "22-18"})
    assert await asyncio.to_thread(h.bot.service.settle, 20)
    h.fake.skew += 14 * 60 + 5                         # the token is about to expire: not worth a try
    assert await h.bot.delivery_round() == 0
    refused = h.fake.requests(method="POST", path_end=POSTS)
    assert [c.error for c in refused] == [50013]
    assert [m.status for m in h.storage.find_outbox()] == ["dropped"]
    assert all(a.token == token for a in h.fake.answers(token))


async def test_an_interaction_discord_lost_is_not_followed_up_again(bot_h: Harness):
    h = bot_h
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES)
    await h.slash("play", "ana", {"variant": "italian", "level": 1, "color": "white"})
    token = await h.slash("move", "ana", {"move": "22-18"})
    assert await asyncio.to_thread(h.bot.service.settle, 20)
    h.fake.expire(token)
    assert await h.bot.delivery_round() == 0             # the follow-up is refused (10015): later
    h.now[0] += 600
    assert await h.bot.delivery_round() == 0
    assert [c.error for c in h.fake.requests(method="POST", path_end=POSTS)] == [50013]
    assert [m.status for m in h.storage.find_outbox()] == ["dropped"]


async def test_in_a_thread_send_messages_in_threads_is_what_counts(h: Harness):
    h.fake.threads.add(THREAD_ID)
    h.fake.deny(THREAD_ID, SEND_MESSAGES_IN_THREADS)           # Send Messages itself is still there
    token = await h.slash("games", "ana", channel_id=THREAD_ID)
    assert h.fake.answers(token)[-1].content == notice("en", "send_messages_in_threads")
    h.fake.permissions[THREAD_ID] = h.fake.bot_permissions(THREAD_ID) & ~SEND_MESSAGES | SEND_MESSAGES_IN_THREADS
    token = await h.slash("games", "bob", channel_id=THREAD_ID)
    assert [a.content for a in h.fake.answers(token)] == [t("en", "games.empty")]


async def test_accepting_where_the_bot_lost_view_channel_is_no_error(h: Harness, bot_errors):
    """Closing the challenge edits its message by REST, which Discord refuses (50001) once the bot
    may not see the channel; the accept itself went through and is answered as such."""
    await h.slash("new", "ana", {"variant": "italian"})
    h.fake.deny(CHANNEL_ID, VIEW_CHANNEL)
    token = await h.slash("accept", "bob", {})
    contents = [a.content for a in h.fake.answers(token)]
    assert t("en", "error.internal") not in contents
    assert h.bot.service.storage.game(1) is not None
    assert bot_errors == []
