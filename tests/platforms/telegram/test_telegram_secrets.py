"""Issue 21, item 2: a gateway error quoting the request URL (token included) through the real
adapter: python-telegram-bot lower-cases the token when it capitalises the message, the reply goes
to the outbox with the error, and warnings are logged.  The token appears nowhere, in any case."""

from __future__ import annotations

import io
import logging
from urllib.parse import quote

from telegram_fake_api import GROUP

from bot import redact
from bot.app import RedactSecrets

TOKEN = "123:TEST"        # what the harness builds the application with


async def test_a_gateway_error_quoting_the_url_leaks_the_token_nowhere(tg, monkeypatch, tmp_path):
    monkeypatch.setattr(redact, "_registered", [])
    monkeypatch.setattr(redact, "_pattern", None)
    redact.register([TOKEN])
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RedactSecrets([TOKEN]))
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.DEBUG)
    url = f"https://api.telegram.org/bot{TOKEN}/sendMessage"
    try:
        tg.http.fail("sendMessage", 502, f"Error: upstream {url} (also /bot{quote(TOKEN, safe='')}/) timed out",
                     times=4)
        await tg.say("ana", "/help")
        queued = tg.storage.find_outbox()
        assert len(queued) == 1 and queued[0].status == "pending" and queued[0].error
        assert "[redacted]" in queued[0].error
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    logged = out.getvalue().lower()
    assert "upstream" in logged                          # the failure was logged ...
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file()).lower()
    for form in (TOKEN.lower(), quote(TOKEN, safe="").lower()):
        assert logged.count(form) == 0                   # ... without the token
        assert stored.count(form.encode()) == 0
    assert GROUP["id"] == int(queued[0].chat_id)
