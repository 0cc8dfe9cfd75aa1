"""The Telegram adapter (python-telegram-bot): updates in, service replies out."""

from .adapter import PLATFORM, TelegramAdapter, run_telegram

__all__ = ["PLATFORM", "TelegramAdapter", "run_telegram"]
