"""Telegram Mini App initData checked against data signed by Telegram itself (external vectors),
not only against our own signing, which would repeat any mistake of ours (a swapped key and
message, a field left out of the data-check string, values re-encoded).

The vectors were published by others, each with the bot token it was signed for:

- ``DOCS``: the example of the Telegram Mini Apps documentation (docs.telegram-mini-apps.com),
  also used by the sanvew/telegram-init-data library's README;
- ``CLIENT``: initData a real Telegram client sent to a bot (GomenAmonai/CargoSaas,
  test_telegram_validation.py); newer clients add a ``signature`` field (for third-party checks
  with Telegram's public key), which is part of the data-check string like every field but ``hash``.

The tokens are test data from those pages, not secrets of ours.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qsl, urlencode

import pytest

from bot.platforms.web.auth import InitDataRefused, TelegramUser, verify_init_data

DAY = 86_400

DOCS_TOKEN = "5768337691:AAH5YkoiEuPk8-FZa32hStHTqXiLPtAEhx8"
DOCS = ("query_id=AAHdF6IQAAAAAN0XohDhrOrc&user=%7B%22id%22%3A279058397%2C%22first_name%22%3A%22Vladislav%22%2C"
        "%22last_name%22%3A%22Kibenko%22%2C%22username%22%3A%22vdkfrost%22%2C%22language_code%22%3A%22ru%22%2C"
        "%22is_premium%22%3Atrue%7D&auth_date=1662771648"
        "&hash=c501b71e775f74ce10e377dea85a7ea24ecd640b223ea86dfe453e0eaed2e2b2")
DOCS_AT = 1662771648

CLIENT_TOKEN = "8591035047:AAH_0hYmc3PU9fG7sWg5OB8DrpYKCkT5-d0"
CLIENT = ("user=%7B%22id%22%3A6698369098%2C%22first_name%22%3A%22LL%22%2C%22last_name%22%3A%22%22%2C%22username"
          "%22%3A%22hikill8%22%2C%22language_code%22%3A%22ru%22%2C%22allows_write_to_pm%22%3Atrue%2C%22photo_url"
          "%22%3A%22https%3A%5C%2F%5C%2Ft.me%5C%2Fi%5C%2Fuserpic%5C%2F320%5C%2FWv2Pan8AblvcXnRiYGifRMtzn8SiynLRMmeKIy"
          "Wtl75-qbOEMAuzqnhDHrtjIIC1.svg%22%7D&chat_instance=-5471737045128434439&chat_type=sender"
          "&auth_date=1765127072&signature=Wn1Xo5OboCJ7X-KwCMsfhAp6okKjKMuoKKyYoYKskC9_F7h-5wIYoIlgA86kjFIZ3FKofmW"
          "XT0aTOmEl_fweDw&hash=20fe086cb18a6481d11f8fc5e16543e8e3bf28d3aaef970997e2bedbbd7277f5")
CLIENT_AT = 1765127072

VECTORS = [("docs", DOCS, DOCS_TOKEN, DOCS_AT, 279058397, "vdkfrost"),
           ("client", CLIENT, CLIENT_TOKEN, CLIENT_AT, 6698369098, "hikill8")]


@pytest.mark.parametrize(("init_data", "token", "at", "user_id", "username"),
                         [v[1:] for v in VECTORS], ids=[v[0] for v in VECTORS])
def test_initdata_signed_by_telegram_is_accepted(init_data, token, at, user_id, username):
    user = verify_init_data(init_data, token, now=at + 60)
    assert isinstance(user, TelegramUser)
    assert (user.id, user.username, user.auth_date, user.language) == (user_id, username, at, "ru")


@pytest.mark.parametrize(("init_data", "token", "at"), [v[1:4] for v in VECTORS], ids=[v[0] for v in VECTORS])
def test_the_same_data_is_refused_when_anything_is_off(init_data, token, at):
    # A day after it was signed: too old.
    assert isinstance(verify_init_data(init_data, token, now=at + DAY + 1), InitDataRefused)
    # Another bot's token.
    other = DOCS_TOKEN if token != DOCS_TOKEN else CLIENT_TOKEN
    assert isinstance(verify_init_data(init_data, other, now=at + 60), InitDataRefused)
    # One field changed (the user's id), the hash kept.
    fields = dict(parse_qsl(init_data, keep_blank_values=True))
    fields["user"] = fields["user"].replace('"id":', '"id":1', 1)
    assert isinstance(verify_init_data(urlencode(fields), token, now=at + 60), InitDataRefused)
    # A field left out (the check covers every received field but hash).
    fields = dict(parse_qsl(init_data, keep_blank_values=True))
    dropped = next(key for key in fields if key not in ("hash", "user"))
    del fields[dropped]
    assert isinstance(verify_init_data(urlencode(fields), token, now=at + 60), InitDataRefused)


@pytest.mark.parametrize(("init_data", "token", "at"), [v[1:4] for v in VECTORS], ids=[v[0] for v in VECTORS])
def test_a_hash_made_with_key_and_message_swapped_is_not_telegrams(init_data, token, at):
    """The mistake a round trip of our own signing cannot catch: the secret is
    HMAC_SHA256(key="WebAppData", msg=token), not HMAC_SHA256(key=token, msg="WebAppData").
    Telegram's own hash matches only the first; data signed the second way is refused."""
    fields = dict(parse_qsl(init_data, keep_blank_values=True))
    telegrams = fields.pop("hash")
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    right = hmac.new(hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest(), check.encode(),
                     hashlib.sha256).hexdigest()
    swapped = hmac.new(hmac.new(token.encode(), b"WebAppData", hashlib.sha256).digest(), check.encode(),
                       hashlib.sha256).hexdigest()
    assert right == telegrams and swapped != telegrams
    forged = urlencode({**fields, "hash": swapped})
    assert isinstance(verify_init_data(forged, token, now=at + 60), InitDataRefused)
