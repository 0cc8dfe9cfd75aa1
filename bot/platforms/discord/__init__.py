"""Discord: slash commands and persistent buttons for the draughts service."""

from bot.platforms.discord.bot import (
    DraughtsBot,
    GameButton,
    build_bot,
    run_discord,
    serve_discord,
    sync_commands,
    sync_tree,
)

__all__ = ["DraughtsBot", "GameButton", "build_bot", "run_discord", "serve_discord", "sync_commands", "sync_tree"]
