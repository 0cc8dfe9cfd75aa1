"""The Telegram initData check, against values signed here from Telegram's published steps
(not with the checker's own code): secret = HMAC_SHA256(key="WebAppData", msg=bot_token), hash =
hex(HMAC_SHA256(key=secret, msg=data_check_string))."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import quote, urlencode

from bot.platforms.web import InitDataRefused, TelegramUser, verify_init_data

TOKEN = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"
NOW = 1_700_000_000
USER = {"id": 279058397, "first_name": "Vladislav", "last_name": "Kibenko", "username": "vdkfrost",
        "language_code": "ru", "is_premium": True}


def signed(token: str = TOKEN, auth_date: int = NOW - 60, user: dict | None = None, extra: dict | None = None) -> str:
    fields = {"query_id": "AAHdF6IQAAAAAN0XohDhrOrc", "user": json.dumps(user or USER, separators=(",", ":")),
              "auth_date": str(auth_date), **(extra or {})}
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields, quote_via=quote)


def test_a_known_good_init_data_gives_its_user():
    user = verify_init_data(signed(), TOKEN, now=NOW)
    assert user == TelegramUser(279058397, "Vladislav Kibenko", "vdkfrost", NOW - 60, "ru")


def test_values_are_checked_as_received_once_decoded():
    # A value with characters the query string encodes (space, &, =, accents, emoji).
    odd = dict(USER, first_name="Ana & Bob = ñ 🎉")
    user = verify_init_data(signed(user=odd, extra={"start_param": "a b+c"}), TOKEN, now=NOW)
    assert isinstance(user, TelegramUser) and user.name == "Ana & Bob = ñ 🎉 Kibenko"


def test_a_forged_field_is_refused():
    data = signed().replace("vdkfrost", "someoneelse")
    assert verify_init_data(data, TOKEN, now=NOW) == InitDataRefused("invalid")
    changed_date = signed().replace(f"auth_date={NOW - 60}", f"auth_date={NOW - 30}")
    assert verify_init_data(changed_date, TOKEN, now=NOW) == InitDataRefused("invalid")


def test_another_bots_token_is_refused():
    assert verify_init_data(signed(token="999:OTHER"), TOKEN, now=NOW) == InitDataRefused("invalid")
    # The two HMAC keys swapped (the bot token as key, "WebAppData" as message) is not Telegram's.
    fields = {"user": json.dumps(USER), "auth_date": str(NOW)}
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hmac.new(TOKEN.encode(), b"WebAppData", hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    assert verify_init_data(urlencode(fields), TOKEN, now=NOW) == InitDataRefused("invalid")


def test_old_init_data_is_refused_as_expired():
    assert verify_init_data(signed(auth_date=NOW - 86401), TOKEN, now=NOW) == InitDataRefused("expired")
    # An hour at most (issue 30: a 23-hour-old copy was exchanged for a week-long seat).
    assert verify_init_data(signed(auth_date=NOW - 23 * 3600), TOKEN, now=NOW) == InitDataRefused("expired")
    assert verify_init_data(signed(auth_date=NOW - 3601), TOKEN, now=NOW) == InitDataRefused("expired")
    assert isinstance(verify_init_data(signed(auth_date=NOW - 3500), TOKEN, now=NOW), TelegramUser)


def test_junk_is_refused_without_raising():
    for junk in ("", "hash=", "a=1&a=2&hash=00", "user=%7B&auth_date=1&hash=ab", "&&&", "hash=zz&user=1"):
        assert verify_init_data(junk, TOKEN, now=NOW) == InitDataRefused("invalid")
    assert verify_init_data(signed(), "", now=NOW) == InitDataRefused("invalid")
