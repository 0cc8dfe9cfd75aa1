"""Draughts chat bot: Spanish, Italian and Triestina draughts for Telegram and Discord."""

__version__ = "0.1.0"
