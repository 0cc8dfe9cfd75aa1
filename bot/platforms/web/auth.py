"""Telegram Mini App ``initData``: who opened the page from Telegram (``WebConfig.telegram_token``,
the bot token, turns it on for the web server; the Telegram adapter gives it its own).

The check (Telegram's "Validating data received via the Mini App"): every received field except
``hash``, sorted by key, written ``key=value`` (values as received, URL-decoded once) and joined with
newlines, is the data-check string; ``secret = HMAC_SHA256(key=b"WebAppData", msg=bot_token)`` and
``hash`` must be ``hex(HMAC_SHA256(key=secret, msg=data_check_string))``.  ``auth_date`` must be at
most an hour old (``INIT_DATA_MAX_AGE``): Telegram signs it anew each time the Mini App opens, so
only a copy kept from an earlier opening is older.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from urllib.parse import parse_qsl

# How old initData may be (Telegram's own advice: check it is recent).  An hour: each opening of
# the Mini App brings initData signed then, and the seat it is exchanged for lasts a few hours
# (bot.service.web.SESSION_SECONDS), so a day-old copy never gives a week-long seat.
INIT_DATA_MAX_AGE = 3600
# A clock a little ahead of ours is not a forgery.
CLOCK_SKEW = 300


@dataclass(frozen=True)
class TelegramUser:
    """The Telegram user initData vouches for."""

    id: int
    name: str
    username: str | None
    auth_date: int
    language: str | None = None       # the user's Telegram language (``language_code``)
    start_param: str | None = None    # what the direct link's ``startapp`` carried (``g<game>``)


@dataclass(frozen=True)
class InitDataRefused:
    """initData that vouches for nobody: ``reason`` is invalid (forged, damaged, another bot's) or
    expired (older than ``INIT_DATA_MAX_AGE``)."""

    reason: str


def data_check_string(fields: dict[str, str]) -> str:
    """The string Telegram signs: the fields but ``hash``, sorted by key, ``key=value`` per line."""
    return "\n".join(f"{key}={value}" for key, value in sorted(fields.items()) if key != "hash")


def verify_init_data(init_data: str, bot_token: str, now: float | None = None,
                     max_age: float = INIT_DATA_MAX_AGE) -> TelegramUser | InitDataRefused:
    """The user of a Mini App's ``initData`` query string, when Telegram signed it for ``bot_token``
    at most ``max_age`` seconds ago; else why not.  Never raises for any input."""
    if not bot_token or not init_data or len(init_data) > 8192:
        return InitDataRefused("invalid")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return InitDataRefused("invalid")
    fields = dict(pairs)
    if len(fields) != len(pairs) or "hash" not in fields:
        return InitDataRefused("invalid")          # a repeated key: which value was signed?
    secret = hmac.new(b"WebAppData", bot_token.encode("utf-8"), hashlib.sha256).digest()
    expected = hmac.new(secret, data_check_string(fields).encode("utf-8"), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode("ascii"), fields["hash"].encode("utf-8", "replace")):
        return InitDataRefused("invalid")
    try:
        auth_date = int(fields.get("auth_date", ""))
        user = json.loads(fields.get("user", ""))
        user_id = user["id"]
    except (ValueError, TypeError, KeyError):
        return InitDataRefused("invalid")
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        return InitDataRefused("invalid")
    now = time.time() if now is None else now
    if now - auth_date > max_age or auth_date - now > CLOCK_SKEW:
        return InitDataRefused("expired")
    name = " ".join(str(user.get(part) or "") for part in ("first_name", "last_name")).strip()
    username = user.get("username")
    language = user.get("language_code")
    return TelegramUser(user_id, name or str(username or user_id), username if isinstance(username, str) else None,
                        auth_date, language if isinstance(language, str) else None, fields.get("start_param"))
