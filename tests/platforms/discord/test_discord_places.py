"""A place of its own (issue 32): a command that opens one (``CommandSpec.place_words``, as
/tournament new) is handed to the service as written in a public thread the bot starts in the
channel, where it has Create Public Threads; the bot posts there what the service says, and the
interaction answers with a note linking the thread.  Anywhere else (no such permission, a thread
already, a DM, a use of the command the member may not make) the channel itself is used, and
nothing is said about it.

A real DraughtsBot and service on SQLite, the strict fake Discord (which starts threads and
refuses them as Discord does).  The command is a throwaway one the test declares (the registry's
own way for tests), whose handler says which chat the service was asked in."""

from __future__ import annotations

import json
from collections.abc import Iterator

import discord
import pytest
from discord_fake import (
    CHANNEL_ID,
    CREATE_PUBLIC_THREADS,
    GUILD_ID,
    MANAGE_THREADS,
    SEND_MESSAGES,
    SEND_MESSAGES_IN_THREADS,
    THREAD_ID,
    FakeResponse,
    Harness,
)

from bot.i18n import catalog, t
from bot.service.chat.registry import REGISTRY, Arg, ArgKind, CommandSpec, Permission
from bot.service.events import Reply
from bot.storage.repositories import NewTournament
from bot.tournaments import Format, Settings, new, to_data

THREADS = "/channels/{channel_id}/threads"
asked_in: list[str] = []


def _handler(app, ctx, args) -> list[Reply]:
    """Says where it was asked; "new" opens a tournament there (unless "bad" is among the words: a
    refusal, which starts nothing)."""
    asked_in.append(ctx.event.chat_id)
    if "bad" in args:
        return [Reply("refused: bad words")]
    if args and args[0] in ("new", "nuevo"):
        state = json.dumps(to_data(new(Settings(Format.SWISS, rounds=3))))
        app.runtime.storage.tournaments.create(NewTournament(ctx.event.platform, ctx.event.chat_id, "spanish", 3600,
                                                             86400, state, ctx.event.user_id, 0.0))
    return [Reply(f"started here: {' '.join(args)}"), Reply("only for you", private=True)]


@pytest.fixture(autouse=True)
def tplace(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """/tplace new ... opens a place of its own (admins only); declared before the bot builds its
    slash commands."""
    asked_in.clear()
    for lang in ("en", "es", "it"):
        monkeypatch.setitem(catalog(lang), "help.tplace", "- a throwaway command that opens a place")
    args = (Arg("action", ArgKind.TEXT), Arg("format", ArgKind.TEXT), Arg("variant", ArgKind.VARIANT))
    REGISTRY.add(CommandSpec("tplace", _handler, {}, args, Permission.ANYONE, listed=False,
                             admin_words=("new",), place_words=("new",)))
    yield
    REGISTRY.remove("tplace")


def thread_requests(h: Harness) -> list:
    return [c for c in h.fake.calls if c.method == "POST" and c.path.endswith("/threads")]


async def test_a_channel_where_the_bot_may_start_threads_gets_one_and_the_command_lives_there(h: Harness):
    token = await h.slash("tplace", "ana", {"action": "new", "format": "swiss", "variant": "spanish"}, admin=True)
    [made] = thread_requests(h)
    name = t("en", "place.title", kind=t("en", "place.kind.swiss"), variant=t("en", "variant.spanish"))
    assert made.path == THREADS and made.payload["name"] == name and made.payload["type"] == 11
    [thread] = h.fake.thread_names
    assert h.fake.thread_names[thread] == name
    # The service was asked in the thread; the bot posted its answer there.
    assert asked_in == [str(thread)]
    assert [p.content for p in h.fake.channel_posts(thread)] == ["started here: new swiss spanish"]
    assert h.fake.channel_posts(CHANNEL_ID) == []
    # The interaction: what was for the member alone, and the note with the thread's link.
    answers = h.fake.answers(token)
    link = f"https://discord.com/channels/{GUILD_ID}/{thread}"
    assert [(a.content, a.ephemeral) for a in answers] == [
        ("only for you", True), (t("en", "place.note_thread", name=name, link=link), False)]
    # What follows in the thread is the thread's own chat, and starts no thread in it.
    await h.slash("tplace", "bob", {"action": "standings"}, channel_id=thread)
    await h.slash("tplace", "ana", {"action": "new", "format": "swiss"}, channel_id=thread, admin=True)
    assert asked_in[1:] == [str(thread), str(thread)]
    assert len(thread_requests(h)) == 1


async def test_a_thread_is_a_channel_of_its_own(h: Harness):
    # The channel takes no post of the bot; its threads do (Send Messages in Threads).
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES)
    await h.slash("tplace", "ana", {"action": "new", "format": "roundrobin", "variant": "italian"}, admin=True)
    [thread] = h.fake.thread_names
    assert h.fake.thread_names[thread] == t("en", "place.title", kind=t("en", "place.kind.roundrobin"),
                                            variant=t("en", "variant.italian"))
    assert [p.content for p in h.fake.channel_posts(thread)] == ["started here: new roundrobin italian"]
    # Its permissions are its own: taken from it alone, the channel is as it was.
    h.fake.deny(thread, SEND_MESSAGES_IN_THREADS)
    assert h.fake.bot_permissions(CHANNEL_ID) & SEND_MESSAGES_IN_THREADS


async def test_no_thread_where_the_bot_may_not_post_in_threads(h: Harness):
    h.fake.deny(CHANNEL_ID, SEND_MESSAGES_IN_THREADS)
    token = await h.slash("tplace", "ana", {"action": "new", "format": "swiss"}, admin=True)
    assert thread_requests(h) == []
    assert asked_in == [str(CHANNEL_ID)]
    assert [a.content for a in h.fake.answers(token)][0] == "started here: new swiss"


async def test_a_thread_that_refuses_the_bots_post_leaves_it_to_the_interaction(h: Harness):
    # Discord's permissions changed between the interaction and the post (a moderator's override).
    h.fake.script("/messages", discord.Forbidden(FakeResponse(403, "Forbidden"),
                                                 {"code": 50013, "message": "Missing Permissions"}), method="POST")
    token = await h.slash("tplace", "ana", {"action": "new", "format": "swiss"}, admin=True)
    [thread] = h.fake.thread_names
    assert asked_in == [str(thread)]
    contents = [a.content for a in h.fake.answers(token)]
    assert contents[:2] == ["started here: new swiss", "only for you"]
    assert contents[2].startswith("🏆") and len(contents) == 3
    assert h.fake.channel_posts(thread) == []


async def test_without_create_public_threads_the_channel_itself_is_used(h: Harness):
    h.fake.deny(CHANNEL_ID, CREATE_PUBLIC_THREADS)
    token = await h.slash("tplace", "ana", {"action": "new", "format": "swiss"}, admin=True)
    [refused] = thread_requests(h)
    assert refused.error == 50013
    assert h.fake.thread_names == {}
    assert asked_in == [str(CHANNEL_ID)]
    assert [a.content for a in h.fake.answers(token)] == ["started here: new swiss", "only for you"]


async def test_no_thread_in_a_thread_a_dm_or_for_a_use_the_member_may_not_make(h: Harness):
    h.fake.threads.add(THREAD_ID)
    await h.slash("tplace", "ana", {"action": "new", "format": "swiss"}, channel_id=THREAD_ID, admin=True)
    await h.slash("tplace", "ana", {"action": "new", "format": "swiss"}, dm=True)
    token = await h.slash("tplace", "bob", {"action": "new", "format": "swiss"})      # not an admin
    await h.slash("tplace", "bob", {"action": "join"})
    assert thread_requests(h) == []
    assert asked_in[:2] == [str(THREAD_ID), asked_in[1]] and asked_in[2:] == [str(CHANNEL_ID)]
    assert h.fake.answers(token)[0].content == t("en", "error.admins_only", command="tplace")


async def test_a_refused_command_leaves_no_thread_where_the_bot_manages_threads(h: Harness):
    h.fake.allow(CHANNEL_ID, MANAGE_THREADS)
    token = await h.slash("tplace", "ana", {"action": "new", "format": "swiss bad"}, admin=True)
    [made] = thread_requests(h)
    assert h.fake.threads == set() and h.fake.thread_names == {}
    assert [a.content for a in h.fake.answers(token)] == ["refused: bad words"]
    assert h.fake.channel_posts(CHANNEL_ID) == []


async def test_a_refused_command_is_answered_in_the_channel_where_the_thread_cannot_go(h: Harness):
    token = await h.slash("tplace", "ana", {"action": "new", "format": "swiss bad"}, admin=True)
    # Without Manage Threads the thread stays, empty (Discord archives it after a week).
    [thread] = h.fake.thread_names
    assert h.fake.channel_posts(thread) == []
    assert [a.content for a in h.fake.answers(token)] == ["refused: bad words"]


# -- the fake's threads, against discord.py's own requests ---------------------------------------------------

async def test_the_fake_starts_threads_as_discord_does(h: Harness):
    http = h.bot.http
    thread = await http.start_thread_without_message(CHANNEL_ID, name="🏆 Swiss", auto_archive_duration=10080,
                                                     type=11)
    assert thread["parent_id"] == str(CHANNEL_ID) and int(thread["id"]) in h.fake.threads
    # From one of the channel's messages: the thread has the message's id; once only.
    posted = await http.send_message(CHANNEL_ID, params=discord.http.handle_message_parameters(content="round 1"))
    from_message = await http.start_thread_with_message(CHANNEL_ID, posted["id"], name="Round 1",
                                                        auto_archive_duration=1440)
    assert from_message["id"] == posted["id"] and from_message["type"] == 11
    with pytest.raises(discord.HTTPException) as again:
        await http.start_thread_with_message(CHANNEL_ID, posted["id"], name="Round 1", auto_archive_duration=1440)
    assert again.value.code == 160004
    # Not in a thread, not with a name over 100 characters or an archive time Discord does not offer.
    for call, code in ((http.start_thread_without_message(thread["id"], name="x", auto_archive_duration=60, type=11),
                        50024),
                       (http.start_thread_without_message(CHANNEL_ID, name="x" * 101, auto_archive_duration=60,
                                                          type=11), 50035)):
        with pytest.raises(discord.HTTPException) as refused:
            await call
        assert refused.value.code == code
    # Without the permission: Missing Permissions (the channel's settings, not a mistake).
    h.fake.deny(CHANNEL_ID, CREATE_PUBLIC_THREADS)
    with pytest.raises(discord.Forbidden) as denied:
        await http.start_thread_without_message(CHANNEL_ID, name="x", auto_archive_duration=60, type=11)
    assert denied.value.code == 50013
    assert [code for _, code in h.fake.refused] == [160004, 50024, 50035]
    h.fake.refused.clear()


# -- the real command: /tournament new -----------------------------------------------------------------------

async def test_a_tournament_lives_in_its_own_thread(h: Harness):
    token = await h.slash("tournament", "ana", {"action": "new", "options": "swiss spanish 2 1h"}, admin=True)
    [thread] = h.fake.thread_names
    name = t("en", "place.title", kind=t("en", "place.kind.swiss"), variant=t("en", "variant.spanish"))
    assert h.fake.thread_names[thread] == name
    [tournament] = h.storage.tournaments.find()
    assert tournament.chat_id == str(thread)
    # The announcement, with its Join button, is the bot's post in the thread; the interaction has the note.
    [created] = h.fake.channel_posts(thread)
    assert created.custom_ids() and f"tj:{tournament.id}" in created.custom_ids()[0]
    link = f"https://discord.com/channels/{GUILD_ID}/{thread}"
    assert [a.content for a in h.fake.answers(token)] == [t("en", "place.note_thread", name=name, link=link)]
    # Joined, started and paired in the thread: the round's games are the thread's.
    for user in ("ana", "bob", "cid"):
        await h.slash("tournament", user, {"action": "join"}, channel_id=thread)
    await h.slash("tournament", "ana", {"action": "start"}, channel_id=thread, admin=True)
    await h.bot.delivery_round()
    games = h.storage.games.find("discord")
    assert games and {g.chat_id for g in games} == {str(thread)}
    assert h.fake.channel_posts(CHANNEL_ID) == []


async def test_a_tournament_without_create_public_threads_lives_in_the_channel(h: Harness):
    h.fake.deny(CHANNEL_ID, CREATE_PUBLIC_THREADS)
    token = await h.slash("tournament", "ana", {"action": "new", "options": "roundrobin italian"}, admin=True)
    [tournament] = h.storage.tournaments.find()
    assert tournament.chat_id == str(CHANNEL_ID) and h.fake.thread_names == {}
    assert h.fake.answers(token)[0].custom_ids()
    assert not any("discord.com/channels" in a.content for a in h.fake.answers(token))


async def test_a_refused_tournament_starts_no_thread_where_it_can_delete_one(h: Harness):
    h.fake.allow(CHANNEL_ID, MANAGE_THREADS)
    token = await h.slash("tournament", "ana", {"action": "new", "options": "swiss"}, admin=True)
    assert h.fake.thread_names == {} and h.storage.tournaments.find() == []
    assert h.fake.answers(token)[0].content.startswith(t("en", "tournament.need_rounds", most=50))
