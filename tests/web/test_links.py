"""Seat links: HMAC-SHA256 over the game, the platform, the user and the expiry, keyed from the
database's secret; forged, expired and someone else's links give no seat."""

from __future__ import annotations

import base64
import json

from bot.service.web import LinkRefused, Seat, Watch


def test_a_seat_link_reads_back_as_its_seat(chat):
    game = chat.new_game()
    token = chat.service.web.seat_token(game, "test", "ana")
    seat = chat.service.web.read_token(token)
    assert isinstance(seat, Seat) and (seat.game_id, seat.platform, seat.user_id) == (game, "test", "ana")


def test_an_expired_link_is_refused_as_expired(chat):
    game = chat.new_game()
    token = chat.service.web.seat_token(game, "test", "ana", seconds=60)
    chat.now[0] += 61
    assert chat.service.web.read_token(token) == LinkRefused("expired")


def test_a_tampered_link_is_refused(chat):
    game = chat.new_game()
    token = chat.service.web.seat_token(game, "test", "ana")
    payload, mac = token.split(".")
    # The same signature on another user's payload.
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data[3] = "bob"
    forged = base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()
    assert chat.service.web.read_token(f"{forged}.{mac}") == LinkRefused("invalid")
    flipped = mac[:-2] + ("A" if mac[-2] != "A" else "B") + mac[-1]
    assert chat.service.web.read_token(f"{payload}.{flipped}") == LinkRefused("invalid")
    for junk in ("", ".", "abc", "a.b.c", "€.€", payload):
        assert chat.service.web.read_token(junk) == LinkRefused("invalid")


def test_a_link_of_another_database_is_refused(chat, tmp_path, now):
    from fresh_db import fresh_database
    from web_helpers import WebChat

    other = WebChat(fresh_database(tmp_path / "other.db"), now)
    try:
        game = other.new_game()
        token = other.service.web.seat_token(game, "test", "ana")
        assert chat.service.web.read_token(token) == LinkRefused("invalid")
    finally:
        other.service.close()
        other.storage.close()


def test_the_page_link_carries_a_seat_only_for_a_player(chat):
    game = chat.new_game()
    # Anyone else gets the signed spectator link (a game's number alone shows nothing).
    assert chat.service.web.link_path(game, "test", "eve") == f"/g/{game}?t={chat.service.web.watch_token(game)}"
    assert chat.service.web.link_path(game, "test", None) == f"/g/{game}?t={chat.service.web.watch_token(game)}"
    assert chat.service.web.read_token(chat.service.web.watch_token(game)) == Watch(game)
    path = chat.service.web.link_path(game, "test", "bob")
    assert path.startswith(f"/g/{game}?t=")
    seat = chat.service.web.read_token(path.split("?t=")[1])
    assert isinstance(seat, Seat) and seat.user_id == "bob"
