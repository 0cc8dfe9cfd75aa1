"""Which of the bot's gateway shards this process runs, from the environment (docs/deployment.md).

Without ``DISCORD_SHARD_COUNT`` discord.py shards by itself: it asks Discord how many shards the
bot needs and runs them all here.  With it, this process runs ``DISCORD_SHARD_IDS`` of that many
(all of them when no ids are given), so shard processes can be spread over machines that share
one database.  Every process must be given the same count, and every id must be run by exactly
one process: Discord sends a guild's events only to the shard ``(guild_id >> 22) % count``.

Nothing a Discord process does at start must be done only once per deployment: the slash
commands are registered by ``python -m bot discord sync``, a one-off at deploy time, never by a
running shard; everything else a running process does (the outbox, timed work) is shared out
through the database."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot import config

COUNT_VARIABLE = "DISCORD_SHARD_COUNT"
IDS_VARIABLE = "DISCORD_SHARD_IDS"
MAX_SHARDS = config.MAX_SHARDS

# A sharding setting that cannot work: the message is one line.
ShardConfigError = config.ConfigError


@dataclass(frozen=True)
class ShardConfig:
    """``count`` None: discord.py's automatic sharding.  ``ids`` None: every shard of ``count``."""

    count: int | None = None
    ids: tuple[int, ...] | None = None

    def options(self) -> dict[str, Any]:
        """The AutoShardedBot options for this process."""
        out: dict[str, Any] = {}
        if self.count is not None:
            out["shard_count"] = self.count
        if self.ids is not None:
            out["shard_ids"] = list(self.ids)
        return out


def shard_config(env: Mapping[str, str]) -> ShardConfig:
    """The shards this process runs, from ``env`` (the entry point's ``Config.environ``);
    ShardConfigError (one line) when the settings are unusable (``bot.config.shards`` checks them)."""
    given = config.shards(env)
    return ShardConfig(count=given.count, ids=given.ids)
