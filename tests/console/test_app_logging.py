"""The token-redaction filter of bot/app.py: a library's badly formatted log call must not turn
into an exception in that library's code, and no secret may slip through the fallback."""

from __future__ import annotations

import io
import logging

import pytest

from bot.app import RedactSecrets

SECRET = "123456:ABCdefSECRETtoken"


@pytest.fixture
def logged():
    """A real logger with a stream handler carrying the filter; yields (logger, output)."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RedactSecrets([SECRET]))
    logger = logging.getLogger("library.under.test")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    try:
        yield logger, out
    finally:
        logger.removeHandler(handler)
        logger.propagate = True


def test_a_badly_formatted_call_does_not_raise_and_is_redacted(logged):
    logger, out = logged
    logger.warning("%s %s", "one")                       # one argument short
    logger.warning("url %s then %d", f"https://api/bot{SECRET}/getMe")    # short, and the secret
    logger.warning("%d items", "not a number")
    text = out.getvalue()
    assert SECRET not in text
    assert "%s %s" in text and "'one'" in text
    assert "https://api/bot[redacted]/getMe" in text
    assert "not a number" in text


def test_unprintable_arguments_and_messages_do_not_raise(logged):
    logger, out = logged

    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("no str")

        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    logger.warning("%s and %s", Unprintable())
    logger.warning(Unprintable())
    logger.error("failed %s", SECRET, exc_info=(ValueError, ValueError(f"token {SECRET}"), None))
    text = out.getvalue()
    assert "<unprintable Unprintable>" in text
    assert "could not be redacted" in text
    assert SECRET not in text and "ValueError: token [redacted]" in text


def test_well_formed_calls_are_redacted_as_before(logged):
    logger, out = logged
    logger.info("token is %s", SECRET)
    logger.info({"token": SECRET})
    assert out.getvalue().count("[redacted]") == 2 and SECRET not in out.getvalue()


# -- issue 21, item 2: the token in any case, URL-encoded, and in the database ---------------------------

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


def _ptb_error() -> Exception:
    """What python-telegram-bot raises when the API's error quotes the request URL: "Bad Request: "
    stripped and the rest capitalised, i.e. the token lower-cased."""
    from telegram.error import BadRequest

    return BadRequest(f"Bad Request: gateway refused https://api.telegram.org/bot{TOKEN}/sendMessage "
                      f"(also as /bot{TOKEN.replace(':', '%3A')}/getMe)")


def test_a_ptb_error_quoting_the_token_in_lower_case_or_url_encoded_is_redacted():
    err = _ptb_error()
    assert TOKEN.lower() in str(err) and TOKEN not in str(err)       # what PTB really makes of it
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RedactSecrets([TOKEN]))
    # Named like PTB's own logger, outside the names the suite watches for errors.
    logger = logging.getLogger("library.telegram.ext.Updater")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.error("Network error: %s", err)
        logger.error("handler failed: %r", err, exc_info=err)
        logger.warning("retrying %s", f"https://api.telegram.org/bot{TOKEN.replace(':', '%3a')}/getUpdates")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    text = out.getvalue().lower()
    key = TOKEN.split(":")[1].lower()
    assert text.count("[redacted]") >= 5
    assert key not in text and key not in text.replace("%3a", ":")


def test_the_token_never_reaches_the_database_in_any_case(tmp_path, monkeypatch):
    """The outbox keeps the error of a failed delivery: a token in it is blanked out too."""
    from bot import redact
    from bot.app import redact_logs
    from bot.service import GameService, Reply
    from bot.storage import Storage

    monkeypatch.setattr(redact, "_registered", [])
    monkeypatch.setattr(redact, "_pattern", None)
    root = logging.getLogger()
    before = list(root.handlers)
    out = io.StringIO()
    root.addHandler(logging.StreamHandler(out))
    storage = Storage(tmp_path / "t.db")
    try:
        redact_logs([TOKEN])
        service = GameService(storage, clock=lambda: 1_700_000_000.0)
        first = service.queue_reply("telegram", "42", Reply("hello"), str(_ptb_error()))
        second = service.queue_reply("telegram", "43", Reply("hello"), repr(_ptb_error()))
        service.message_failed(first, str(_ptb_error()))
        service.message_failed(second, str(_ptb_error()), permanent=True)
        errors = [row.error for row in storage.find_outbox()]
        assert len(errors) == 2 and all("[redacted]" in e for e in errors)
    finally:
        storage.close()
        for handler in root.handlers[:]:
            if handler not in before:
                root.removeHandler(handler)
                for f in handler.filters[:]:
                    handler.removeFilter(f)
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir()).lower()
    key = TOKEN.split(":")[1].lower().encode()
    assert stored.count(key) == 0 and stored.count(TOKEN.lower().encode()) == 0
    assert key.decode() not in out.getvalue().lower()
