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
