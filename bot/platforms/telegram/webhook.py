"""Webhook mode's settings (docs/deployment.md), as bot.config reads them from the environment.

``TELEGRAM_WEBHOOK_URL`` switches the bot from polling to python-telegram-bot's own webhook
server.  Several such processes may serve one URL behind a load balancer, on one database, so
everything here is the same in every process given the same environment: the secret token is
``TELEGRAM_WEBHOOK_SECRET``, or else derived from the bot token (HMAC-SHA256), never random.

What the Bot API refuses in ``setWebhook`` is refused here first, with one line naming the
variable, so a typo is not a start-up retried against Telegram."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot import config

URL_VARIABLE = "TELEGRAM_WEBHOOK_URL"
SECRET_VARIABLE = "TELEGRAM_WEBHOOK_SECRET"
LISTEN_VARIABLE = "TELEGRAM_WEBHOOK_LISTEN"
PORT_VARIABLE = "PORT"
DEFAULT_LISTEN = config.WEBHOOK_LISTEN
DEFAULT_PORT = config.WEBHOOK_PORT
TELEGRAM_PORTS = config.TELEGRAM_PORTS
# Changing this changes every derived secret: workers of different versions would disagree until
# the last of them has called setWebhook.
_DERIVATION = b"draughts-bot telegram webhook secret token v1"

# A webhook setting that cannot work: the message is one line, without any secret.
WebhookConfigError = config.ConfigError


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
    """Webhook mode's settings in ``env`` (the entry point's ``Config.environ``), or None for
    polling (no TELEGRAM_WEBHOOK_URL); WebhookConfigError when a setting is unusable
    (``bot.config.webhook`` checks them)."""
    given = config.webhook(env)
    if given is None:
        return None
    return WebhookConfig(url=given.url, url_path=given.url_path, listen=given.listen, port=given.port,
                         secret=given.secret or derived_secret(token))


def webhook_secrets(token: str, env: Mapping[str, str]) -> list[str]:
    """The webhook secrets to keep out of the logs (whether or not the settings are valid)."""
    if not env.get(URL_VARIABLE, "").strip():
        return []
    given = env.get(SECRET_VARIABLE, "").strip()
    return [given] if given else [derived_secret(token)]
