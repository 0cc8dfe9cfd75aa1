"""Secrets blanked out of any text the bot writes down (log lines, errors stored in the database).

Libraries quote tokens in ways a plain ``str.replace`` misses: python-telegram-bot capitalises an
API error's message (lower-casing the token in a quoted URL), and HTTP libraries quote a URL's
path ("123456%3AABC").  So every secret is matched case-insensitively, as is and URL-encoded.

The secrets are registered once at start-up (``register``); storage redacts what it stores with
``redact`` without knowing where the secrets came from."""

from __future__ import annotations

import re
import threading
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"
# A secret shorter than this is not one (an empty or one-letter value would blank out everything).
MIN_SECRET = 6

_lock = threading.Lock()
_registered: list[str] = []
_pattern: re.Pattern[str] | None = None


def pattern_for(secrets: list[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern matching every form of every secret (None without secrets)."""
    forms: set[str] = set()
    for secret in secrets:
        if not secret or len(secret) < MIN_SECRET:
            continue
        forms.update({secret, quote(secret, safe=""), quote(secret), quote_plus(secret)})
        # A token "<id>:<key>": the key is the secret part, whatever was done to the id or the colon.
        _, colon, key = secret.rpartition(":")
        if colon and len(key) >= MIN_SECRET * 2:
            forms.update({key, quote(key, safe=""), quote_plus(key)})
    if not forms:
        return None
    # Longest first, so a whole token is replaced before its key alone would be.
    return re.compile("|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)), re.IGNORECASE)


def redact_with(pattern: re.Pattern[str] | None, text: str) -> str:
    return pattern.sub(REDACTED, text) if pattern is not None and text else text


def register(secrets: list[str]) -> None:
    """Secrets that ``redact`` blanks out from now on (added to those registered before)."""
    global _pattern
    with _lock:
        _registered.extend(s for s in secrets if s and s not in _registered)
        _pattern = pattern_for(_registered)


def redact(text: str) -> str:
    """``text`` with every registered secret blanked out (in any case, URL-encoded or not)."""
    return redact_with(_pattern, text)
