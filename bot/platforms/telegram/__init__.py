"""The Telegram adapter (python-telegram-bot): updates in, service replies out."""

from .adapter import PLATFORM, TelegramAdapter, build_application, run_telegram

__all__ = ["PLATFORM", "TelegramAdapter", "build_application", "run_telegram"]
