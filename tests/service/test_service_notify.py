"""Telling the player to move that it is their turn (issue 15, item 14): a ping of that user alone
after every move (typed, button, the bot's) and in reminders, or, for a player who asked for it with
/notify on, a private message instead (the group ping again when that cannot be delivered)."""

from __future__ import annotations

import pytest
from catalog_text import says, to_move

from bot.i18n import t, tn
from bot.service import DM_PREFIX, Mention, Reply
from bot.service.thinking import Thinker

HOUR = 3600
MINUTE = 60
SETTLE = 20.0


@pytest.fixture
def game(chat):
    """Ana (white) against Bob (black), italian, one hour per move; Ana to move."""
    return chat.new_game("ana", "bob", "italian", extra="1h")


def outbox(chat, chat_id: str | None = None) -> list:
    """What the service has sent on its own since the last look (handed over and marked sent)."""
    return [o for o in chat.service.tick(platform=chat.platform) if chat_id is None or o.chat_id == chat_id]


def any_move(chat, game_id: int) -> list[Reply]:
    """The player to move types their first legal move; the replies."""
    move = chat.position(game_id).legal_moves()[0]
    return chat.say(chat.to_move(game_id), f"/m {move}")


BOB = Mention("bob", "Bob", "bob")
ANA = Mention("ana", "Ana", "ana")


# -- pings in the group ------------------------------------------------------------------------------


def test_a_typed_move_pings_the_player_to_move_on_the_new_board(chat, game):
    replies = chat.say("ana", "/m 22-18")
    assert len(replies) == 1
    board = replies[0]
    assert board.mentions == [BOB]
    assert to_move("en", "Bob", "black").search(board.text), board.text
    assert outbox(chat) == []


def test_a_button_move_edits_the_board_and_pings_in_one_short_message(chat, game):
    chat.press("ana", f"s:{game}:0:22")
    replies = chat.press("ana", f"d:{game}:0:22:18")
    assert [r.replaces_board for r in replies] == [True, False]
    board, ping = replies
    # An edit notifies no one: the ping is a message of its own, text only, naming only Bob.
    assert board.mentions == []
    assert ping.text == t("en", "turn.ping", name="Bob", id=game)
    assert ping.mentions == [BOB]
    assert ping.image is None and ping.buttons == [] and not ping.private


def test_the_start_of_a_game_pings_white(chat):
    cid = chat.challenge("ana", "italian white")
    replies = chat.say("bob", f"/accept #{cid}")
    assert len(replies) == 1 and replies[0].mentions == [ANA]


def test_a_reminder_pings_the_player_to_move(chat, game, now):
    now[0] += 54 * MINUTE + 30
    out = outbox(chat)
    assert len(out) == 1
    assert out[0].reply.mentions == [ANA]
    assert says(out[0].reply.text, "en", "clock.reminder", name="Ana", left=tn("en", "unit.m", 5), id=game)


def test_no_ping_once_the_game_is_over(chat, game):
    chat.say("ana", "/resign")
    replies = chat.say("ana", "/resign")
    assert all(r.mentions == [] for r in replies)


def test_the_bots_move_pings_the_human_in_a_group(chat, pool):
    chat.use_thinker(Thinker(pool), bot_seconds=0.2)
    replies = chat.say("ana", "/play italian black level 1")
    assert replies[0].mentions == []      # the bot is to move: nobody to ping yet
    assert chat.service.settle(SETTLE)
    out = outbox(chat)
    assert len(out) == 1
    assert out[0].reply.mentions == [ANA] and to_move("en", "Ana", "black").search(out[0].reply.text)


def test_no_ping_in_a_private_chat(chat, pool):
    chat.use_thinker(Thinker(pool), bot_seconds=0.2)
    chat.say("ana", "/play italian black level 1", chat="ana-dm", kind="private")
    assert chat.service.settle(SETTLE)
    out = outbox(chat)
    assert len(out) == 1 and out[0].reply.mentions == []


def test_mentions_survive_the_outbox():
    reply = Reply("Bob, your turn", mentions=[BOB, Mention("7", "Ann")])
    assert Reply.from_json(reply.to_json()).mentions == reply.mentions
    # A message written before mentions existed reads as having none.
    old = reply.to_json().replace(', "mentions": [["bob", "Bob", "bob"], ["7", "Ann", null]]', "")
    assert "mentions" not in old and Reply.from_json(old).mentions == []


# -- /notify: private notices instead ------------------------------------------------------------------


def test_notify_on_sends_the_turn_privately_instead_of_pinging(chat, game):
    assert chat.text("bob", "/notify on") == t("en", "notify.on")
    replies = chat.say("ana", "/m 22-18")
    assert len(replies) == 1 and replies[0].mentions == []
    private = outbox(chat)
    assert [(o.chat_id, o.reply.game_id) for o in private] == [(DM_PREFIX + "bob", game)]
    assert private[0].reply.text == t("en", "turn.private", id=game, white="Ana", black="Bob", left="1h")


def test_notify_on_replaces_the_ping_after_a_button_move_and_in_reminders(chat, game, now):
    chat.say("bob", "/avisos on")
    chat.press("ana", f"s:{game}:0:22")
    replies = chat.press("ana", f"d:{game}:0:22:18")
    assert len(replies) == 1 and replies[0].replaces_board
    assert [o.chat_id for o in outbox(chat)] == [DM_PREFIX + "bob"]
    now[0] += 54 * MINUTE + 30
    reminder = outbox(chat)
    # The reminder goes to Bob alone: nothing in the group.
    assert [o.chat_id for o in reminder] == [DM_PREFIX + "bob"]
    assert says(reminder[0].reply.text, "en", "clock.reminder", name="Bob", left=tn("en", "unit.m", 5), id=game)


def test_notify_off_pings_in_the_group_again(chat, game):
    chat.say("bob", "/notify on")
    assert chat.text("bob", "/notify") == t("en", "notify.show_private")
    assert chat.text("bob", "/notify off") == t("en", "notify.off")
    assert chat.text("bob", "/notify") == t("en", "notify.show_group")
    assert chat.say("ana", "/m 22-18")[0].mentions == [BOB]
    assert outbox(chat) == []


def test_notify_answers_privately_and_bad_words_change_nothing(chat, game):
    replies = chat.say("bob", "/notify maybe")
    assert replies[0].private and replies[0].text == t("en", "notify.usage")
    assert chat.storage.notify_setting(chat.platform, "bob") is None


def test_notify_on_in_a_group_says_how_to_start_the_bot_where_it_must(chat):
    link = "https://t.me/ourbot?start={payload}"
    text = chat.text("bob", "/notify on", private_link=link)
    assert t("en", "notify.start_me", link="https://t.me/ourbot?start=notify") in text
    assert "t.me" not in chat.text("bob", "/notify on", chat="bob-dm", kind="private", private_link=link)


def test_an_undeliverable_private_notice_pings_in_the_group_until_the_user_writes_privately(chat, game):
    chat.say("bob", "/notify on")
    chat.say("ana", "/m 22-18")
    item = chat.service.pending_messages(chat.platform)[0]
    assert item.chat_id == DM_PREFIX + "bob"
    # Telegram: the user never started the bot (403); Discord: DMs closed.
    chat.service.message_failed(item.id, "Forbidden: bot can't initiate conversation with a user", permanent=True)
    ping = outbox(chat)
    assert [(o.chat_id, o.reply.mentions) for o in ping] == [(chat.chat_id, [BOB])]
    assert ping[0].reply.text == t("en", "turn.ping", name="Bob", id=game)
    # Later turns ping in the group too, with no private attempt.
    any_move(chat, game)
    assert any_move(chat, game)[0].mentions == [BOB]
    assert outbox(chat) == []


def test_a_private_message_from_the_user_makes_private_notices_work_again(chat, game):
    chat.say("bob", "/notify on")
    chat.say("ana", "/m 22-18")
    item = chat.service.pending_messages(chat.platform)[0]
    chat.service.message_failed(item.id, "Forbidden", permanent=True)
    outbox(chat)
    any_move(chat, game)
    # Bob is unreachable privately, so Ana's move pings him in the group.
    assert any_move(chat, game)[0].mentions == [BOB]
    assert outbox(chat) == []
    chat.say("bob", "/help", chat="bob-dm", kind="private")
    any_move(chat, game)
    assert any_move(chat, game)[0].mentions == []
    assert [o.chat_id for o in outbox(chat)] == [DM_PREFIX + "bob"]
