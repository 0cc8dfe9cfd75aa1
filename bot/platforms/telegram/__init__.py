"""The Telegram adapter (python-telegram-bot): updates in, service replies out."""

from .adapter import PLATFORM, TelegramAdapter, build_application, run_telegram
from .webhook import WebhookConfig, WebhookConfigError, webhook_config, webhook_secrets

__all__ = ["PLATFORM", "TelegramAdapter", "WebhookConfig", "WebhookConfigError", "build_application", "run_telegram",
           "webhook_config", "webhook_secrets"]
