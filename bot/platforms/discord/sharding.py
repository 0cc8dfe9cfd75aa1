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

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

COUNT_VARIABLE = "DISCORD_SHARD_COUNT"
IDS_VARIABLE = "DISCORD_SHARD_IDS"
# Far beyond any bot (Discord asks for one shard per 1,000 to 2,500 guilds): a bigger number is a
# typo, and discord.py would open that many connections.
MAX_SHARDS = 10_000
_RANGE = re.compile(r"([0-9]+)(?:\s*-\s*([0-9]+))?")


class ShardConfigError(ValueError):
    """A sharding setting that cannot work: the message is one line."""


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


def parse_ids(text: str, count: int) -> tuple[int, ...]:
    """``0,1`` or ``0-3`` or ``0-1,4``: the ids, sorted; ShardConfigError if one is outside
    0..count-1, listed twice, or not a number."""
    ids: list[int] = []
    for item in text.split(","):
        match = _RANGE.fullmatch(item.strip())
        if match is None:
            raise ShardConfigError(f"{IDS_VARIABLE} must be shard ids like 0,1 or ranges like 0-3; "
                                   f"{item.strip()!r} is neither")
        first = int(match[1])
        last = int(match[2]) if match[2] is not None else first
        if last < first:
            raise ShardConfigError(f"{IDS_VARIABLE} has the range {first}-{last}, which is empty")
        if last >= count:
            raise ShardConfigError(f"{IDS_VARIABLE} names shard {last}, but with {COUNT_VARIABLE}={count} "
                                   f"the shards are 0 to {count - 1}")
        for shard in range(first, last + 1):
            if shard in ids:
                raise ShardConfigError(f"{IDS_VARIABLE} names shard {shard} twice")
            ids.append(shard)
    return tuple(sorted(ids))


def shard_config(env: Mapping[str, str]) -> ShardConfig:
    """The shards this process runs; ShardConfigError (one line) when the settings are unusable."""
    raw_count = env.get(COUNT_VARIABLE, "").strip()
    raw_ids = env.get(IDS_VARIABLE, "").strip()
    if not raw_count:
        if raw_ids:
            raise ShardConfigError(f"{IDS_VARIABLE} needs {COUNT_VARIABLE}, the number of shards of the whole bot")
        return ShardConfig()
    if not re.fullmatch(r"[0-9]+", raw_count) or not 1 <= int(raw_count) <= MAX_SHARDS:
        raise ShardConfigError(f"{COUNT_VARIABLE}={raw_count!r} is not a number of shards (1 to {MAX_SHARDS})")
    count = int(raw_count)
    return ShardConfig(count=count, ids=parse_ids(raw_ids, count) if raw_ids else None)
