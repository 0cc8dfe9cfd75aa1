"""Sharding as production runs it: ``run_discord`` with the real discord.py AutoShardedBot, our
service on a real SQLite file, and the strict fake Discord under discord.py's aiohttp session,
gateway included (the fake answers ``/gateway/bot`` and IDENTIFY; see discord_fake).

Without DISCORD_SHARD_COUNT discord.py asks Discord how many shards to run and runs them all; with
DISCORD_SHARD_COUNT and DISCORD_SHARD_IDS this process identifies exactly those shards of that
many, so processes sharing one database split the shards between them.  Unusable settings are one
line on stderr and exit status 2, before anything is sent to Discord."""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Any

import discord
import pytest
from discord_fake import TOKEN, FakeDiscord, install

from bot.platforms.discord import DraughtsBot, ShardConfig, ShardConfigError, build_bot, run_discord, shard_config
from bot.service import GameService
from bot.storage import Storage

# A run that does not get there fails after this long instead of hanging (nothing takes long).
WATCHDOG_SECONDS = 60.0


@pytest.fixture
def service(tmp_path):
    storage = Storage(tmp_path / "shards.db")
    service = GameService(storage)
    yield service
    service.close()
    storage.close()


@pytest.fixture
def fake(monkeypatch):
    fake = FakeDiscord()
    install(fake, monkeypatch)
    return fake


@pytest.fixture
def identifies(monkeypatch) -> list[tuple[int, bool]]:
    """The shards discord.py identifies, in order.  discord.py waits 5 s between two IDENTIFYs
    of one process (Discord's rate limit, in its before_identify_hook): not waited here."""
    seen: list[tuple[int, bool]] = []

    async def at_once(self: DraughtsBot, shard_id: int | None, *, initial: bool = False) -> None:
        seen.append((shard_id if shard_id is not None else -1, initial))

    monkeypatch.setattr(DraughtsBot, "before_identify_hook", at_once)
    return seen


@pytest.fixture
def ready(monkeypatch) -> list[dict[str, Any]]:
    """What the bot was running when discord.py said it was ready (every shard of this process
    connected); then the run is stopped with SIGINT, as an operator would."""
    seen: list[dict[str, Any]] = []
    original = DraughtsBot.on_ready

    async def on_ready(self: DraughtsBot) -> None:
        await original(self)
        seen.append({"count": self.shard_count, "ids": self.shard_ids, "connected": sorted(self.shards),
                     "delivering": self.delivering})
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(DraughtsBot, "on_ready", on_ready)
    return seen


def gateway_asked(fake: FakeDiscord) -> int:
    return sum(1 for c in fake.calls if (c.method, c.path) == ("GET", "/gateway/bot"))


def test_without_settings_discord_py_runs_as_many_shards_as_discord_asks_for(service, fake, identifies, ready,
                                                                             bot_errors):
    fake.recommended_shards = 2
    assert run_discord(TOKEN, service, sleep=lambda s: None, env={}) == 0
    assert gateway_asked(fake) == 1
    assert sorted(fake.identified, key=str) == [(0, 2), (1, 2)]
    assert ready == [{"count": 2, "ids": None, "connected": [0, 1], "delivering": True}]
    assert not fake.refused and bot_errors == []


def test_the_shards_named_are_the_only_ones_this_process_runs(service, fake, identifies, ready, bot_errors):
    env = {"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "3, 1"}
    assert run_discord(TOKEN, service, sleep=lambda s: None, env=env) == 0
    # The count is given: Discord is not asked for one.
    assert gateway_asked(fake) == 0
    assert fake.identified == [(1, 4), (3, 4)]
    assert identifies == [(1, True), (3, False)]
    assert ready == [{"count": 4, "ids": [1, 3], "connected": [1, 3], "delivering": True}]
    # Nothing is registered by a shard process (the slash commands are `discord sync`'s).
    assert not any("commands" in c.path for c in fake.calls)
    assert not fake.refused and bot_errors == []


def test_a_count_alone_runs_every_shard_of_that_count(service, fake, identifies, ready, bot_errors):
    assert run_discord(TOKEN, service, sleep=lambda s: None, env={"DISCORD_SHARD_COUNT": "3"}) == 0
    assert gateway_asked(fake) == 0 and fake.identified == [(0, 3), (1, 3), (2, 3)]
    assert ready == [{"count": 3, "ids": None, "connected": [0, 1, 2], "delivering": True}]
    assert bot_errors == []


async def test_two_processes_split_the_shards_and_a_third_on_a_taken_shard_is_refused(tmp_path, fake, identifies):
    storage = Storage(tmp_path / "shared.db")          # one database for every process
    service = GameService(storage)
    bots = [build_bot(service=service, shards=shard_config({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": ids}))
            for ids in ("0-1", "2-3")]
    runs = [asyncio.create_task(bot.start(TOKEN)) for bot in bots]
    try:
        started = time.monotonic()
        while len(fake.identified) < 4 and not any(run.done() for run in runs):
            assert time.monotonic() - started < WATCHDOG_SECONDS, "watchdog: the shards did not all identify"
            await asyncio.sleep(0.01)
        assert sorted(fake.identified, key=str) == [(0, 4), (1, 4), (2, 4), (3, 4)]
        assert [sorted(bot.shards) for bot in bots] == [[0, 1], [2, 3]]
        # A process started with a shard another one runs: Discord would end one of the two sessions.
        intruder = build_bot(service=service, shards=ShardConfig(count=4, ids=(1,)))
        with pytest.raises(discord.ConnectionClosed) as closed:
            async with intruder:
                await intruder.start(TOKEN)
        assert closed.value.code == 4010
    finally:
        for bot in bots:
            await bot.close()
        await asyncio.gather(*runs, return_exceptions=True)
        service.close()
        storage.close()


@pytest.mark.parametrize(("options", "required", "code"), [
    ({"shard_count": 2, "shard_ids": [5]}, 1, 4010),      # an id discord.py does not check itself
    ({"shard_count": 1}, 2, 4011),                          # fewer shards than the bot needs
])
async def test_the_fake_gateway_refuses_what_discord_refuses_at_identify(tmp_path, fake, identifies, options,
                                                                         required, code):
    fake.required_shards = required
    storage = Storage(tmp_path / "gw.db")
    service = GameService(storage)
    bot = DraughtsBot(service, **options)
    try:
        with pytest.raises(discord.ConnectionClosed) as closed:
            async with bot:
                await bot.start(TOKEN)
        assert closed.value.code == code and fake.identified == []
    finally:
        service.close()
        storage.close()


@pytest.mark.parametrize(("env", "fragment"), [
    ({"DISCORD_SHARD_IDS": "0,1"}, "DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT"),
    ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "4"}, "names shard 4, but with DISCORD_SHARD_COUNT=4 the "
                                                             "shards are 0 to 3"),
    ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "2-9"}, "names shard 9"),
    ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "3-1"}, "the range 3-1, which is empty"),
    ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "0,1,1"}, "names shard 1 twice"),
    ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "0-2,2"}, "names shard 2 twice"),
    ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "zero"}, "'zero' is neither"),
    ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "-1"}, "'-1' is neither"),
    ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "0,,1"}, "'' is neither"),
    ({"DISCORD_SHARD_COUNT": "four"}, "DISCORD_SHARD_COUNT='four' is not a number of shards"),
    ({"DISCORD_SHARD_COUNT": "0"}, "DISCORD_SHARD_COUNT='0' is not a number of shards"),
    ({"DISCORD_SHARD_COUNT": "-2"}, "is not a number of shards"),
    ({"DISCORD_SHARD_COUNT": "²"}, "is not a number of shards"),
    ({"DISCORD_SHARD_COUNT": "99999"}, "is not a number of shards"),
])
def test_unusable_shard_settings_are_one_line_and_exit_2_before_connecting(service, fake, capsys, env, fragment):
    assert run_discord(TOKEN, service, sleep=lambda s: None, env=env) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and fragment in err, err
    assert fake.calls == [] and fake.sockets == []
    assert TOKEN not in err


@pytest.mark.parametrize(("env", "expected"), [
    ({}, ShardConfig()),
    ({"DISCORD_SHARD_COUNT": " ", "DISCORD_SHARD_IDS": ""}, ShardConfig()),
    ({"DISCORD_SHARD_COUNT": "4"}, ShardConfig(4, None)),
    ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "0-3"}, ShardConfig(4, (0, 1, 2, 3))),
    ({"DISCORD_SHARD_COUNT": "8", "DISCORD_SHARD_IDS": " 6 , 0-1,4 - 4 "}, ShardConfig(8, (0, 1, 4, 6))),
    ({"DISCORD_SHARD_COUNT": "1", "DISCORD_SHARD_IDS": "0"}, ShardConfig(1, (0,))),
])
def test_the_settings_read_from_the_environment(env, expected):
    config = shard_config(env)
    assert config == expected
    assert config.options() == ({} if expected.count is None else
                                {"shard_count": expected.count,
                                 **({} if expected.ids is None else {"shard_ids": list(expected.ids)})})


def test_a_config_error_is_a_value_error_with_one_line():
    with pytest.raises(ShardConfigError) as err:
        shard_config({"DISCORD_SHARD_IDS": "0"})
    assert isinstance(err.value, ValueError) and "\n" not in str(err.value)
