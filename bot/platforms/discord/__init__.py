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
from bot.platforms.discord.sharding import ShardConfig, ShardConfigError, shard_config

__all__ = ["DraughtsBot", "GameButton", "ShardConfig", "ShardConfigError", "build_bot", "run_discord",
           "serve_discord", "shard_config", "sync_commands", "sync_tree"]
