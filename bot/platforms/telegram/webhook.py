"""Webhook mode's settings, read from the environment (docs/deployment.md).

``TELEGRAM_WEBHOOK_URL`` switches the bot from polling to python-telegram-bot's own webhook
server.  Several such processes may serve one URL behind a load balancer, on one database, so
everything here is the same in every process given the same environment: the secret token is
``TELEGRAM_WEBHOOK_SECRET``, or else derived from the bot token (HMAC-SHA256), never random.

What the Bot API refuses in ``setWebhook`` is refused here first, with one line naming the
variable, so a typo is not a start-up retried against Telegram."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

URL_VARIABLE = "TELEGRAM_WEBHOOK_URL"
SECRET_VARIABLE = "TELEGRAM_WEBHOOK_SECRET"
LISTEN_VARIABLE = "TELEGRAM_WEBHOOK_LISTEN"
PORT_VARIABLE = "PORT"
DEFAULT_LISTEN = "0.0.0.0"
DEFAULT_PORT = 8443
# The only ports Telegram delivers webhook requests to (the URL's port, not the one we listen on:
# a proxy or load balancer may stand between).
TELEGRAM_PORTS = (443, 80, 88, 8443)
# What setWebhook accepts as secret_token.
SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")
# Changing this changes every derived secret: workers of different versions would disagree until
# the last of them has called setWebhook.
_DERIVATION = b"draughts-bot telegram webhook secret token v1"


class WebhookConfigError(ValueError):
    """A webhook setting that cannot work: the message is one line, without any secret."""


@dataclass(frozen=True)
class WebhookConfig:
    url: str                    # what Telegram calls (https)
    url_path: str               # the path our server answers on
    listen: str
    port: int
    secret: str = field(repr=False)


def derived_secret(token: str) -> str:
    """The secret token every worker with this bot token agrees on (64 hex digits), which tells
    nothing about the bot token."""
    return hmac.new(token.encode(), _DERIVATION, hashlib.sha256).hexdigest()


def webhook_config(token: str, env: Mapping[str, str]) -> WebhookConfig | None:
    """Webhook mode's settings, or None for polling (no TELEGRAM_WEBHOOK_URL);
    WebhookConfigError when a setting is unusable."""
    url = env.get(URL_VARIABLE, "").strip()
    if not url:
        return None
    try:
        parts = urlsplit(url)
        url_port = parts.port
    except ValueError:
        raise WebhookConfigError(f"{URL_VARIABLE} is not a URL") from None
    if parts.scheme != "https" or not parts.hostname:
        raise WebhookConfigError(f"{URL_VARIABLE} must be an https:// URL with a host (Telegram calls only https)")
    if parts.fragment:
        raise WebhookConfigError(f"{URL_VARIABLE} may not have a #fragment")
    if url_port is not None and url_port not in TELEGRAM_PORTS:
        raise WebhookConfigError(f"{URL_VARIABLE} has port {url_port}; Telegram calls only ports "
                                 f"{', '.join(map(str, TELEGRAM_PORTS))}")
    secret = env.get(SECRET_VARIABLE, "").strip()
    if secret and not SECRET.fullmatch(secret):
        # The value is a secret: the line says what is wrong, never what it is.
        raise WebhookConfigError(f"{SECRET_VARIABLE} must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
    listen = env.get(LISTEN_VARIABLE, "").strip() or DEFAULT_LISTEN
    raw_port = env.get(PORT_VARIABLE, "").strip()
    if not raw_port:
        port = DEFAULT_PORT
    elif re.fullmatch(r"[0-9]+", raw_port) and 1 <= int(raw_port) <= 65535:
        port = int(raw_port)
    else:
        raise WebhookConfigError(f"{PORT_VARIABLE}={raw_port!r} is not a port number (1-65535)")
    return WebhookConfig(url=url, url_path=parts.path or "/", listen=listen, port=port,
                         secret=secret or derived_secret(token))


def webhook_secrets(token: str, env: Mapping[str, str]) -> list[str]:
    """The webhook secrets to keep out of the logs (whether or not the settings are valid)."""
    if not env.get(URL_VARIABLE, "").strip():
        return []
    given = env.get(SECRET_VARIABLE, "").strip()
    return [given] if given else [derived_secret(token)]
