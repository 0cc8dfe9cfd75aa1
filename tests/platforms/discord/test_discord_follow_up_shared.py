"""The follow-up fallback works whichever process delivers the channel's outbox row (issue 29,
item 5).

Where the bot may not post on its own, its messages go out as follow-ups of the channel's newest
interaction while its token lives (15 minutes).  With shards in several processes, the process
that got the interaction is not always the one that delivers the channel's next outbox row: the
interaction's token and time are kept in the shared database, and the delivering process uses
them.  Here two bots with separate memory, each with its own connection to one database file,
through the real discord.py with only HTTP replaced (the strict fake); test_discord_processes.py
does it with two real processes."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from discord_fake import CHANNEL_ID, SEND_MESSAGES, TOKEN, Harness, install
from fresh_db import fresh_database

from bot.i18n import t
from bot.platforms.discord import DraughtsBot
from bot.platforms.discord.bot import HIDDEN_TOKEN
from bot.service import GameService, Reply
from bot.storage import Storage

POSTS = "/channels/{channel_id}/messages"
FOLLOW_UPS = "/webhooks/{webhook_id}/{webhook_token}"


@pytest.fixture
async def other(h: Harness, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[DraughtsBot]:
    """A second bot process's bot: its own service, its own connection to the harness's database
    file, its own memory; the same Discord."""
    assert h.db_path is not None
    storage = Storage(h.db_path)
    service = GameService(storage, clock=lambda: h.now[0], rng=random.Random(2))
    bot = DraughtsBot(service, clock=h.fake.now)
    install(h.fake, monkeypatch, bot.http)
    await bot.login(TOKEN)
    try:
        yield bot
    finally:
        await bot.close()
        service.close()
        storage.close()


async def test_another_process_delivers_the_bots_move_as_a_follow_up_of_the_interaction_it_never_saw(
        bot_h: Harness, other: DraughtsBot):
    h = bot_h
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES)
    await h.slash("play", "ana", {"variant": "italian", "level": 1, "color": "white"})
    token = await h.slash("move", "ana", {"move": "22-18"})
    assert await asyncio.to_thread(h.bot.service.settle, 20)
    assert other.live_interactions == {}
    # The other process claims the bot's move and delivers it: not refused by the channel, but as
    # a follow-up of the player's interaction, which only the first process got.
    assert await other.delivery_round() == 1
    assert not h.fake.requests(method="POST", path_end=POSTS)
    follow_up = h.fake.answers(token)[-1]
    bot_move = h.storage.moves(1)[-1].notation
    assert follow_up.content.startswith(t("en", "bot.played", bot=t("en", "bot.name_start", level=1), move=bot_move,
                                                    id=1))
    assert not follow_up.ephemeral and follow_up.filenames() == ["board.png"]
    assert [m.status for m in h.storage.find_outbox()] == ["sent"]
    # Its buttons work like any board's, in the first process too.
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(follow_up.id)) == 1


async def test_the_newest_interaction_is_the_one_used_and_an_expired_one_is_not(h: Harness, other: DraughtsBot):
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES)
    await h.slash("games", "ana")
    newest = await h.slash("games", "bob")
    other.service.outbox.say("discord", str(CHANNEL_ID), Reply("first"))
    assert await other.delivery_round() == 1
    assert h.fake.answers(newest)[-1].content == "first"
    # 14 minutes on, the token is about to expire: not worth a try; the post is refused by the
    # channel (the bot lacks Send Messages) and dropped, as in one process.
    h.fake.skew += 14 * 60 + 5
    other.service.outbox.say("discord", str(CHANNEL_ID), Reply("second"))
    assert await other.delivery_round() == 0
    assert [c.error for c in h.fake.requests(method="POST", path_end=POSTS)] == [50013]
    assert [m.status for m in h.storage.find_outbox()] == ["sent", "dropped"]


async def test_an_interaction_discord_lost_is_forgotten_for_every_process(h: Harness, other: DraughtsBot):
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES)
    token = await h.slash("games", "ana")
    h.fake.expire(token)
    other.service.outbox.say("discord", str(CHANNEL_ID), Reply("lost"))
    assert await other.delivery_round() == 0                # refused (10015): tried again later
    assert h.bot.service.follow_up("discord", str(CHANNEL_ID)) is None
    h.now[0] += 600
    assert await other.delivery_round() == 0                # by the channel now, which refuses it
    assert [c.error for c in h.fake.requests(method="POST", path_end=POSTS)] == [50013]
    # The one follow-up the other process tried (the first answered /games itself, before).
    assert [c.error for c in h.fake.requests(token=token, path_end=FOLLOW_UPS)][1:] == [10015]


async def test_where_the_bot_may_post_the_other_process_posts_to_the_channel(h: Harness, other: DraughtsBot):
    await h.slash("games", "ana")
    other.service.outbox.say("discord", str(CHANNEL_ID), Reply("posted"))
    assert await other.delivery_round() == 1
    assert [p.content for p in h.fake.channel_posts()] == ["posted"]
    assert not h.fake.requests(method="POST", path_end=FOLLOW_UPS)


async def test_the_token_is_never_logged(h: Harness, other: DraughtsBot, caplog: pytest.LogCaptureFixture,
                                         tmp_path: Path):
    """Not by us, and not by discord.py either, which at DEBUG logs every webhook URL (the token
    is in its path) and every gateway event (an interaction with its token)."""
    caplog.set_level(logging.DEBUG, logger="bot")
    caplog.set_level(logging.DEBUG, logger="discord")
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES)
    token = await h.slash("games", "ana")
    h.fake.expire(token)
    other.service.outbox.say("discord", str(CHANNEL_ID), Reply("lost"))
    await other.delivery_round()
    assert caplog.records and not any(token in r.getMessage() for r in caplog.records)
    assert any(HIDDEN_TOKEN in r.getMessage() for r in caplog.records if r.name.startswith("discord."))
    assert token not in repr(other.live_interactions) + repr(h.bot.live_interactions)


def test_a_stored_follow_up_that_is_not_one_is_ignored(tmp_path: Path):
    from bot.platforms.discord.bot import FollowUp

    assert FollowUp.stored(None) is None
    assert FollowUp.stored({"token": "x"}) is None
    assert FollowUp.stored({"token": "x", "application_id": "no", "at": 1.0, "can_post": False}) is None
    live = FollowUp("tok", 5, 1.0, False)
    assert FollowUp.stored(live.stored_value()) == live and "tok" not in repr(live)
    storage = Storage(fresh_database(tmp_path / "x.db"))
    service = GameService(storage)
    try:
        service.keep_follow_up("discord", "1", live.stored_value())
        service.drop_follow_up("discord", "1", "another token")          # a newer one stays
        assert service.follow_up("discord", "1") == live.stored_value()
        service.drop_follow_up("discord", "1", "tok")
        assert service.follow_up("discord", "1") is None
    finally:
        service.close()
        storage.close()


async def test_a_process_keeps_no_expired_interactions_of_every_channel_it_was_used_in(h: Harness, monkeypatch):
    from bot.platforms.discord import bot as module

    monkeypatch.setattr(module, "PRUNE_LIVE_AT", 4)
    h.bot._prune_at = 4
    for n in range(3):
        await h.slash("games", "ana", channel_id=CHANNEL_ID + 1000 + n)
    for chat, kept in h.bot.live_interactions.items():  # those three have expired
        h.bot.live_interactions[chat] = dataclasses.replace(kept, at=kept.at - 14 * 60)
    await h.slash("games", "bob", channel_id=CHANNEL_ID)
    assert list(h.bot.live_interactions) == [str(CHANNEL_ID)]
    # The database still has each channel's (another process reads its age before using it).
    assert h.bot.service.follow_up("discord", str(CHANNEL_ID + 1000)) is not None
