"""Challenges: open to anyone or to one @user; who may accept, decline, or not."""

from __future__ import annotations


def test_open_challenge_can_be_accepted_by_anyone(chat):
    cid = chat.challenge("ana", "italian white")
    chat.say("zoe", "/accept")
    row = chat.game(chat.storage.challenge(cid).game_id)
    assert (row.white_id, row.black_id) == ("ana", "zoe")


def test_targeted_challenge_is_accepted_by_its_target(chat):
    cid = chat.challenge("ana", "italian white @bob")
    text = chat.text("bob", "/accept")
    assert "Game #1 starts" in text
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
    assert f"Challenge #{cid} is for @bob" in chat.text("carol", f"/accept #{cid}")
    assert "no open challenge for you" in chat.text("carol", "/accept")
    assert chat.snapshot() == before
    assert chat.rows("games") == []


def test_targeted_challenge_accept_button_refuses_someone_else(chat):
    cid = chat.challenge("ana", "@bob")
    before = chat.snapshot()
    assert "is for @bob" in "".join(r.text for r in chat.press("carol", f"acc:{cid}"))
    assert chat.snapshot() == before


def test_targeted_challenge_cannot_be_declined_by_someone_else(chat):
    cid = chat.challenge("ana", "@bob")
    before = chat.snapshot()
    assert "is for @bob" in chat.text("carol", f"/decline #{cid}")
    assert "No challenge here is addressed to you" in chat.text("carol", "/decline")
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
    assert f"cannot accept your own challenge (#{cid})" in chat.text("ana", f"/accept #{cid}")
    assert f"The only open challenges here are your own (#{cid})" in chat.text("ana", "/accept")
    chat.press("ana", f"acc:{cid}")
    assert chat.snapshot() == before
    assert chat.rows("games") == []


def test_second_accept_of_the_same_challenge_gets_a_clear_answer_and_no_second_game(chat):
    cid = chat.challenge("ana")
    chat.say("bob", f"/accept #{cid}")
    before = chat.snapshot()
    assert f"Challenge #{cid} is no longer open" in chat.text("carol", f"/accept #{cid}")
    assert f"Challenge #{cid} is no longer open" in chat.text("bob", f"/accept #{cid}")
    assert "no longer open" in "".join(r.text for r in chat.press("dave", f"acc:{cid}"))
    assert "no open challenge" in chat.text("carol", "/accept")
    assert chat.snapshot() == before
    assert len(chat.rows("games")) == 1


def test_accept_of_a_challenge_from_another_chat(chat):
    cid = chat.challenge("ana")
    before = chat.snapshot()
    assert f"no challenge #{cid}" in chat.text("bob", f"/accept #{cid}", chat="elsewhere")
    assert chat.snapshot() == before


def test_accept_after_cancel(chat):
    cid = chat.challenge("ana")
    chat.say("ana", "/cancel")
    assert "no longer open" in chat.text("bob", f"/accept #{cid}")
    assert chat.rows("games") == []


def test_challenge_in_one_chat_is_not_seen_in_another(chat):
    chat.challenge("ana")
    assert "no open challenge" in chat.text("bob", "/accept", chat="elsewhere")
    assert "No games and no open challenges" in chat.text("bob", "/games", chat="elsewhere")


def test_targeted_challenge_cannot_be_taken_by_someone_showing_the_targets_name(chat):
    # Display names are free text anyone can choose; only the @handle names the target.
    cid = chat.challenge("ana", "@bob")
    before = chat.snapshot()
    impostor = chat.event("mallory", text=f"/accept #{cid}")
    impostor = type(impostor)(**{**impostor.__dict__, "user_name": "Bob", "username": "mallory"})
    replies = chat.check(chat.service.handle(impostor))
    assert "is for @bob" in replies[0].text
    assert chat.snapshot() == before


def test_targeted_challenge_reaches_a_user_without_a_handle_by_name(chat):
    cid = chat.challenge("ana", "@dave")
    event = chat.event("u-123", text=f"/accept #{cid}")
    event = type(event)(**{**event.__dict__, "user_name": "Dave", "username": None})
    chat.check(chat.service.handle(event))
    assert chat.storage.challenge(cid).status == "accepted"
