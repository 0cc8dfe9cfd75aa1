"""The Discord adapter against real discord.py objects, with only HTTP replaced.

Every test here runs against the one strict fake Discord of discord_fake.py (its own tests are
in test_discord_fake.py): it refuses what Discord refuses and the harness fails any test that
leaves a refused request behind.  Interactions go in as INTERACTION_CREATE payloads through
``parse_interaction_create``.  The service, its SQLite file and the board renderer are real.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest
from discord_fake import (
    CHANNEL_ID,
    DM_CHANNEL_ID,
    GUILD_ID,
    OTHER_CHANNEL_ID,
    TOKEN,
    FakeDiscord,
    Harness,
    Member,
    Sent,
    http_error,
    install,
    uid,
)

from bot.i18n import t
from bot.platforms.discord import GameButton, sync_tree
from bot.platforms.discord.bot import GlobalCommandsExist
from bot.platforms.discord.render import escape, mention, only_user, split_text
from bot.service import GameService
from bot.service.chat.registry import REGISTRY
from bot.service.chat.wording import variant_name
from bot.storage import Storage

PNG = b"\x89PNG\r\n\x1a\n"
TEMPLATE = GameButton.__discord_ui_compiled_template__


# -- tests ---------------------------------------------------------------------------------------------


async def test_login_registers_the_persistent_buttons_and_no_privileged_intent(h: Harness):
    assert [c.path for c in h.fake.calls[:2]] == ["/users/@me", "/oauth2/applications/@me"]
    assert TEMPLATE in h.bot._connection._view_store._dynamic_items
    intents = h.bot.intents
    assert not (intents.members or intents.presences or intents.message_content)
    assert not h.bot.delivering                     # starts on_ready, never for `sync`
    assert not h.fake.requests(method="PUT")        # no sync on start


async def test_new_then_accept_posts_a_board_with_persistent_buttons(h: Harness):
    token = await h.slash("new", "ana", {"variant": "italian", "color": "white", "opponent": Member("bob"),
                                         "move_time": "2h"})
    callback = h.fake.requests(token, path_end="/callback")
    assert [c.payload["type"] for c in callback] == [5]        # deferred first
    challenge = h.only_answer(token)
    assert not challenge.ephemeral
    assert "#1" in challenge.content and f"<@{uid('bob')}>" in challenge.content
    assert challenge.custom_ids() == ["dr:acc:1", "dr:dec:1"]
    assert all(TEMPLATE.fullmatch(cid) for cid in challenge.custom_ids())
    stored = h.storage.challenge(1)
    assert stored.target_username == "bob" and stored.move_seconds == 7200 and stored.color == "white"

    token = await h.slash("accept", "bob", {"id": 1})
    board = h.only_answer(token)
    game_id = h.storage.challenge(1).game_id
    assert game_id is not None
    assert f"#{game_id}" in board.content
    # The board pings Ana (to move): a new followup, not an edit of the placeholder (edits notify no one).
    posted = [c for c in h.fake.requests(token, method="POST") if "board.png" in c.files][-1]
    assert posted.files["board.png"].startswith(PNG)
    assert board.notified == [uid("ana")]
    assert board.filenames() == ["board.png"]
    ids = board.custom_ids()
    assert ids and all(TEMPLATE.fullmatch(cid) and len(cid) <= 100 for cid in ids)
    assert all(cid.startswith(f"dr:s:{game_id}:0:") for cid in ids)
    assert len(board.message["components"]) <= 5
    # The board message is remembered for the game.
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(board.id)) == game_id
    assert h.storage.game(game_id).white_name == "Ana"


async def test_a_challenge_to_one_member_mentions_them_for_real(h: Harness):
    bob = uid("bob")
    token = await h.slash("new", "ana", {"opponent": Member("bob"), "move_time": "2h"})
    challenge = h.only_answer(token)
    # A real mention, not a handle: Discord shows it and notifies Bob, and only Bob.
    assert f"<@{bob}>" in challenge.content and "@bob" not in challenge.content
    assert challenge.notified == [bob]
    sent = [c for c in h.fake.requests(token, method="POST") if c.payload.get("content") == challenge.content]
    assert sent and sent[-1].payload["allowed_mentions"] == {"parse": [], "users": [int(bob)]}
    assert h.storage.challenge(1).target_username == "bob"        # the service still matches the handle
    # An open challenge, and anything else the bot says, mentions nobody.
    token = await h.slash("new", "cid", {})
    assert h.only_answer(token).notified == []
    assert all(not s.notified for s in h.fake.messages.values() if s.token != challenge.token)
    assert all(c.payload.get("allowed_mentions", {}).get("parse") == [] for c in h.fake.calls
               if c.payload and "allowed_mentions" in c.payload)


async def test_move_command_plays_the_move(h: Harness):
    game_id, _ = await h.new_game()
    move = h.legal(game_id)[0]
    token = await h.slash("move", "ana", {"move": move, "game": game_id})
    answer = h.only_answer(token)
    assert h.storage.game(game_id).ply == 1
    assert [m.notation for m in h.storage.moves(game_id)] == [move]
    assert move in answer.content and answer.filenames()[0] == "board.png"
    assert all(cid.startswith(f"dr:s:{game_id}:1:") for cid in answer.custom_ids())
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(answer.id)) == game_id


async def test_clicking_a_piece_edits_the_board_with_its_destinations(h: Harness):
    game_id, board = await h.new_game()
    piece = board.custom_ids()[0]
    posted_before = len(h.fake.messages)
    token = await h.click(piece, "ana", board)
    assert [c.payload["type"] for c in h.fake.requests(token, path_end="/callback")] == [6]   # deferred update
    edits = h.fake.requests(token, method="PATCH")
    assert len(edits) == 1 and edits[0].path.endswith("/messages/@original")
    assert edits[0].files["board.png"].startswith(PNG)
    assert not h.fake.requests(token, method="POST", path_end="{webhook_token}")   # no new message
    assert len(h.fake.messages) == posted_before
    edited = h.fake.messages[board.id]
    ids = edited.custom_ids()
    assert any(cid.startswith(f"dr:d:{game_id}:0:") for cid in ids)
    assert f"dr:p:{game_id}:0" in ids
    assert all(TEMPLATE.fullmatch(cid) for cid in ids)

    # Choosing a destination plays the move, again by editing the board.
    destination = next(cid for cid in ids if cid.startswith("dr:d:"))
    token = await h.click(destination, "ana", edited)
    assert h.storage.game(game_id).ply == 1
    assert h.fake.requests(token, method="PATCH")
    assert all(cid.startswith(f"dr:s:{game_id}:1:") for cid in h.fake.messages[board.id].custom_ids())


async def test_stale_unknown_and_missing_button_ids_are_still_answered(h: Harness):
    game_id, board = await h.new_game()
    old_piece = board.custom_ids()[0]
    await h.slash("move", "ana", {"move": h.legal(game_id)[0]})
    assert h.storage.game(game_id).ply == 1

    # A button of an old position: the service shows the current board in its place.
    token = await h.click(old_piece, "bob", board)
    assert h.fake.requests(token, path_end="/callback")[0].payload["type"] == 6
    assert t("en", "button.stale") in h.fake.messages[board.id].content

    # Garbage that is not even our prefix.
    token = await h.click("garbage!!", "bob", board)
    answer = h.only_answer(token)
    assert answer.ephemeral and h.fake.requests(token, method="POST")[-1].flags & 64
    assert answer.content == t("en", "button.invalid")

    # Our prefix and the template's characters, but nonsense, on a message that carries it.
    odd = json.loads(json.dumps(board.message))
    odd["components"][0]["components"][0]["custom_id"] = "dr:zz:qq"
    token = await h.click("dr:zz:qq", "bob", Sent(odd, False, CHANNEL_ID))
    assert len(h.fake.requests(token, path_end="/callback")) == 1
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.content == t("en", "button.invalid")

    # Our prefix, but nonsense; and an id the clicked message does not carry.
    for custom_id in ("dr:zz:qq", "dr:s:99:0:22"):
        token = await h.click(custom_id, "bob", board)
        assert h.fake.requests(token, path_end="/callback"), custom_id
        assert h.fake.answers(token) or h.fake.requests(token, method="PATCH"), custom_id


async def test_private_replies_are_ephemeral(h: Harness):
    game_id, board = await h.new_game()
    # A spectator types a move: the public "thinking" placeholder is removed, the answer is ephemeral.
    token = await h.slash("move", "cid", {"move": h.legal(game_id)[0], "game": game_id})
    assert h.fake.requests(token, method="DELETE")
    answer = h.only_answer(token)
    assert answer.ephemeral
    assert h.fake.requests(token, method="POST", path_end="{webhook_token}")[-1].flags & 64
    assert answer.content == t("en", "game.not_player", id=game_id)
    # A spectator clicks a piece: ephemeral followup, the board untouched.
    before = json.dumps(h.fake.messages[board.id].message)
    token = await h.click(board.custom_ids()[0], "cid", board)
    answer = h.only_answer(token)
    assert answer.ephemeral and h.fake.requests(token, method="POST")[-1].flags & 64
    assert json.dumps(h.fake.messages[board.id].message) == before
    assert h.storage.game(game_id).ply == 0


async def test_deadline_work_posts_a_reminder_then_the_loss_on_time(h: Harness):
    game_id, _ = await h.new_game()
    h.now[0] += 3600 - 300       # a tenth of the hour is left
    assert await h.bot.delivery_round() == 1
    posts = h.fake.requests(method="POST", path_end="/channels/{channel_id}/messages")
    assert len(posts) == 1
    reminder = posts[0].payload["content"]
    assert f"#{game_id}" in reminder and f"<@{uid('ana')}>" in reminder
    sent = [s for s in h.fake.messages.values() if s.content == reminder][0]
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(sent.id)) == game_id
    assert await h.bot.delivery_round() == 0       # once only

    h.now[0] += 600
    assert await h.bot.delivery_round() == 1
    final = h.fake.requests(method="POST", path_end="/channels/{channel_id}/messages")[-1]
    assert final.files["board.png"].startswith(PNG)
    assert h.storage.game(game_id).status == "finished"


async def test_deadline_in_a_channel_that_is_gone_is_logged_and_skipped(h: Harness, caplog):
    await h.slash("new", "ana", {"color": "white", "move_time": "1h"}, channel_id=OTHER_CHANNEL_ID)
    await h.slash("accept", "bob", {}, channel_id=OTHER_CHANNEL_ID)
    game_id, _ = await h.new_game()
    h.fake.gone_channels.add(OTHER_CHANNEL_ID)
    h.now[0] += 3400
    with caplog.at_level(logging.WARNING):
        assert await h.bot.delivery_round() == 1
    assert any(str(OTHER_CHANNEL_ID) in r.getMessage() and "dropped" in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING)
    posts = [c for c in h.fake.requests(method="POST", path_end="/channels/{channel_id}/messages")]
    assert len(posts) == 2
    assert f"#{game_id}" in next(c for c in posts if c.error is None).payload["content"]
    # Unknown Channel is for good: that message is dropped, the other one sent.
    statuses = sorted(m.status for m in h.storage.find_outbox())
    assert statuses == ["dropped", "sent"]


async def test_spanish_locale_gets_spanish_answers(h: Harness):
    token = await h.slash("help", "ana", locale="es-ES")
    answers = h.fake.answers(token)
    assert answers and all(a.ephemeral for a in answers)   # help is for the one who asked
    # Longer than one Discord message: split at line ends, nothing lost.
    assert "\n".join(a.content for a in answers) == REGISTRY.help_text("es")
    token = await h.slash("new", "ana", {"move_time": "2h"}, locale="es-ES")
    assert "#1" in h.only_answer(token).content
    assert h.only_answer(token).content != t("en", "new.open", name="Ana", id=1, target="", variant="", colors="",
                                             time="")
    assert h.storage.challenge(1).variant == "spanish"   # Spanish speakers default to Spanish draughts


async def test_pdn_sends_a_file(h: Harness):
    game_id, _ = await h.new_game()
    move = h.legal(game_id)[0]
    await h.slash("move", "ana", {"move": move})
    token = await h.slash("pdn", "bob", {"game": game_id})
    answer = h.only_answer(token)
    upload = h.fake.requests(token, method="PATCH")[-1].files
    assert list(upload) == [f"game-{game_id}.pdn"]
    pdn = upload[f"game-{game_id}.pdn"].decode("utf-8")
    assert '[White "Ana"]' in pdn and move in pdn
    assert answer.filenames() == [f"game-{game_id}.pdn"]


async def test_other_commands_rebuild_the_typed_text(h: Harness):
    game_id, _ = await h.new_game()
    token = await h.slash("draw", "ana", {"game": game_id})
    offer = h.only_answer(token)
    assert offer.custom_ids() == [f"dr:dr:{game_id}:0"]
    token = await h.click(offer.custom_ids()[0], "bob", offer)
    assert h.storage.game(game_id).status == "finished"
    token = await h.slash("games", "cid")
    assert h.only_answer(token).content == t("en", "games.empty")
    token = await h.slash("settings", "ana", {"key": "variant", "value": "spanish"}, admin=True)
    assert h.only_answer(token).content == t("en", "settings.variant_set", variant=variant_name("en", "spanish"))
    token = await h.slash("lang", "ana", {"language": "it"}, admin=True)
    assert h.only_answer(token).content == t("it", "lang.set")
    token = await h.slash("rules", "bob", {"variant": "triestina"})
    assert h.only_answer(token).content == t("it", "rules.triestina")[:2000]
    token = await h.slash("new", "ana", {"opponent": Member("bob")})
    challenge = h.storage.challenge(2)
    assert (challenge.target_username, challenge.status) == ("bob", "open")
    assert f"<@{uid('bob')}>" in h.only_answer(token).content
    token = await h.slash("decline", "bob", {})
    assert "#2" in h.only_answer(token).content
    assert h.storage.challenge(2).status == "declined"
    await h.slash("new", "ana", {})
    token = await h.slash("cancel", "ana", {"id": 3})
    assert h.storage.challenge(3).status == "cancelled"
    token = await h.slash("board", "cid", {"game": game_id})
    assert h.only_answer(token).filenames() == ["board.png"]
    token = await h.slash("resign", "cid", {})
    # Carl plays no game here: told so, and nothing changes.
    assert h.only_answer(token).content == t("it", "game.none")
    assert h.storage.game(game_id).result_reason == "agreement"


async def test_direct_messages_are_private_chats(h: Harness):
    token = await h.slash("games", "ana", dm=True)
    assert h.only_answer(token).content
    chat = h.storage.chat("discord", str(DM_CHANNEL_ID))
    assert chat is not None and chat.kind == "private"


async def test_a_member_option_in_a_dm_is_answered_not_failed(h: Harness):
    # Issue 15, item 13: the option was typed as a server member, which a DM has none of, and the
    # user got "something went wrong".  Now the service answers whatever it answers a typed
    # "/new @bob" in a private chat.
    token = await h.slash("new", "ana", {"opponent": Member("bob")}, dm=True)
    assert h.only_answer(token).content != t("en", "error.internal")
    [challenge] = h.storage.open_challenges("discord", str(DM_CHANNEL_ID))
    assert challenge.target_username == "bob"
    token = await h.slash("stats", "ana", {"player": Member("bob")}, dm=True)
    assert h.only_answer(token).content != t("en", "error.internal")


async def test_a_late_acknowledgement_is_rejected_and_nothing_is_done(h: Harness, caplog):
    with caplog.at_level(logging.WARNING):
        token = await h.slash("new", "ana", {}, age=5.0)
    callback = h.fake.requests(token, path_end="/callback")
    assert len(callback) == 1 and not h.fake.answers(token)
    assert h.storage.open_challenges("discord", str(CHANNEL_ID)) == []
    assert any("acknowledge" in r.getMessage() for r in caplog.records)
    assert h.fake.refused == [(token, 10062)]
    h.fake.refused.clear()


async def test_a_failure_while_answering_still_gets_an_ephemeral_answer(h: Harness, bot_errors):
    game_id, board = await h.new_game()
    h.fake.script("{webhook_token}", http_error(400, 50035, "Invalid Form Body"), method="POST")
    token = await h.click(board.custom_ids()[0], "cid", board)     # its private answer fails once
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.content == t("en", "error.internal")
    assert [r.name for r in bot_errors] == ["bot.platforms.discord.bot"]
    bot_errors.clear()       # the one expected error


@pytest.mark.parametrize("status, code", [(404, 10015), (404, 10062), (401, 50027)])
async def test_a_move_whose_interaction_is_gone_still_shows_the_board_in_the_channel(h: Harness, caplog,
                                                                                     status: int, code: int):
    game_id, _ = await h.new_game()
    move = h.legal(game_id)[0]
    payload = h.slash_payload("move", "ana", {"move": move, "game": game_id})
    h.fake.expire(payload["token"], status=status, code=code, after_ack=True)
    with caplog.at_level(logging.WARNING):
        token = await h.feed(payload)
    assert h.storage.game(game_id).ply == 1                  # the move is committed...
    assert not h.fake.answers(token)                            # ...the interaction cannot show it...
    posts = h.fake.channel_posts()
    assert len(posts) == 1                                      # ...so the channel does
    board = posts[0]
    assert move in board.content and board.filenames() == ["board.png"]
    assert all(cid.startswith(f"dr:s:{game_id}:1:") for cid in board.custom_ids())
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(board.id)) == game_id
    assert any("gone" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


async def test_a_click_whose_interaction_is_gone_posts_the_new_board(h: Harness):
    game_id, board = await h.new_game()
    piece = board.custom_ids()[0]
    token = await h.click(piece, "ana", board)
    destination = next(c for c in h.fake.messages[board.id].custom_ids() if c.startswith("dr:d:"))
    payload = h.click_payload(destination, "ana", h.fake.messages[board.id])
    h.fake.expire(payload["token"], after_ack=True)
    token = await h.feed(payload)
    assert h.storage.game(game_id).ply == 1
    assert h.fake.requests(token, method="PATCH") and not h.fake.answers(token)
    posted, ping = h.fake.channel_posts()
    assert posted.filenames() == ["board.png"]
    assert all(cid.startswith(f"dr:s:{game_id}:1:") for cid in posted.custom_ids())
    assert ping.notified == [uid("bob")]


async def test_transient_failures_are_retried_with_bounded_backoff(h: Harness):
    game_id, _ = await h.new_game()
    # The answer pings the opponent, so it is a followup (a new message), not an edit.
    followup = "{webhook_token}"
    h.fake.script(followup, http_error(503, 0, "Service Unavailable"), method="POST")
    h.fake.script(followup, http_error(429, 0, "You are being rate limited.", retry_after=1.5), method="POST")
    h.fake.script(followup, http_error(502, 0, "Bad Gateway"), method="POST")
    token = await h.slash("move", "ana", {"move": h.legal(game_id)[0]})
    answer = h.only_answer(token)                               # answered where it was asked
    assert answer.filenames() == ["board.png"] and not h.fake.channel_posts()
    posts = [c for c in h.fake.requests(token, method="POST") if "board.png" in c.files]
    assert len(posts) == 4 and all(e.files["board.png"].startswith(PNG) for e in posts)   # fresh files each time
    # discord.py waits and tries again itself (1 + 2n s after a 5xx, Discord's retry_after for a
    # 429); ours do not stack on its tries.
    assert h.fake.slept == [1.0, 1.5, 5.0] and not h.sleeps


async def test_an_interaction_that_keeps_failing_falls_back_to_the_channel(h: Harness):
    game_id, _ = await h.new_game()
    h.fake.script("@original", http_error(500, 0, "Internal Server Error"), times=100)
    h.fake.script("{webhook_token}", http_error(500, 0, "Internal Server Error"), method="POST", times=100)
    token = await h.slash("move", "ana", {"move": h.legal(game_id)[0]})
    tries = len(h.fake.requests(token, path_end="@original"))
    assert 2 <= tries <= 5                                      # bounded
    assert sum(h.sleeps) <= 30
    [posted] = h.fake.channel_posts()
    assert posted.filenames() == ["board.png"] and h.storage.game(game_id).ply == 1


async def test_deadline_messages_are_retried_then_delivered(h: Harness):
    game_id, _ = await h.new_game()
    h.fake.script("/channels/{channel_id}/messages", http_error(502, 0, "Bad Gateway"))
    h.fake.script("/channels/{channel_id}/messages", http_error(429, 0, "Slow down", retry_after=2.0))
    h.now[0] += 3600 - 300
    assert await h.bot.delivery_round() == 1
    posts = h.fake.requests(method="POST", path_end="/channels/{channel_id}/messages")
    assert len(posts) == 3 and h.fake.slept == [1.0, 2.0] and not h.sleeps     # discord.py's own tries
    assert [s.content for s in h.fake.channel_posts()] == [posts[-1].payload["content"]]
    assert f"#{game_id}" in posts[-1].payload["content"]


async def test_a_deadline_message_discord_keeps_refusing_is_put_back_after_a_few_tries(h: Harness):
    await h.new_game()
    h.fake.script("/channels/{channel_id}/messages", http_error(503, 0, "Service Unavailable"), times=100)
    h.now[0] += 3600 - 300
    assert await h.bot.delivery_round() == 0
    tries = len(h.fake.requests(method="POST", path_end="/channels/{channel_id}/messages"))
    assert 2 <= tries <= 5 and len(h.sleeps) == tries - 1
    # Not lost: back in the outbox, to be tried again after a backoff.
    [row] = h.storage.find_outbox()
    assert (row.status, row.attempts) == ("pending", 1) and row.next_attempt_at > h.now[0]


async def test_a_failed_acknowledgement_is_tried_again_in_time(h: Harness):
    h.fake.script("/callback", http_error(503, 0, "Service Unavailable"))
    token = await h.slash("games", "ana")
    assert [c.error for c in h.fake.requests(token, path_end="/callback")] == [0, None]
    assert h.only_answer(token).content == t("en", "games.empty")
    assert h.fake.slept == [1.0] and not h.sleeps           # discord.py's one retry, within the 3 s


async def test_a_service_failure_is_still_acknowledged_and_answered(h: Harness, bot_errors):
    # A damaged database (the chats table gone): the service cannot do anything.
    with sqlite3.connect(h.db_path) as damage:
        damage.execute("ALTER TABLE chats RENAME TO chats_lost")
    token = await h.slash("new", "ana", {})
    assert [c.payload["type"] for c in h.fake.requests(token, path_end="/callback")] == [5]
    answer = h.only_answer(token)
    assert answer.content == t("en", "error.internal")
    token = await h.click("dr:acc:1", "bob", answer)
    assert [c.payload["type"] for c in h.fake.requests(token, path_end="/callback")] == [6]
    assert h.only_answer(token).content == t("en", "error.internal")
    assert bot_errors and all(r.name.startswith("bot.") for r in bot_errors)
    bot_errors.clear()       # the expected errors: the service's own log of the failure


async def test_an_unknown_slash_command_is_answered(h: Harness):
    token = await h.slash("oldcommand", "ana", {})
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.content == t("en", "discord.stale_command")


async def test_a_command_sent_as_an_older_registration_had_it_is_answered_without_an_error(h: Harness, bot_errors):
    # /move without its required option: what a client still showing an old command list sends.
    token = await h.slash("move", "ana", {})
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.content == t("en", "discord.stale_command")
    assert bot_errors == []


def test_only_the_resolved_handle_becomes_a_mention():
    text = "@bob, @Bob: /accept. Not @bobby nor @bob.smith; thanks @bob."
    assert mention(text, "bob", 7) == "<@7>, <@7>: /accept. Not @bobby nor @bob.smith; thanks <@7>."
    assert mention("@a.b+c", "a.b", 7) == "<@7>+c"          # the handle is matched literally
    # In escaped text (render.escape) too: "@bob\_x" is bob_x's handle, "@bob\_xy" is not.
    escaped = escape("@bob_x: /accept; not @bob_xy nor @bob")
    assert mention(escaped, "bob_x", 7) == escape("<@7>: /accept; not @bob_xy nor @bob")
    assert only_user(7).to_dict() == {"parse": [], "users": [7]}


def test_long_text_is_split_at_lines():
    text = "\n".join(f"line {i} " + "x" * 50 for i in range(100))
    chunks = split_text(text)
    assert len(chunks) > 1 and all(len(c) <= 2000 for c in chunks)
    assert "\n".join(chunks) == text
    assert all(len(c) <= 2000 for c in split_text("y" * 4500))
    assert "".join(split_text("y" * 4500)) == "y" * 4500


async def test_sync_uploads_the_commands_and_never_logs_the_token(tmp_path: Path, monkeypatch, caplog,
                                                                   discord_errors):
    fake = FakeDiscord()
    install(fake, monkeypatch)
    storage = Storage(tmp_path / "sync.db")
    try:
        with caplog.at_level(logging.DEBUG):
            synced = await sync_tree(TOKEN, GameService(storage))
    finally:
        storage.close()
    put = fake.requests(method="PUT")
    assert len(put) == 1
    names = {c["name"] for c in put[0].payload}
    assert names == {spec.name for spec in REGISTRY}
    assert names >= {"help", "rules", "new", "play", "accept", "decline", "cancel", "move", "board", "resign",
                     "draw", "analysis", "games", "pdn", "lang", "settings", "daily", "puzzle", "hint"}
    assert len(synced) == len(names)
    new = next(c for c in put[0].payload if c["name"] == "new")
    assert [(o["name"], o["type"]) for o in new["options"]] == [
        ("variant", 3), ("color", 3), ("opponent", 6), ("move_time", 3)]
    play = next(c for c in put[0].payload if c["name"] == "play")
    level = next(o for o in play["options"] if o["name"] == "level")
    assert (level["type"], level["min_value"], level["max_value"]) == (4, 1, 5)
    # Descriptions in Spanish and Italian from the same catalogs as /help.
    assert new["description_localizations"]["es-ES"].startswith("Reta")
    assert "it" in new["options"][0]["description_localizations"]
    assert all(TOKEN not in r.getMessage() and TOKEN not in str(r.args) for r in caplog.records)


async def test_a_challenger_named_like_markup_is_shown_as_named(h: Harness):
    h.nicks["ana"] = "**@everyone** [win](https://x.example) ||"
    token = await h.slash("new", "ana", {"opponent": Member("bob")})
    shown = h.only_answer(token).rendered
    assert "**@everyone** [win](https://x.example) ||" in shown.visible.replace("\u200b", "")
    assert not (shown.links or shown.special or shown.hidden)
    assert set(shown.users) == {uid("bob")}                  # the mention the adapter resolved still works


async def test_commands_live_globally_or_in_one_server_never_both(tmp_path: Path, monkeypatch, discord_errors):
    # Issue 15, item 13: a one-server sync next to a global one showed every command twice.
    fake = FakeDiscord()
    install(fake, monkeypatch)
    storage = Storage(tmp_path / "sync.db")
    names = sorted(spec.name for spec in REGISTRY)
    try:
        await sync_tree(TOKEN, GameService(storage), guild_id=GUILD_ID)       # trying it out in one server
        assert fake.command_menu() == names
        await sync_tree(TOKEN, GameService(storage))                         # then for every server
        assert fake.command_menu() == names and fake.commands[GUILD_ID] == []
        puts = len(fake.requests(method="PUT"))
        with pytest.raises(GlobalCommandsExist):
            await sync_tree(TOKEN, GameService(storage), guild_id=GUILD_ID)
        assert fake.command_menu() == names and len(fake.requests(method="PUT")) == puts
    finally:
        storage.close()
