"""The strict fake Discord refuses what Discord refuses, and accepts what it accepts.

Every adapter test trusts this fake, so each class of refusal is shown here on its own: raw
payloads straight to the fake for what discord.py would not even build, real discord.py
``Interaction`` objects for the acknowledgement rules.
"""

from __future__ import annotations

import asyncio
import copy
import io
from typing import Any

import discord
import pytest
from discord.http import Route
from discord_fake import (
    APP_ID,
    ATTACH_FILES,
    CHANNEL_ID,
    GUILD_ID,
    READ_MESSAGE_HISTORY,
    SEND_MESSAGES,
    SEND_MESSAGES_IN_THREADS,
    TOKEN,
    VIEW_CHANNEL,
    FakeDiscord,
    Harness,
    InteractionState,
    Member,
    http_error,
    install,
    render,
    uid,
)

CHANNEL_POST = Route("POST", "/channels/{channel_id}/messages", channel_id=CHANNEL_ID)


def button(custom_id: str = "dr:acc:1", label: str = "Accept", style: int = 1, **extra: Any) -> dict[str, Any]:
    return {"type": 2, "style": style, "label": label, "custom_id": custom_id, **extra}


def rows(*widths: int) -> list[dict[str, Any]]:
    n = iter(range(1000))
    return [{"type": 1, "components": [button(f"dr:b:{next(n)}") for _ in range(w)]} for w in widths]


GOOD: dict[str, Any] = {
    "content": "Challenge #1",
    "embeds": [{"title": "t", "description": "d", "image": {"url": "attachment://board.png"}}],
    "components": rows(5, 5, 5, 5, 5),
    "allowed_mentions": {"parse": [], "users": [uid("bob")]},
    "attachments": [{"id": 0, "filename": "board.png"}],
}


def bad(**changes: Any) -> dict[str, Any]:
    body = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body


def file(name: str = "board.png") -> discord.File:
    return discord.File(io.BytesIO(b"\x89PNG\r\n\x1a\n..."), filename=name)


def multipart(body: dict[str, Any], files: list[discord.File]) -> list[dict[str, Any]]:
    """The form discord.py sends: payload_json, then files[n]."""
    parts: list[dict[str, Any]] = [{"name": "payload_json", "value": discord.utils._to_json(body)}]
    parts += [{"name": f"files[{i}]", "value": f.fp, "filename": f.filename,
               "content_type": "application/octet-stream"} for i, f in enumerate(files)]
    return parts


async def post(fake: FakeDiscord, body: dict[str, Any], files: list[discord.File] | None = None) -> Any:
    files = files if files is not None else [file()]
    if files:
        return await fake.rest(CHANNEL_POST, files=files, form=multipart(body, files))
    return await fake.rest(CHANNEL_POST, json=body)


async def refused(fake: FakeDiscord, body: dict[str, Any], code: int = 50035,
                  files: list[discord.File] | None = None) -> str:
    with pytest.raises(discord.HTTPException) as err:
        await post(fake, body, files)
    assert err.value.code == code, err.value.text
    assert fake.refused and fake.refused[-1][1] == code
    return err.value.text


@pytest.fixture
def fake() -> FakeDiscord:
    return FakeDiscord()


async def test_a_well_formed_message_is_accepted(fake: FakeDiscord):
    message = await post(fake, GOOD)
    assert message["content"] == "Challenge #1" and [a["filename"] for a in message["attachments"]] == ["board.png"]
    assert list(fake.messages.values())[0].notified == []        # no mention in the content
    await post(fake, {"content": "only text"}, files=[])
    await post(fake, {"content": "", "attachments": [{"id": 0, "filename": "board.png"}]})
    await post(fake, {"components": rows(1)}, files=[])
    assert not fake.refused


@pytest.mark.parametrize("body, why", [
    (bad(content="x" * 2001), "content longer than 2000"),
    (bad(components=rows(1, 1, 1, 1, 1, 1)), "6 action rows"),
    (bad(components=rows(6)), "6 buttons"),
    (bad(components=[{"type": 1, "components": [button("x" * 101)]}]), "custom_id"),
    (bad(components=[{"type": 1, "components": [button("")]}]), "custom_id"),
    (bad(components=[{"type": 1, "components": [button(label="L" * 81)]}]), "label longer than 80"),
    (bad(components=[{"type": 1, "components": [{"type": 2, "style": 1, "label": "no id"}]}]), "custom_id"),
    (bad(components=[{"type": 1, "components": [button(url="https://x.example")]}]), "only link buttons"),
    (bad(components=[{"type": 1, "components": [button(style=5)]}]), "link button"),
    (bad(components=[{"type": 1, "components": [button(style=9)]}]), "style"),
    (bad(components=[{"type": 1, "components": [button("same"), button("same")]}]), "not unique"),
    (bad(components=[{"type": 1, "components": [button(label="")]}]), "label or an emoji"),
    (bad(embeds=[{"title": "t" * 257}]), "title longer than 256"),
    (bad(embeds=[{"description": "d" * 4097}]), "description longer than 4096"),
    (bad(embeds=[{"title": "t"}] * 11), "11 embeds"),
    (bad(embeds=[{"description": "d" * 4000}, {"description": "d" * 2001}]), "6001 characters"),
    (bad(embeds=[{"image": {"url": "attachment://other.png"}}]), "names no file"),
    (bad(attachments=None), "not listed in attachments"),
    (bad(attachments=[{"id": 1, "filename": "board.png"}]), "no attachments entry with id 0"),
    (bad(allowed_mentions={"parse": ["users"], "users": [uid("bob")]}), "mutually exclusive"),
    (bad(allowed_mentions={"parse": ["here"]}), "allowed_mentions.parse"),
    (bad(allowed_mentions={"parse": [], "users": ["bob"]}), "allowed_mentions.users"),
    (bad(allowed_mentions={"parse": [], "roles": "all"}), "allowed_mentions.roles"),
    (bad(allowed_mentions={"parse": [], "everyone": True}), "unknown fields"),
])
async def test_each_invalid_form_body_is_refused(fake: FakeDiscord, body: dict[str, Any], why: str):
    assert why in await refused(fake, body)
    assert not fake.messages


async def test_an_empty_message_is_refused(fake: FakeDiscord):
    await refused(fake, {"content": ""}, code=50006, files=[])
    await refused(fake, {"content": "", "components": [], "embeds": []}, code=50006, files=[])


async def test_a_file_the_payload_does_not_list_is_refused_through_a_webhook_too(h: Harness):
    token = await h.slash("games", "ana")          # acknowledged, answered
    route = Route("POST", "/webhooks/{webhook_id}/{webhook_token}", webhook_id=APP_ID, webhook_token=token)
    files = [file(), file("capture.gif")]
    body = {"content": "x", "attachments": [{"id": 0, "filename": "board.png"}]}
    with pytest.raises(discord.HTTPException) as err:
        await h.fake.webhook(route, multipart=multipart(body, files), files=files)
    assert err.value.code == 50035 and "files[1]" in err.value.text
    assert h.fake.refused == [(token, 50035)]
    h.fake.refused.clear()


# -- the interaction protocol, with real discord.py interactions -------------------------------------------


def interaction(h: Harness, user: str = "ana", **kw: Any) -> discord.Interaction:
    payload = h.slash_payload("games", user, **kw)
    return discord.Interaction(data=payload, state=h.bot._connection)


async def test_a_late_acknowledgement_is_unknown_interaction(h: Harness):
    late = interaction(h, age=3.5)
    with pytest.raises(discord.NotFound) as err:
        await late.response.defer()
    assert err.value.code == 10062
    assert h.fake.refused == [(late.token, 10062)]
    h.fake.refused.clear()
    fresh = interaction(h, age=2.0)            # within the three seconds
    await fresh.response.defer()
    assert not h.fake.refused


async def test_a_second_acknowledgement_is_refused(h: Harness):
    first = interaction(h)
    await first.response.defer(thinking=True)
    # A second Interaction object for the same event, so discord.py's own guard does not stop it.
    again = discord.Interaction(data=h.slash_payload("games", "ana") | {"id": str(first.id), "token": first.token},
                                state=h.bot._connection)
    with pytest.raises(discord.HTTPException) as err:
        await again.response.send_message("twice")
    assert (err.value.status, err.value.code) == (400, 40060)
    assert h.fake.refused == [(first.token, 40060)]
    h.fake.refused.clear()


async def test_followups_and_edits_before_the_acknowledgement_are_refused(h: Harness):
    early = interaction(h)
    with pytest.raises(discord.NotFound) as err:
        await early.followup.send("too soon")
    assert err.value.code == 10015
    with pytest.raises(discord.NotFound) as err:
        await early.edit_original_response(content="too soon")
    assert err.value.code == 10015
    assert h.fake.refused == [(early.token, 10015), (early.token, 10015)]
    h.fake.refused.clear()
    await early.response.defer(thinking=True)
    await early.followup.send("now")
    assert [s.content for s in h.fake.answers(early.token)] == ["now"]


async def test_an_expired_token_is_refused_without_blaming_the_adapter(h: Harness):
    gone = interaction(h)
    await gone.response.defer(thinking=True)
    h.fake.expire(gone.token, status=401, code=50027)
    with pytest.raises(discord.HTTPException) as err:
        await gone.followup.send("late")
    assert (err.value.status, err.value.code) == (401, 50027)
    assert not h.fake.refused                 # scripted, not the adapter's fault
    old = interaction(h)
    await old.response.defer(thinking=True)
    h.fake.interactions[old.token].id = h.fake.snowflake(age=16 * 60)      # past the 15 minutes
    with pytest.raises(discord.HTTPException) as err:
        await old.followup.send("late")
    assert err.value.code == 50027
    h.fake.refused.clear()


async def test_a_deferred_update_is_only_for_components(h: Harness):
    slash = interaction(h)
    route = Route("POST", "/interactions/{webhook_id}/{webhook_token}/callback", webhook_id=slash.id,
                  webhook_token=slash.token)
    with pytest.raises(discord.HTTPException) as err:
        await h.fake.webhook(route, payload={"type": 6})
    assert err.value.code == 50035 and "callback type 6" in err.value.text
    assert h.fake.refused == [(slash.token, 50035)]
    h.fake.refused.clear()


async def test_mentions_notify_only_in_new_messages_and_only_whom_allowed_mentions_permits(h: Harness):
    bob = uid("bob")
    channel = h.bot.get_partial_messageable(CHANNEL_ID)
    await channel.send(f"<@{bob}> <@{uid('cid')}>",
                       allowed_mentions=discord.AllowedMentions(everyone=False, roles=False,
                                                                users=[discord.Object(int(bob))]))
    await channel.send(f"<@{bob}>", allowed_mentions=discord.AllowedMentions.none())
    assert [s.notified for s in h.fake.channel_posts()] == [[bob], []]
    # The followup that replaces a "thinking" placeholder is an edit: nobody is notified.
    deferred = interaction(h)
    await deferred.response.defer(thinking=True)
    mention = discord.AllowedMentions(users=[discord.Object(int(bob))], everyone=False, roles=False)
    await deferred.followup.send(f"<@{bob}>", allowed_mentions=mention)
    await deferred.followup.send(f"<@{bob}> again", allowed_mentions=mention)
    assert [s.notified for s in h.fake.answers(deferred.token)] == [[], [bob]]


async def test_a_slash_payload_round_trips_through_discord_py(h: Harness):
    # The harness's own payloads are what discord.py expects: a member option resolves to a Member.
    before = h.fake.now()
    payload = h.slash_payload("new", "ana", {"opponent": Member("bob")})
    after = h.fake.now()
    parsed = discord.Interaction(data=payload, state=h.bot._connection)
    assert parsed.user.name == "ana" and parsed.channel_id == CHANNEL_ID
    state = h.fake.interactions[parsed.token]
    assert isinstance(state, InteractionState) and state.acked is None
    # Its id is minted on Discord's clock (snowflakes keep milliseconds).
    assert before - 0.001 <= discord.utils.snowflake_time(parsed.id).timestamp() <= after + 0.001


# -- the bot's own posts need the channel's permissions (interactions do not) --------------------------


async def channel_refusal(fake: FakeDiscord, body: dict[str, Any], files: list[discord.File]) -> int:
    with pytest.raises(discord.Forbidden) as err:
        await post(fake, body, files)
    assert not fake.refused              # the channel's settings, not a malformed request
    assert not fake.messages
    return err.value.code


async def test_a_post_without_view_channel_is_missing_access(fake: FakeDiscord):
    fake.deny(CHANNEL_ID, VIEW_CHANNEL)
    assert await channel_refusal(fake, {"content": "hi"}, []) == 50001


async def test_a_post_without_send_messages_is_missing_permissions(fake: FakeDiscord):
    fake.deny(CHANNEL_ID, SEND_MESSAGES)
    assert await channel_refusal(fake, {"content": "hi"}, []) == 50013


async def test_a_file_without_attach_files_is_missing_permissions(fake: FakeDiscord):
    fake.deny(CHANNEL_ID, ATTACH_FILES)
    assert await channel_refusal(fake, GOOD, [file()]) == 50013
    await post(fake, {"content": "text goes"}, files=[])


async def test_a_reply_without_read_message_history_is_missing_permissions(fake: FakeDiscord):
    fake.deny(CHANNEL_ID, READ_MESSAGE_HISTORY)
    reply = {"content": "hi", "message_reference": {"message_id": "1", "channel_id": str(CHANNEL_ID)}}
    assert await channel_refusal(fake, reply, []) == 50013
    await post(fake, {"content": "hi"}, files=[])


async def test_a_thread_needs_send_messages_in_threads(fake: FakeDiscord):
    fake.threads.add(CHANNEL_ID)
    fake.deny(CHANNEL_ID, SEND_MESSAGES_IN_THREADS)
    assert await channel_refusal(fake, {"content": "hi"}, []) == 50013
    fake.permissions[CHANNEL_ID] = (fake.bot_permissions(CHANNEL_ID) | SEND_MESSAGES_IN_THREADS) & ~SEND_MESSAGES
    await post(fake, {"content": "hi"}, files=[])


async def test_an_interaction_is_answered_where_the_bot_may_not_post(h: Harness):
    h.fake.deny(CHANNEL_ID, VIEW_CHANNEL | SEND_MESSAGES | ATTACH_FILES)
    payload = h.slash_payload("games", "ana")
    assert int(payload["app_permissions"]) & (VIEW_CHANNEL | SEND_MESSAGES) == 0   # Discord says so
    token = await h.feed(payload)
    assert h.fake.answers(token)


# -- the wire: failures reach discord.py as an aiohttp response ------------------------------------


async def logged_in(fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch, **options: Any) -> discord.http.HTTPClient:
    install(fake, monkeypatch)
    http = discord.http.HTTPClient(asyncio.get_running_loop(), **options)
    await http.static_login(TOKEN)
    return http


async def test_discord_py_retries_a_502_itself_on_the_wire(fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch):
    http = await logged_in(fake, monkeypatch)
    fake.script("/channels/{channel_id}/messages", http_error(502, 0, "Bad Gateway"), times=1000)
    try:
        with pytest.raises(discord.DiscordServerError):
            await http.send_message(CHANNEL_ID, params=discord.http.handle_message_parameters(content="hi"))
    finally:
        await http.close()
    assert len(fake.requests(method="POST")) == 5 and fake.slept == [1, 3, 5, 7, 9]


async def test_a_429_on_the_wire_is_waited_out_or_handed_back(fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch):
    http = await logged_in(fake, monkeypatch, max_ratelimit_timeout=30)
    try:
        fake.script("/channels/{channel_id}/messages", http_error(429, 0, "Slow down", retry_after=2.5))
        await http.send_message(CHANNEL_ID, params=discord.http.handle_message_parameters(content="hi"))
        assert fake.slept == [2.5] and len(fake.channel_posts()) == 1
        fake.script("/channels/{channel_id}/messages", http_error(429, 0, "Slow down", retry_after=600))
        with pytest.raises(discord.RateLimited):
            await http.send_message(CHANNEL_ID, params=discord.http.handle_message_parameters(content="hi"))
        assert fake.slept == [2.5]
    finally:
        await http.close()


async def test_discord_py_waits_move_the_fakes_clock(fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch):
    http = await logged_in(fake, monkeypatch)
    before = fake.now()
    fake.script("/channels/{channel_id}/messages", http_error(500, 0, "Internal Server Error"), times=2)
    try:
        await http.send_message(CHANNEL_ID, params=discord.http.handle_message_parameters(content="hi"))
    finally:
        await http.close()
    assert fake.now() - before >= 1 + 3


# -- content as Discord shows it ----------------------------------------------------------------------


@pytest.mark.parametrize("content, visible, hidden, links, special", [
    ("plain text", "plain text", [], [], []),
    ("won by Bob||\n||22-18||", "won by Bob▮22-18||", ["\n"], [], []),        # a stray || opens a spoiler
    ("won by Bob\\|\\|\n||22-18||", "won by Bob||\n▮", ["22-18"], [], []),
    ("[text](http://x.example) wins", "text wins", [], [("text", "http://x.example")], []),
    ("\\[text](http://x.example)", "[text](http://x.example)", [], [], []),
    ("**bold** _it_ ~~gone~~ `co*de`", "bold it gone co*de", [], [], []),
    ("a\\_b\\_c", "a_b_c", [], [], []),
    ("# Title\n> quote\n-# small", "Title\nquote\nsmall", [], [], []),
    ("hi @everyone and @here", "hi @everyone and @here", [], [], ["everyone", "here"]),
    ("hi @\u200beveryone", "hi @\u200beveryone", [], [], []),
])
def test_content_is_rendered_as_discord_shows_it(content: str, visible: str, hidden: list[str],
                                                 links: list[tuple[str, str]], special: list[str]):
    shown = render(content)
    assert (shown.visible, shown.hidden, shown.links, shown.special) == (visible, hidden, links, special)


def test_a_user_mention_stays_a_mention():
    assert render(f"<@{uid('bob')}> to move").users == [uid("bob")]


# -- the command menu --------------------------------------------------------------------------------------


async def test_a_command_in_a_server_and_globally_is_listed_twice(fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch):
    http = await logged_in(fake, monkeypatch)
    command = {"name": "games", "description": "d", "type": 1}
    try:
        await http.bulk_upsert_global_commands(APP_ID, [command])
        await http.bulk_upsert_guild_commands(APP_ID, GUILD_ID, [command])
        assert fake.command_menu() == ["games", "games"]
        await http.bulk_upsert_guild_commands(APP_ID, GUILD_ID, [])
        assert fake.command_menu() == ["games"]
        assert await http.get_global_commands(APP_ID) and not await http.get_guild_commands(APP_ID, GUILD_ID)
    finally:
        await http.close()


# -- direct messages and edits of the bot's own posts ---------------------------------------------------


async def test_a_dm_channel_opens_and_a_user_with_closed_dms_refuses_posts(fake: FakeDiscord):
    opened = await fake.rest(Route("POST", "/users/@me/channels"), json={"recipient_id": uid("bob")})
    assert opened["type"] == 1 and opened["recipients"][0]["id"] == uid("bob")
    again = await fake.rest(Route("POST", "/users/@me/channels"), json={"recipient_id": uid("bob")})
    assert again["id"] == opened["id"]            # one DM channel per user
    dm_post = Route("POST", "/channels/{channel_id}/messages", channel_id=int(opened["id"]))
    await fake.rest(dm_post, json={"content": "your turn"})
    assert [m.content for m in fake.dm_posts("bob")] == ["your turn"]
    fake.close_dms("bob")
    with pytest.raises(discord.Forbidden) as err:
        await fake.rest(dm_post, json={"content": "your turn"})
    assert err.value.code == 50007
    with pytest.raises(discord.HTTPException):
        await fake.rest(Route("POST", "/users/@me/channels"), json={"recipient_id": "42"})


async def test_the_bot_edits_its_own_post_but_not_where_it_lost_view_channel(fake: FakeDiscord):
    posted = await fake.rest(CHANNEL_POST, json={"content": "Challenge #1", "components": rows(2)})
    edit = Route("PATCH", "/channels/{channel_id}/messages/{message_id}", channel_id=CHANNEL_ID,
                 message_id=int(posted["id"]))
    edited = await fake.rest(edit, json={"content": "Declined by Bob.", "components": []})
    assert edited["content"] == "Declined by Bob." and edited["components"] == []
    assert fake.messages[int(posted["id"])].custom_ids() == []
    unknown = Route("PATCH", "/channels/{channel_id}/messages/{message_id}", channel_id=CHANNEL_ID, message_id=1)
    with pytest.raises(discord.NotFound) as err:
        await fake.rest(unknown, json={"content": "x"})
    assert err.value.code == 10008
    fake.deny(CHANNEL_ID, VIEW_CHANNEL)
    with pytest.raises(discord.Forbidden) as err:
        await fake.rest(edit, json={"content": "Accepted by Bob."})
    assert err.value.code == 50001 and not fake.refused
    assert fake.messages[int(posted["id"])].content == "Declined by Bob."
