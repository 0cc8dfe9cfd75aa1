"""Challenges: open to anyone or to one @user; who may accept, decline, or not."""

from __future__ import annotations

from harness import en


def test_open_challenge_can_be_accepted_by_anyone(chat):
    cid = chat.challenge("ana", "italian white")
    chat.say("zoe", "/accept")
    row = chat.game(chat.storage.challenge(cid).game_id)
    assert (row.white_id, row.black_id) == ("ana", "zoe")


def test_targeted_challenge_is_accepted_by_its_target(chat):
    cid = chat.challenge("ana", "italian white @bob")
    text = chat.text("bob", "/accept")
    assert en("game.started", id=1, variant=en("variant.italian"), white="Ana", black="Bob") in text
    assert chat.storage.challenge(cid).status == "accepted"
    row = chat.game(chat.storage.challenge(cid).game_id)
    assert (row.white_id, row.black_id) == ("ana", "bob")


def test_targeted_challenge_names_the_target_and_has_a_decline_button(chat, actions_of):
    replies = chat.say("ana", "/new @bob")
    assert "@bob" in replies[0].text
    assert actions_of(replies[0]) == ["acc:1", "dec:1"]


def test_targeted_challenge_target_matched_without_case(chat):
    cid = chat.challenge("ana", "@BOB")
    chat.say("bob", f"/accept #{cid}")
    assert chat.storage.challenge(cid).status == "accepted"


def test_targeted_challenge_cannot_be_accepted_by_someone_else(chat):
    cid = chat.challenge("ana", "@bob")
    before = chat.snapshot()
    assert en("accept.not_for_you", id=cid, target="bob") in chat.text("carol", f"/accept #{cid}")
    assert en("accept.none") in chat.text("carol", "/accept")
    assert chat.snapshot() == before
    assert chat.rows("games") == []


def test_targeted_challenge_accept_button_refuses_someone_else(chat):
    cid = chat.challenge("ana", "@bob")
    before = chat.snapshot()
    assert en("accept.not_for_you", id=cid, target="bob") in "".join(r.text for r in chat.press("carol", f"acc:{cid}"))
    assert chat.snapshot() == before


def test_targeted_challenge_cannot_be_declined_by_someone_else(chat):
    cid = chat.challenge("ana", "@bob")
    before = chat.snapshot()
    assert en("accept.not_for_you", id=cid, target="bob") in chat.text("carol", f"/decline #{cid}")
    assert en("decline.none") in chat.text("carol", "/decline")
    assert chat.snapshot() == before


def test_targeted_challenge_declined_by_its_target(chat):
    cid = chat.challenge("ana", "@bob")
    assert "declined" in chat.text("bob", f"/decline #{cid}")
    assert chat.storage.challenge(cid).status == "declined"
    assert chat.rows("games") == []


def test_targeted_challenge_declined_with_the_button(chat):
    cid = chat.challenge("ana", "@bob")
    chat.press("bob", f"dec:{cid}")
    assert chat.storage.challenge(cid).status == "declined"


def test_challenger_cannot_accept_own_challenge(chat):
    cid = chat.challenge("ana")
    before = chat.snapshot()
    assert en("accept.own", id=cid) in chat.text("ana", f"/accept #{cid}")
    assert en("accept.only_own", ids=f"#{cid}") in chat.text("ana", "/accept")
    chat.press("ana", f"acc:{cid}")
    assert chat.snapshot() == before
    assert chat.rows("games") == []


def test_second_accept_of_the_same_challenge_gets_a_clear_answer_and_no_second_game(chat):
    cid = chat.challenge("ana")
    chat.say("bob", f"/accept #{cid}")
    before = chat.snapshot()
    assert en("challenge.closed", id=cid) in chat.text("carol", f"/accept #{cid}")
    assert en("challenge.closed", id=cid) in chat.text("bob", f"/accept #{cid}")
    assert en("challenge.closed", id=cid) in "".join(r.text for r in chat.press("dave", f"acc:{cid}"))
    assert en("accept.none") in chat.text("carol", "/accept")
    assert chat.snapshot() == before
    assert len(chat.rows("games")) == 1


def test_accept_of_a_challenge_from_another_chat(chat):
    cid = chat.challenge("ana")
    before = chat.snapshot()
    assert en("challenge.unknown", id=cid) in chat.text("bob", f"/accept #{cid}", chat="elsewhere")
    assert chat.snapshot() == before


def test_accept_after_cancel(chat):
    cid = chat.challenge("ana")
    chat.say("ana", "/cancel")
    assert en("challenge.closed", id=cid) in chat.text("bob", f"/accept #{cid}")
    assert chat.rows("games") == []


def test_challenge_in_one_chat_is_not_seen_in_another(chat):
    chat.challenge("ana")
    assert en("accept.none") in chat.text("bob", "/accept", chat="elsewhere")
    assert en("games.empty") in chat.text("bob", "/games", chat="elsewhere")


def test_targeted_challenge_cannot_be_taken_by_someone_showing_the_targets_name(chat):
    # Display names are free text anyone can choose; only the @handle names the target.
    cid = chat.challenge("ana", "@bob")
    before = chat.snapshot()
    impostor = chat.event("mallory", text=f"/accept #{cid}")
    impostor = type(impostor)(**{**impostor.__dict__, "user_name": "Bob", "username": "mallory"})
    replies = chat.check(chat.service.handle(impostor))
    assert en("accept.not_for_you", id=cid, target="bob") in replies[0].text
    assert chat.snapshot() == before


def test_targeted_challenge_reaches_a_user_without_a_handle_by_name(chat):
    cid = chat.challenge("ana", "@dave")
    event = chat.event("u-123", text=f"/accept #{cid}")
    event = type(event)(**{**event.__dict__, "user_name": "Dave", "username": None})
    chat.check(chat.service.handle(event))
    assert chat.storage.challenge(cid).status == "accepted"


# -- a closed challenge's message loses its buttons (issue 15, item 15) ------------------------------------


def shown(chat, user: str, args: str = "", message_id: str = "m1") -> int:
    """``user`` opens a challenge; the adapter reports the message that shows it: the challenge id."""
    replies = chat.say(user, f"/new {args}".strip())
    cid = replies[0].challenge_id
    assert cid is not None and replies[0].buttons
    chat.service.remember_board(chat.platform, chat.chat_id, message_id, None, None, challenge_id=cid)
    return cid


def updates(chat, replies: list | None = None) -> list[tuple[str | None, str, list]]:
    """The message edits among ``replies`` (an answer) or else in the outbox: (edited message, text,
    buttons)."""
    if replies is None:
        replies = [o.reply for o in chat.service.tick(platform=chat.platform)]
    return [(r.edit_of, r.text, r.buttons) for r in replies if r.edit_of is not None]


def test_an_accepted_challenge_message_loses_its_buttons(chat):
    cid = shown(chat, "ana", "italian white")
    assert updates(chat) == []
    replies = chat.say("bob", f"/accept #{cid}")
    # The edit goes out with the answer, after the new board.
    assert replies[0].game_id == cid and replies[-1].edit_of == "m1"
    assert updates(chat) == []
    [(edited, text, buttons)] = updates(chat, replies)
    assert edited == "m1" and buttons == []
    assert text.startswith(f"#{cid} Ana: {en('variant.italian')}")
    assert text.endswith(en("challenge.was_accepted", by="Bob", game=cid))


def test_the_accept_button_updates_the_challenge_message_too(chat):
    cid = shown(chat, "ana", "italian white")
    [(edited, text, buttons)] = updates(chat, chat.press("bob", f"acc:{cid}"))
    assert edited == "m1" and buttons == [] and en("challenge.was_accepted", by="Bob", game=cid) in text


def test_a_declined_or_withdrawn_challenge_message_loses_its_buttons(chat):
    first = shown(chat, "ana", "@bob", "m1")
    second = shown(chat, "ana", "", "m2")
    replies = chat.say("bob", f"/decline #{first}")
    assert [(e, t.splitlines()[-1], b) for e, t, b in updates(chat, replies)] == [
        ("m1", en("challenge.was_declined", by="Bob"), [])]
    replies = chat.say("ana", f"/cancel #{second}")
    assert [(e, t.splitlines()[-1], b) for e, t, b in updates(chat, replies)] == [
        ("m2", en("challenge.was_cancelled", name="Ana"), [])]


def test_other_challenges_withdrawn_by_a_game_lose_their_buttons(chat):
    first = shown(chat, "ana", "italian", "m1")
    shown(chat, "ana", "spanish", "m2")
    replies = chat.say("bob", f"/accept #{first}")
    assert sorted((e, t.splitlines()[-1]) for e, t, _ in updates(chat, replies)) == [
        ("m1", en("challenge.was_accepted", by="Bob", game=first)), ("m2", en("challenge.was_cancelled", name="Ana"))]


def test_a_lapsed_challenge_is_closed_by_timed_work_and_its_message_updated(chat, now):
    cid = shown(chat, "ana")
    assert chat.service.next_wakeup(chat.platform) == now[0] + 24 * 3600
    now[0] += 24 * 3600 - 1
    assert updates(chat) == []
    now[0] += 1
    [(edited, text, buttons)] = updates(chat)
    assert edited == "m1" and buttons == [] and text.endswith(en("challenge.was_expired"))
    assert chat.storage.challenge(cid).status == "expired"
    assert chat.service.next_wakeup(chat.platform) is None
    assert updates(chat) == []


def test_a_challenge_in_another_chat_is_updated_through_the_outbox(chat):
    cid = shown(chat, "ana")
    # The message is known in another chat (a group that got a new id, say).
    chat.service.remember_board(chat.platform, "elsewhere", "m5", None, None, challenge_id=cid)
    replies = chat.say("ana", "/cancel")
    assert [e for e, _, _ in updates(chat, replies)] == ["m1"]
    assert [e for e, _, _ in updates(chat)] == ["m5"]


def test_a_challenge_closed_before_its_message_was_remembered_is_updated_at_once(chat):
    cid = chat.say("ana", "/new")[0].challenge_id
    chat.say("ana", "/cancel")
    chat.service.remember_board(chat.platform, chat.chat_id, "m9", None, None, challenge_id=cid)
    assert [(e, b) for e, _, b in updates(chat)] == [("m9", [])]


def test_edits_survive_the_outbox():
    from bot.service import Reply
    reply = Reply("closed", edit_of="77", challenge_id=5)
    back = Reply.from_json(reply.to_json())
    assert (back.edit_of, back.challenge_id) == ("77", 5)
