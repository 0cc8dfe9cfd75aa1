"""A place of its own (issue 32): a command that opens one (``CommandSpec.place_words``, as
/tournament new) is handed to the service as written in a forum topic the bot makes, where the
group is a forum and the bot administers it with the right to manage topics; the group gets a short
note with the topic's link.  Anywhere else (no right, not a forum, a private chat, a use of the
command the sender may not make) the chat itself is used, and nothing is said about it.

Real PTB Application, real service and SQLite, the strict fake Bot API (which refuses
createForumTopic as Telegram does).  The command is a throwaway one the test declares (the
registry's own way for tests), whose handler says which chat the service was asked in."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from telegram import Bot
from telegram.error import BadRequest
from telegram_fake_api import BOT, GROUP, NO_TOPIC_RIGHTS, NOT_A_FORUM, USERS, FakeBotAPI

from bot.i18n import catalog, t
from bot.service.chat.registry import REGISTRY, CommandSpec, Permission, Place
from bot.service.events import Reply
from bot.storage.repositories import NewTournament
from bot.tournaments import Format, Settings, new, to_data

CHAT = GROUP["id"]
PRIVATE_ANA = {"id": USERS["ana"]["id"], "type": "private", "first_name": "Ana"}
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
    return [Reply(f"started here: {' '.join(args)}")]


@pytest.fixture(autouse=True)
def tplace(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """/tplace new ... opens a place of its own (admins only); /tplace other words do not."""
    asked_in.clear()
    for lang in ("en", "es", "it"):
        monkeypatch.setitem(catalog(lang), "help.tplace", "- a throwaway command that opens a place")
    REGISTRY.add(CommandSpec("tplace", _handler, {}, (), Permission.ANYONE, listed=False,
                             admin_words=("new",), place_words=("new", "nuevo")))
    yield
    REGISTRY.remove("tplace")


def group_texts(tg, thread: int | None = None) -> list[str]:
    return [m.text for m in tg.http.bot_messages(CHAT, "text") if m.thread == thread]


async def test_a_forum_where_the_bot_manages_topics_gets_a_topic_and_the_command_lives_there(tg):
    tg.http.forum(GROUP)
    tg.http.promote_bot(CHAT, "can_manage_topics")
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    asked = await tg.say("ana", "/tplace new swiss spanish 5 1h")
    [made] = tg.http.named("createForumTopic", ok_only=True)
    name = t("en", "place.title", kind=t("en", "place.kind.swiss"), variant=t("en", "variant.spanish"))
    assert made.params["name"] == name == "🏆 Swiss · Spanish draughts"
    topic = max(tg.http.topics[CHAT])
    assert tg.http.topics[CHAT][topic]["name"] == name
    # The service was asked in the topic, and answered there (not as a reply: the command is elsewhere).
    assert asked_in == [f"{CHAT}:{topic}"]
    assert group_texts(tg, topic) == ["started here: new swiss spanish 5 1h"]
    # The group got the note with the topic's link, in answer to the command.
    link = f"https://t.me/c/{str(CHAT).removeprefix('-100')}/{topic}"
    assert group_texts(tg) == [t("en", "place.note_topic", name=name, link=link)]
    sent = tg.http.named("sendMessage", ok_only=True)
    assert [c.wire.get("message_thread_id") for c in sent] == [str(topic), None]
    assert "reply_parameters" not in sent[0].wire and "reply_to_message_id" not in sent[0].wire
    assert asked in (int(sent[1].wire.get("reply_to_message_id", 0)),
                     json.loads(sent[1].wire.get("reply_parameters", "{}")).get("message_id"))
    # What follows in the topic is the topic's own chat, as any topic.
    await tg.say("bob", "/tplace standings", thread=topic)
    assert asked_in[-1] == f"{CHAT}:{topic}"
    assert len(tg.http.named("createForumTopic")) == 1


async def test_a_public_forum_links_the_topic_by_its_username_and_a_topic_asks_too(tg):
    public = tg.http.forum(dict(GROUP, username="damasclub"))
    tg.http.promote_bot(CHAT, "can_manage_topics")
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    lobby = tg.http.open_topic(public, "Lobby", USERS["bob"])
    await tg.say("ana", "/tplace nuevo roundrobin italiana", chat=public, thread=lobby)
    topic = max(tg.http.topics[CHAT])
    name = t("en", "place.title", kind=t("en", "place.kind.roundrobin"), variant=t("en", "variant.italian"))
    assert asked_in == [f"{CHAT}:{topic}"]
    # The note goes where the command was written: the Lobby topic.
    assert group_texts(tg, lobby) == [t("en", "place.note_topic", name=name, link=f"https://t.me/damasclub/{topic}")]


async def test_a_forum_where_the_bot_may_not_manage_topics_uses_the_group_itself(tg):
    tg.http.forum(GROUP)
    tg.http.promote_bot(CHAT, "can_delete_messages")
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    tg.expect_refusals(1)
    await tg.say("ana", "/tplace new swiss")
    [refused] = tg.http.named("createForumTopic")
    assert refused.error == NO_TOPIC_RIGHTS
    assert asked_in == [str(CHAT)]
    # Answered in the group, as a reply, and nothing said about a topic.
    assert group_texts(tg) == ["started here: new swiss"]
    assert tg.http.topics.get(CHAT, {}) == {}


async def test_a_group_that_is_no_forum_and_a_private_chat_use_the_chat_itself(tg):
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/tplace new swiss")
    tg.http.start_private("ana")
    await tg.say("ana", "/tplace new swiss", chat=PRIVATE_ANA)
    assert asked_in == [str(CHAT), str(USERS["ana"]["id"])]
    assert tg.http.named("createForumTopic") == []
    assert group_texts(tg) == ["started here: new swiss"]


async def test_no_topic_for_a_use_the_sender_may_not_make_nor_for_other_words(tg):
    tg.http.forum(GROUP)
    tg.http.promote_bot(CHAT, "can_manage_topics")
    await tg.say("bob", "/tplace new swiss")                 # not an administrator
    await tg.say("bob", "/tplace join")
    await tg.say("bob", "/tplace@OtherChessBot new swiss")   # another bot's command: not ours to answer
    assert tg.http.named("createForumTopic") == []
    assert asked_in == [str(CHAT)]
    assert group_texts(tg)[0] == t("en", "error.admins_only", command="tplace")


async def test_a_refused_command_leaves_no_topic_and_is_answered_where_it_was_asked(tg):
    tg.http.forum(GROUP)
    tg.http.promote_bot(CHAT, "can_manage_topics", "can_delete_messages")
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/tplace new swiss bad")
    [made] = tg.http.named("createForumTopic", ok_only=True)
    assert len(tg.http.named("deleteForumTopic", ok_only=True)) == 1
    assert tg.http.topics[CHAT] == {}
    assert group_texts(tg) == ["refused: bad words"]
    assert tg.storage.tournaments.find() == []


async def test_a_refused_command_closes_the_topic_the_bot_may_not_delete(tg):
    tg.http.forum(GROUP)
    tg.http.promote_bot(CHAT, "can_manage_topics")
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    tg.expect_refusals(1)                                   # deleteForumTopic without the right
    await tg.say("ana", "/tplace new swiss bad")
    [topic] = tg.http.topics[CHAT]
    assert tg.http.topics[CHAT][topic]["closed"]
    assert group_texts(tg) == ["refused: bad words"] and group_texts(tg, topic) == []


async def test_a_failed_topic_leaves_the_command_to_the_group(tg):
    tg.http.forum(GROUP)
    tg.http.promote_bot(CHAT, "can_manage_topics")
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    tg.http.fail("createForumTopic", 400, "Bad Request: TOPIC_NAME_INVALID")
    await tg.say("ana", "/tplace new swiss")
    assert asked_in == [str(CHAT)]
    assert group_texts(tg) == ["started here: new swiss"]


def test_the_registry_reads_what_a_command_opens():
    assert REGISTRY.place_of("/tplace new swiss española 5 1h") == Place("swiss", "spanish")
    assert REGISTRY.place_of("/tplace Nuevo Svizzero ESPANOLA") == Place("swiss", "spanish")
    assert REGISTRY.place_of("/tplace@DraughtsBot  NUEVO  svizzero", "draughtsbot") == Place("swiss", None)
    assert REGISTRY.place_of("!tplace new", None) == Place("", None)
    assert REGISTRY.place_of("/tplace@OtherChessBot new swiss", "DraughtsBot") is None
    assert REGISTRY.place_of("/tplace join") is None
    assert REGISTRY.place_of("/tplace") is None
    assert REGISTRY.place_of("/new spanish") is None
    assert REGISTRY.place_of("new swiss") is None
    assert REGISTRY.place_of("") is None


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_a_place_name_fits_a_topic_in_every_language(lang):
    for kind in ("swiss", "roundrobin", "tournament"):
        for variant in ("spanish", "italian", "triestina"):
            name = t(lang, "place.title", kind=t(lang, f"place.kind.{kind}"), variant=t(lang, f"variant.{variant}"))
            assert 1 <= len(name) <= 128
            assert name.startswith("🏆")


# -- the fake's createForumTopic, against the real Bot class -------------------------------------------------

@pytest.fixture
async def api():
    fake = FakeBotAPI()
    fake.add_chat(GROUP)
    fake.add_chat(PRIVATE_ANA)
    bot = Bot("123:TEST", request=fake, get_updates_request=fake)
    async with bot:
        yield fake, bot


async def test_the_fake_refuses_a_topic_where_telegram_does(api):
    fake, bot = api
    with pytest.raises(BadRequest, match="(?i)the chat is not a forum"):
        await bot.create_forum_topic(CHAT, "🏆 Swiss")
    with pytest.raises(BadRequest, match="(?i)the chat is not a forum"):
        await bot.create_forum_topic(PRIVATE_ANA["id"], "🏆 Swiss")
    fake.forum(GROUP)
    with pytest.raises(BadRequest, match="(?i)not enough rights to create a topic"):
        await bot.create_forum_topic(CHAT, "🏆 Swiss")
    fake.promote_bot(CHAT, "can_manage_topics")
    with pytest.raises(BadRequest):
        await bot.create_forum_topic(CHAT, "x" * 129)
    assert [c.error for c in fake.refused()][:3] == [NOT_A_FORUM, NOT_A_FORUM, NO_TOPIC_RIGHTS]


async def test_the_fakes_topic_takes_messages_until_it_is_closed(api):
    fake, bot = api
    fake.forum(GROUP)
    fake.promote_bot(CHAT, "can_manage_topics")
    topic = await bot.create_forum_topic(CHAT, "🏆 Swiss · Spanish draughts")
    thread = topic.message_thread_id
    assert thread > 1 and topic.name == "🏆 Swiss · Spanish draughts"
    created = fake.messages[(CHAT, thread)]
    assert created.sender is BOT and created.extra["forum_topic_created"]["name"] == topic.name
    sent = await bot.send_message(CHAT, "pairings", message_thread_id=thread)
    assert sent.message_thread_id == thread and sent.is_topic_message
    fake.close_topic(CHAT, thread)
    with pytest.raises(BadRequest, match="(?i)topic_closed"):
        await bot.send_message(CHAT, "round 2", message_thread_id=thread)


# -- the real command: /tournament new -----------------------------------------------------------------------

async def three_join_and_start(tg, thread: int | None) -> None:
    for user in ("ana", "bob", "eve"):
        await tg.say(user, "/tournament join", thread=thread)
    await tg.say("ana", "/tournament start", thread=thread)
    await tg.adapter.delivery_round()


async def test_a_tournament_made_in_a_forum_lives_in_its_own_topic(tg):
    tg.http.forum(GROUP)
    tg.http.promote_bot(CHAT, "can_manage_topics")
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/tournament new swiss spanish 2 1h")
    [topic] = tg.http.topics[CHAT]
    name = t("en", "place.title", kind=t("en", "place.kind.swiss"), variant=t("en", "variant.spanish"))
    assert tg.http.topics[CHAT][topic]["name"] == name
    [tournament] = tg.storage.tournaments.find()
    assert tournament.chat_id == f"{CHAT}:{topic}"
    # The announcement with its Join button is in the topic; the group has the note only.
    [created] = [m for m in tg.http.bot_messages(CHAT, "text") if m.thread == topic]
    assert created.buttons() == [f"tj:{tournament.id}"]
    link = f"https://t.me/c/{str(CHAT).removeprefix('-100')}/{topic}"
    assert group_texts(tg) == [t("en", "place.note_topic", name=name, link=link)]
    # Joined, started and paired there: the round's games are the topic's, and so is every post.
    await tg.press("bob", f"tj:{tournament.id}", message_id=created.message_id)
    await tg.say("eve", "/tournament join", thread=topic)
    await tg.say("ana", "/tournament join", thread=topic)
    await tg.say("ana", "/tournament start", thread=topic)
    await tg.adapter.delivery_round()
    games = tg.storage.games.find("telegram")
    assert games and {g.chat_id for g in games} == {f"{CHAT}:{topic}"}
    assert group_texts(tg) == [t("en", "place.note_topic", name=name, link=link)]
    assert {m.thread for m in tg.http.bot_messages(CHAT)} == {None, topic}
    # The group itself has no tournament of its own.
    await tg.say("bob", "/tournament")
    assert group_texts(tg)[-1] == t("en", "tournament.none")


async def test_a_tournament_without_the_right_to_make_topics_lives_in_the_group(tg):
    tg.http.forum(GROUP)
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    tg.expect_refusals(1)                                   # createForumTopic: not enough rights
    await tg.say("ana", "/tournament new roundrobin italian")
    [tournament] = tg.storage.tournaments.find()
    assert tournament.chat_id == str(CHAT)
    assert tg.http.topics.get(CHAT, {}) == {}
    await three_join_and_start(tg, None)
    assert {g.chat_id for g in tg.storage.games.find("telegram")} == {str(CHAT)}
    assert {m.thread for m in tg.http.bot_messages(CHAT)} == {None}
    assert not any("place" in (m.text or "") and "t.me" in (m.text or "") for m in tg.http.bot_messages(CHAT))


async def test_a_refused_tournament_leaves_no_topic(tg):
    tg.http.forum(GROUP)
    tg.http.promote_bot(CHAT, "can_manage_topics", "can_delete_messages")
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/tournament new swiss spanish")           # a Swiss needs its number of rounds
    assert tg.http.topics[CHAT] == {}
    assert tg.storage.tournaments.find() == []
    [refusal] = group_texts(tg)
    assert refusal.startswith(t("es", "tournament.need_rounds", most=50))       # Ana writes in Spanish
