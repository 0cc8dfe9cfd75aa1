"""Telling the player to move on Discord (issue 15, item 14), through the real discord.py and the
strict fake: a real ``<@id>`` mention whose ``allowed_mentions`` lets only that user through, on a
typed move's board, in a short message after a button move (an edit notifies no one), on reminders
through the outbox; /notify on sends it to the user's DMs instead, and back to the group ping when
the user accepts no DMs."""

from __future__ import annotations

from catalog_text import pattern, to_move, tr
from discord_fake import CHANNEL_ID, Harness, uid

from bot.i18n import t, tn


def allowed_of(h: Harness, message) -> dict:
    """The allowed_mentions the message was posted with."""
    calls = [c for c in h.fake.calls if c.payload and c.payload.get("content") == message.content]
    return calls[-1].payload["allowed_mentions"]


async def test_a_typed_move_pings_the_player_to_move_and_no_one_else(h: Harness):
    game_id, board = await h.new_game("ana", "bob")
    # The start pings Ana (white, to move), and only her.
    assert board.notified == [uid("ana")]
    token = await h.slash("move", "ana", {"move": "22-18"})
    answer = h.only_answer(token)
    bob = uid("bob")
    assert to_move("en", f"<@{bob}>", "black").search(answer.content), answer.content
    assert answer.notified == [bob]
    assert allowed_of(h, answer) == {"parse": [], "users": [int(bob)]}


async def test_a_button_move_edits_the_board_and_pings_in_a_new_message(h: Harness):
    game_id, board = await h.new_game("ana", "bob")
    await h.click(f"dr:s:{game_id}:0:22", "ana", board)
    edited = h.fake.messages[board.id]
    before = set(h.fake.messages)
    token = await h.click(f"dr:d:{game_id}:0:22:18", "ana", edited)
    new = [h.fake.messages[i] for i in h.fake.messages if i not in before]
    assert len(new) == 1, [m.content for m in new]
    ping = new[0]
    assert ping.content == t("en", "turn.ping", name=f"<@{uid('bob')}>", id=game_id)
    assert ping.notified == [uid("bob")] and not ping.ephemeral and ping.custom_ids() == []
    assert h.fake.messages[board.id].notified == [uid("ana")]      # the edit notified nobody new
    assert token


async def test_a_reminder_pings_through_the_outbox(h: Harness):
    game_id, _ = await h.new_game("ana", "bob")
    h.now[0] += 55 * 60
    assert await h.bot.delivery_round() == 1
    [reminder] = h.fake.channel_posts(CHANNEL_ID)
    assert pattern("en", "clock.reminder", name=f"<@{uid('ana')}>", left=tn("en", "unit.m", 5), id=game_id).match(
        reminder.content), reminder.content
    assert reminder.notified == [uid("ana")]


async def test_notify_on_sends_the_turn_to_the_users_dms(h: Harness):
    game_id, _ = await h.new_game("ana", "bob")
    token = await h.slash("notify", "bob", {"action": "on"})
    assert h.only_answer(token).ephemeral
    token = await h.slash("move", "ana", {"move": "22-18"})
    assert h.only_answer(token).notified == []
    assert await h.bot.delivery_round() == 1
    [dm] = h.fake.dm_posts("bob")
    assert dm.content == t("en", "turn.private", id=game_id, white="Ana", black="Bob", left="1h")
    assert h.fake.channel_posts(CHANNEL_ID) == []


async def test_closed_dms_fall_back_to_the_group_ping(h: Harness):
    game_id, _ = await h.new_game("ana", "bob")
    await h.slash("notify", "bob", {"action": "on"})
    h.fake.close_dms("bob")
    await h.slash("move", "ana", {"move": "22-18"})
    await h.bot.delivery_round()
    assert h.fake.dm_posts("bob") == []
    await h.bot.delivery_round()
    [ping] = h.fake.channel_posts(CHANNEL_ID)
    assert ping.content == t("en", "turn.ping", name=f"<@{uid('bob')}>", id=game_id)
    assert ping.notified == [uid("bob")]
    assert h.storage.notify_setting("discord", uid("bob")).unreachable


# -- a closed challenge's buttons go (issue 15, item 15) ---------------------------------------------------


async def test_a_declined_challenge_loses_its_buttons(h: Harness):
    from discord_fake import Member
    token = await h.slash("new", "ana", {"opponent": Member("bob")})
    challenge = h.only_answer(token)
    assert challenge.custom_ids() == ["dr:acc:1", "dr:dec:1"]
    token = await h.click("dr:dec:1", "bob", challenge)
    assert h.storage.challenge(1).status == "declined"
    updated = h.fake.messages[challenge.id]
    assert updated.custom_ids() == [] and updated.content.endswith(tr("en", "challenge.was_declined", by="Bob"))
    assert updated.message["edited_timestamp"] is not None


async def test_an_expired_challenge_loses_its_buttons_by_itself(h: Harness):
    token = await h.slash("new", "ana", {})
    challenge = h.only_answer(token)
    before = set(h.fake.messages)
    h.now[0] += 24 * 3600
    # The challenge's message is edited, and the channel is told once (issue 16: expired
    # challenges are said once in their chat).
    assert await h.bot.delivery_round() == 2
    updated = h.fake.messages[challenge.id]
    assert updated.custom_ids() == [] and tr("en", "challenge.was_expired") in updated.content
    said = [h.fake.messages[i].content for i in h.fake.messages if i not in before]
    assert said == [t("en", "challenge.expired", id=1)]
    assert await h.bot.delivery_round() == 0


# -- pings in escaped text (the merge with the escaping adapter) ---------------------------------------------

MARKUP_NICK = "*bob_the_great*"


async def test_a_player_named_like_markup_is_pinged_on_a_typed_move(h: Harness):
    h.nicks["bob"] = MARKUP_NICK
    game_id, _ = await h.new_game("ana", "bob")
    token = await h.slash("move", "ana", {"move": "22-18"})
    answer = h.only_answer(token)
    bob = uid("bob")
    assert answer.notified == [bob] and bob in answer.rendered.users
    assert f"<@{bob}>" in answer.raw and MARKUP_NICK not in answer.raw      # the name became the ping


async def test_a_player_named_like_markup_is_pinged_by_a_reminder(h: Harness):
    h.nicks["ana"] = MARKUP_NICK
    game_id, _ = await h.new_game("ana", "bob")
    h.now[0] += 55 * 60
    assert await h.bot.delivery_round() == 1
    [reminder] = h.fake.channel_posts(CHANNEL_ID)
    assert reminder.raw.startswith(f"<@{uid('ana')}>: 5m left")
    assert reminder.notified == [uid("ana")]


async def test_a_closed_challenge_shows_a_markup_name_as_typed(h: Harness):
    from discord_fake import Member
    h.nicks["bob"] = "[Bob](https://x.example)"
    token = await h.slash("new", "ana", {"opponent": Member("bob")})
    challenge = h.only_answer(token)
    await h.click("dr:dec:1", "bob", challenge)
    updated = h.fake.messages[challenge.id]
    assert updated.custom_ids() == [] and updated.content.endswith(tr("en", "challenge.was_declined",
                                                                      by="[Bob](https://x.example)"))
    assert not updated.rendered.links
