"""Inline mode through the real python-telegram-bot Application; only HTTP is the strict fake.

A user types ``@DraughtsBot`` in some chat and gets a challenge per variant; the message they send
(Telegram's inline message, which the bot only knows by its inline_message_id) carries a signed
Accept button; another user's press starts a game between people in the message's own chat
(``inline:<id>``), and from then on everything the service says there edits that message."""

from __future__ import annotations

import time

from telegram_fake_api import GROUP, USERS

from bot.i18n import t
from bot.rules import Color
from bot.service import ChatEvent, Reply

PLATFORM = "telegram"


def accept_data(message) -> str:
    (button,) = [b for row in message.markup["inline_keyboard"] for b in row]
    return button["callback_data"]


def url_buttons(message) -> list[str]:
    rows = (message.markup or {}).get("inline_keyboard", [])
    return [b["url"] for row in rows for b in row if "url" in b]


def alerts(tg) -> list[str | None]:
    return [c.params.get("text") for c in tg.http.named("answerCallbackQuery")]


async def offer(tg, user: str = "ana", query: str = "", variant: str = "italian") -> str:
    """``user`` sends the challenge of ``variant`` from their inline results; its inline_message_id."""
    query_id = await tg.inline(user, query)
    (chosen,) = [r for r in tg.http.inline_results(query_id) if r["id"].startswith(variant)]
    return tg.http.choose_inline_result(query_id, chosen["id"])


def typed(user: str, chat: str, text: str) -> ChatEvent:
    """What a player's move or command in a game's chat is to the service (the web board will
    send the same use case's requests)."""
    info = USERS[user]
    return ChatEvent(PLATFORM, chat, str(info["id"]), info["first_name"], username=info["username"],
                     language=info["language_code"], text=text)


async def started(tg, env: dict[str, str] | None = None) -> tuple[str, str, int]:
    """Ana (Spanish, white) offers Italian draughts inline and Bob accepts: the inline message,
    its chat and the game."""
    tg.adapter.env = env if env is not None else {"TELEGRAM_WEBAPP_NAME": "board"}
    inline_id = await offer(tg, "ana", "blancas")
    await tg.press_inline("bob", inline_id, accept_data(tg.http.inline_messages[inline_id]))
    chat = f"inline:{inline_id}"
    (game,) = tg.service.find_games(PLATFORM, chat)
    return inline_id, chat, game.id


async def test_an_inline_query_offers_a_challenge_per_variant_in_the_users_language(tg):
    for user, lang in (("ana", "es"), ("bob", "en"), ("eve", "it")):
        query_id = await tg.inline(user)
        answer = tg.http.inline_queries[query_id]["answers"][-1]
        results = answer["results"]
        assert answer["is_personal"] is True and answer["cache_time"] == 0
        titles = [r["title"] for r in results]
        assert titles == [t(lang, "inline.title", variant=t(lang, f"variant.{v}"))
                          for v in ("spanish", "italian", "triestina")]
        for result in results:
            assert result["type"] == "article" and result["description"]
            assert USERS[user]["first_name"] in result["input_message_content"]["message_text"]
            (row,) = result["reply_markup"]["inline_keyboard"]
            assert [b["text"] for b in row] == [t(lang, "button.accept")]
            assert row[0]["callback_data"].startswith("ix:")
    # Typed letter by letter: a half word is no colour yet; a whole one is the challenger's.
    query_id = await tg.inline("bob", "black")
    assert {r["id"] for r in tg.http.inline_results(query_id)} == {"spanish-black", "italian-black", "triestina-black"}
    query_id = await tg.inline("bob", "triestina whi")
    assert [r["id"] for r in tg.http.inline_results(query_id)] == ["triestina-random"]


async def test_accept_starts_a_game_between_people_and_edits_the_inline_message(tg):
    inline_id, chat, game_id = await started(tg)
    row = tg.storage.game(game_id)
    assert (row.white_id, row.white_name, row.black_id, row.black_name) == ("1", "Ana", "2", "Bob")
    assert (row.platform, row.chat_id, row.variant, row.bot_level) == (PLATFORM, chat, "italian", None)
    message = tg.http.inline_messages[inline_id]
    # In the offer's language (Ana's Spanish), in words, with the Open board button only.
    assert f"#{game_id}" in message.text and "Ana" in message.text and "Bob" in message.text
    assert t("es", "game.started", id=game_id, variant=t("es", "variant.italian"), white="Ana",
             black="Bob") in message.text
    assert url_buttons(message) == [f"https://t.me/DraughtsBot/board?startapp=g{game_id}s{tg.service.web.watch_mac(game_id)}"]
    edit = tg.http.named("editMessageText")[-1]
    assert edit.status == 200 and "chat_id" not in edit.wire and edit.wire["inline_message_id"] == inline_id
    assert alerts(tg)[-1] is None                   # the presser sees the game, no alert
    # Accepted once: a second press of the same (genuine) button, replayed, starts nothing.
    await tg.press_inline("eve", inline_id, accept_data_of_offer(tg, inline_id))
    assert alerts(tg)[-1] == t("it", "inline.taken", id=game_id)
    assert len(tg.service.find_games(PLATFORM, chat)) == 1 and tg.storage.game(game_id).black_id == "2"


def accept_data_of_offer(tg, inline_id: str) -> str:
    """The Accept button's data as the offer sent it (the message has lost the button since)."""
    query = next(q for q in tg.http.inline_queries.values() if q["answers"])
    return next(r["reply_markup"]["inline_keyboard"][0][0]["callback_data"] for r in query["answers"][-1]["results"]
                if r["id"].startswith("italian"))


async def test_the_challenger_cannot_accept_her_own_offer(tg):
    inline_id = await offer(tg, "ana")
    message = tg.http.inline_messages[inline_id]
    text = message.text
    await tg.press_inline("ana", inline_id, accept_data(message))
    assert alerts(tg) == [t("es", "inline.own")]
    assert tg.service.find_games(PLATFORM, f"inline:{inline_id}") == [] and message.text == text
    assert tg.http.named("editMessageText") == []


async def test_a_forged_accept_is_refused_and_changes_nothing(tg):
    inline_id = await offer(tg, "ana", "white")
    genuine = accept_data(tg.http.inline_messages[inline_id])
    assert len(genuine.encode()) <= 64
    kind, variant, terms, challenger, issued, nonce, signature = genuine.split(":")
    assert (kind, variant, terms[0], challenger) == ("ix", "italian", "w", "1")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    forged = [
        ":".join((kind, "spanish", terms, challenger, issued, nonce, signature)),      # another variant
        ":".join((kind, variant, "b" + terms[1:], challenger, issued, nonce, signature)),   # another colour
        ":".join((kind, variant, terms[0] + "it", challenger, issued, nonce, signature)),   # another language
        ":".join((kind, variant, terms, "3", issued, nonce, signature)),              # Eve as the challenger
        ":".join((kind, variant, terms, challenger, "zzzzz", nonce, signature)),      # issued later: never lapses
        ":".join((kind, variant, terms, challenger, issued, "zz", signature)),        # another offer
        ":".join((kind, variant, terms, challenger, issued, nonce, flipped)),         # a guessed signature
        ":".join((kind, variant, terms, challenger, issued, nonce, signature + "x")),
        ":".join((kind, "checkers", terms, challenger, issued, nonce, signature)),    # no such variant
        "ix:italian",
        "acc:1",                                      # an ordinary challenge's button, from an inline message
    ]
    before = tg.storage.dump()
    for data in forged:
        await tg.press_inline("bob", inline_id, data)
    assert alerts(tg) == [t("en", "inline.invalid")] * len(forged)
    assert tg.storage.dump() == before
    assert tg.http.named("editMessageText") == []
    # The genuine button still works.
    await tg.press_inline("bob", inline_id, genuine)
    assert len(tg.service.find_games(PLATFORM, f"inline:{inline_id}")) == 1


async def test_an_offer_nobody_accepts_within_a_day_lapses(tg):
    inline_id = await offer(tg, "ana")
    tg.service.clock = lambda: time.time() + 25 * 3600
    await tg.press_inline("bob", inline_id, accept_data(tg.http.inline_messages[inline_id]))
    assert alerts(tg) == [t("en", "inline.expired")]
    assert tg.service.find_games(PLATFORM, f"inline:{inline_id}") == []


async def test_a_move_edits_the_inline_message_with_the_move_and_whose_turn(tg):
    inline_id, chat, game_id = await started(tg)
    # The move through the service's move use case, as a typed move in the game's chat makes it;
    # what it answers goes to that chat through the outbox (where the web board's move
    # notification will arrive too).
    replies = tg.service.handle(typed("ana", chat, "/m 22-18"))
    assert tg.storage.game(game_id).ply == 1
    board = replies[0]
    assert board.image is not None            # the board picture an inline message cannot take
    tg.service.say(PLATFORM, chat, board)
    await tg.adapter.delivery_round()
    message = tg.http.inline_messages[inline_id]
    assert "22-18" in message.text and "Bob" in message.text
    assert message.text.startswith(board.text.strip())
    assert url_buttons(message) == [f"https://t.me/DraughtsBot/board?startapp=g{game_id}s{tg.service.web.watch_mac(game_id)}"]
    # Words only: no picture was uploaded anywhere, and nothing was posted in any chat.
    assert [c.method for c in tg.http.calls if c.method.startswith(("send", "editMessageMedia"))] == []
    assert [item.status for item in tg.storage.find_outbox() if item.chat_id == chat] == ["sent"]


async def test_a_time_out_ends_the_game_in_the_inline_message(tg):
    inline_id, chat, game_id = await started(tg)
    tg.service.clock = lambda: time.time() + 2 * 24 * 3600
    await tg.adapter.delivery_round()
    assert tg.storage.game(game_id).status == "finished"
    message = tg.http.inline_messages[inline_id]
    assert t("es", "game.over", id=game_id) in message.text
    assert url_buttons(message) == [f"https://t.me/DraughtsBot/board?startapp=g{game_id}s{tg.service.web.watch_mac(game_id)}"]


async def test_a_rated_result_counts_like_any_game_between_people(tg):
    inline_id, chat, game_id = await started(tg)
    tg.service.handle(typed("ana", chat, "/m 22-18"))
    tg.service.handle(typed("bob", chat, "/m 11-15"))
    tg.service.handle(typed("bob", chat, "/resign"))
    replies = tg.service.handle(typed("bob", chat, "/resign"))          # confirmed
    row = tg.storage.game(game_id)
    assert (row.status, row.winner) == ("finished", Color.WHITE)
    for user_id, gained in (("1", True), ("2", False)):
        rating = tg.storage.rating(PLATFORM, user_id, "italian")
        assert rating is not None and rating.games == 1
        assert (rating.rating > 1500) is gained
    tg.service.say(PLATFORM, chat, replies[0])
    await tg.adapter.delivery_round()
    assert t("es", "game.over", id=game_id) in tg.http.inline_messages[inline_id].text


async def test_the_board_link_without_a_mini_app_and_without_any_web_board(tg):
    inline_id, _, game_id = await started(tg, {"WEB_BASE_URL": "https://damas.example.org/"})
    assert url_buttons(tg.http.inline_messages[inline_id]) == [f"https://damas.example.org/g/{game_id}?t={tg.service.web.watch_token(game_id)}"]
    # Ana's second offer of the same terms in the same minute is an offer of its own: it starts a game.
    inline_id, _, game_id = await started(tg, {})
    message = tg.http.inline_messages[inline_id]
    assert url_buttons(message) == [] and message.markup is None
    assert message.text.endswith(t("es", "inline.no_board"))


async def test_not_modified_is_done_and_a_vanished_inline_message_is_dropped_at_once(tg):
    inline_id, chat, game_id = await started(tg)
    shown = tg.http.inline_messages[inline_id].text
    tg.service.say(PLATFORM, chat, Reply(shown.split("\n\n")[0], game_id=game_id))     # what it already says
    await tg.adapter.delivery_round()
    assert tg.http.named("editMessageText")[-1].error.startswith("Bad Request: message is not modified")
    tg.expect_refusals(1)
    tg.http.forget_inline(inline_id)                   # its sender deleted it
    tg.service.say(PLATFORM, chat, Reply("later", game_id=game_id))
    await tg.adapter.delivery_round()
    await tg.adapter.delivery_round()
    tg.expect_refusals(1)
    assert tg.http.named("editMessageText")[-1].error == "Bad Request: MESSAGE_ID_INVALID"
    assert [item.status for item in tg.storage.find_outbox() if item.chat_id == chat] == ["sent", "dropped"]
    assert len([c for c in tg.http.named("editMessageText") if c.error == "Bad Request: MESSAGE_ID_INVALID"]) == 1


async def test_an_offer_starts_one_game_wherever_its_button_is_replayed(tg):
    inline_id, chat, game_id = await started(tg)
    genuine = accept_data_of_offer(tg, inline_id)
    # Eve sends an offer of her own and presses, on it, the data she read on Ana's message.
    eves = await offer(tg, "eve")
    await tg.press_inline("eve", eves, genuine)
    assert alerts(tg)[-1] == t("it", "inline.taken", id=game_id)
    assert tg.service.find_games(PLATFORM, f"inline:{eves}") == []
    # Nor does it start a game from an ordinary message of the bot in a group.
    await tg.say("bob", "/help")
    await tg.press("eve", genuine)
    assert alerts(tg)[-1] == t("it", "button.invalid")
    assert [g.id for g in tg.service.find_games(PLATFORM)] == [game_id]


async def test_flood_control_on_an_inline_message_holds_back_only_that_message(tg):
    inline_id, chat, game_id = await started(tg)
    now = time.time()
    tg.service.clock = lambda: now
    tg.http.fail("editMessageText", 429, "Too Many Requests: retry after 3600", retry_after=3600)
    tg.service.say(PLATFORM, chat, Reply("later", game_id=game_id))
    await tg.adapter.delivery_round()
    [queued] = tg.storage.find_outbox(status="pending")
    assert queued.chat_id == chat and queued.next_attempt_at - now > 3000
    assert tg.limiter.parked_until(chat) > 0 and tg.limiter.parked_until(GROUP["id"]) == 0
    await tg.say("bob", "/help")                           # every chat goes on meanwhile
    assert tg.http.named("sendMessage", ok_only=True)


async def test_a_reminder_is_an_edit_that_keeps_the_open_board_button(tg):
    inline_id, chat, game_id = await started(tg)
    tg.service.clock = lambda: time.time() + 0.95 * 24 * 3600        # a tenth of the move time is left
    await tg.adapter.delivery_round()
    message = tg.http.inline_messages[inline_id]
    assert "Ana" in message.text and f"#{game_id}" in message.text and "Empieza" not in message.text
    assert url_buttons(message) == [f"https://t.me/DraughtsBot/board?startapp=g{game_id}s{tg.service.web.watch_mac(game_id)}"]
    assert [c.method for c in tg.http.calls if c.method.startswith("send")] == []
