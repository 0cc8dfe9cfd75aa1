"""Where issue 16's wording meets issue 15's pings and challenge messages (the merge of main into
words16): a lapsed challenge is said once in its chat and its message loses its buttons; the bot
is named in the chat's language in private turn notices and analysis reports; /games pages and
/games done both work."""

from __future__ import annotations

import pytest

from bot.i18n import t
from bot.service import DM_PREFIX
from bot.service.thinking import Thinker

DAY = 24 * 3600
SETTLE = 20.0


def shown(chat, user: str, message_id: str = "m1") -> int:
    """``user`` opens a challenge and the adapter reports the message that shows it."""
    cid = chat.say(user, "/new")[0].challenge_id
    chat.service.remember_board(chat.platform, chat.chat_id, message_id, None, None, challenge_id=cid)
    return cid


def outbox(chat) -> list:
    return [o.reply for o in chat.service.tick(platform=chat.platform)]


def test_a_lapse_edits_the_challenge_message_and_is_said_once(chat, now):
    cid = shown(chat, "ana")
    now[0] += DAY
    out = outbox(chat)
    assert [(r.edit_of, r.buttons) for r in out if r.edit_of is not None] == [("m1", [])]
    assert [r.text for r in out if r.edit_of is None] == [t("en", "challenge.expired", id=cid)]
    assert outbox(chat) == []
    chat.say("bob", "/games")
    assert outbox(chat) == []


def test_a_command_that_finds_a_challenge_lapsed_says_it_once(chat, now):
    cid = shown(chat, "ana")
    now[0] += DAY + 1
    replies = chat.say("bob", f"/accept #{cid}")
    assert [r.text for r in replies] == [t("en", "challenge.expired", id=cid)] and not replies[0].private
    out = outbox(chat)
    # The answer said it in the chat: the outbox only takes the buttons away.
    assert [r.edit_of for r in out] == ["m1"]
    assert t("en", "challenge.expired", id=cid) not in [r.text for r in out]


def test_a_button_that_finds_a_challenge_lapsed_leaves_the_chat_message_to_the_outbox(chat, now):
    cid = shown(chat, "ana")
    now[0] += DAY + 1
    replies = chat.press("bob", f"acc:{cid}")
    assert replies[0].private and replies[0].text == t("en", "challenge.expired", id=cid)
    out = outbox(chat)
    assert [r.text for r in out if r.edit_of is None] == [t("en", "challenge.expired", id=cid)]
    assert [r.edit_of for r in out if r.edit_of is not None] == ["m1"]


def test_a_private_turn_notice_names_the_bot_in_the_chats_language(chat, pool):
    chat.say("ana", "/lang es", admin=True)
    chat.say("ana", "/notify on")
    chat.use_thinker(Thinker(pool), bot_seconds=0.2)
    chat.say("ana", "/play italian black level 1")
    assert chat.service.settle(SETTLE)
    private = [o.reply.text for o in chat.service.tick(platform=chat.platform) if o.chat_id == DM_PREFIX + "ana"]
    assert len(private) == 1
    assert t("es", "bot.name", level=1) in private[0] and "Bot (level 1)" not in private[0]


@pytest.mark.parametrize("args", ["done", "terminadas"])
def test_games_done_still_lists_finished_games_with_paging_in(chat, args):
    game = chat.new_game("ana", "bob", "italian")
    chat.resign("ana")
    answer = chat.text("ana", f"/games {args}")
    assert answer.startswith(t("en", "history.header")) and f"#{game}" in answer
    assert chat.text("ana", "/games 2") == t("en", "games.empty")
    assert chat.text("ana", "/games x y") == t("en", "games.usage")
