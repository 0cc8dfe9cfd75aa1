"""Credentials the web board refuses, in a real browser (the system's Chromium): an expired seat link,
a forged one and none at all show only the refusal (nothing of the game, no move can be made); Telegram
initData forged is refused, initData signed here from Telegram's published steps acts as that
player.  The page itself does not send initData yet (docs/web.md: the Mini App is not wired), so
initData is posted from the browser context's own HTTP client."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from browser_harness import PLATFORM, TOKEN, TelegramBoard, require_browser
from telegram_fake_api import USERS

from bot.i18n import t
from bot.rules import Position

require_browser()          # skip (or fail, in CI) before anything else


def init_data(user: dict, token: str = TOKEN, auth_date: int | None = None) -> str:
    """Mini App initData as Telegram signs it: secret = HMAC_SHA256(key="WebAppData", msg=bot_token),
    hash = hex(HMAC_SHA256(key=secret, msg=data_check_string)), the data-check string being the
    other fields sorted, key=value per line."""
    fields = {"query_id": "AAHdF6IQAAAAAN0XohDhrOrc", "auth_date": str(auth_date or int(time.time()) - 5),
              "user": json.dumps({k: user[k] for k in ("id", "first_name", "username", "language_code")},
                                 separators=(",", ":"))}
    check = "\n".join(f"{key}={fields[key]}" for key in sorted(fields))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields, quote_via=quote)


@pytest.mark.parametrize("kind", ["expired", "invalid", "none"])
def test_an_expired_or_forged_seat_link_or_none_shows_only_the_refusal(
        browser: Any, board: TelegramBoard, kind: str,
) -> None:
    # Issue 30: a game's number alone (or a refused link) shows nothing of the game, only why.
    game = board.new_game("triestina")
    web = board.service.web
    if kind == "expired":
        # Signed rightly, a week and a minute ago: it ran out a minute ago.
        token = web.seat_token(game, PLATFORM, board.user_id("ana"), now=time.time() - 7 * 24 * 3600 - 60)
    elif kind == "invalid":
        good = web.seat_token(game, PLATFORM, board.user_id("ana"))
        payload, _, mac = good.partition(".")
        # Bob's seat claimed with Ana's signature.
        token = web.seat_token(game, PLATFORM, board.user_id("bob")).partition(".")[0] + "." + mac
        assert token != good and payload != token.partition(".")[0]
    else:
        token = ""
    before = board.storage.dump()
    context = browser.new_context()
    page = context.new_page()
    answer = page.goto(f"{board.url}/g/{game}?t={token}&lang=es" if token else f"{board.url}/g/{game}?lang=es")
    key, status = ("web.need_link", 403) if kind == "none" else (f"web.link_{kind}", 401)
    assert answer is not None and answer.status == status
    assert page.inner_text("body").strip() == t("es", key)
    assert page.locator("main#app").count() == 0 and page.locator("[data-square]").count() == 0
    move = Position.start("triestina").legal_moves()[0]
    # The refused token sent by hand from that page is refused by the server too.
    answer = page.evaluate(
        """([game, token, path]) => fetch(`/api/g/${game}/move?lang=es`, {method: "POST",
             headers: {"Content-Type": "application/json", "Authorization": "Bearer " + token},
             body: JSON.stringify({path: path, ply: 0})}).then(r => r.json().then(b => [r.status, b.error]))""",
        [game, token or "-", list(move.path)])
    assert answer == [401, t("es", "web.link_invalid" if kind == "none" else f"web.link_{kind}")]
    assert board.storage.dump() == before
    context.close()


def test_forged_init_data_is_refused_and_signed_init_data_plays_as_that_player(
        browser: Any, board: TelegramBoard,
) -> None:
    game = board.new_game("triestina")
    move = Position.start("triestina").legal_moves()[0]
    context = browser.new_context()
    api = f"{board.url}/api/g/{game}"
    before = board.storage.dump()
    forged = init_data(USERS["ana"]).replace("%22ana%22", "%22eve%22")      # the user changed, hash kept
    other_bot = init_data(USERS["ana"], token="999:OTHER")
    assert "%22eve%22" in forged
    stale = init_data(USERS["ana"], auth_date=int(time.time()) - 2 * 24 * 3600)
    for data, reason in ((forged, "invalid"), (other_bot, "invalid"), (stale, "expired")):
        response = context.request.post(f"{api}/move?lang=it", data={"path": list(move.path), "ply": 0},
                                        headers={"X-Telegram-Init-Data": data})
        assert response.status == 401 and response.json()["error"] == t("it", f"web.link_{reason}")
    assert board.storage.dump() == before
    # Signed for this bot: Ana's seat (White); Bob's is Black's, to whom it is not the turn.
    state = context.request.get(f"{api}/state", headers={"X-Telegram-Init-Data": init_data(USERS["ana"])})
    assert state.status == 200 and state.json()["state"]["you"] == "W"
    response = context.request.post(f"{api}/move", data={"path": list(move.path), "ply": 0},
                                    headers={"X-Telegram-Init-Data": init_data(USERS["ana"])})
    assert response.status == 200, response.text()
    assert [m.notation for m in board.storage.moves(game)] == [str(move)]
    # Someone else in Telegram, signed rightly: a spectator, who may not act.
    response = context.request.post(f"{api}/draw", headers={"X-Telegram-Init-Data": init_data(USERS["eve"])})
    assert response.status == 403
    context.close()
