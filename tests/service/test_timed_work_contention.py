"""Timed work and the engine's answers lose a race now and then on a database with row locks
(PostgreSQL answers a serialization failure, StorageContention): the unit is run again, and the
loss on time, the lapse, the daily post and the bot's move each still happen, once.

The store here is the real SQLite store with one write raising StorageContention the first time it
is called inside a unit of work, as a serialization failure does (the unit is undone)."""

from __future__ import annotations

import random
import threading
from pathlib import Path

from bot.service import ChatEvent, GameService
from bot.storage import SQLiteStore, StorageContention

T0 = 1_700_000_000.0
HOUR = 3600


class LosesOnce(SQLiteStore):
    """Each method named in ``losing`` raises StorageContention once, at its n-th call from now
    (``losing[name] == n``), then works."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.losing: dict[str, int] = {}
        self.lost: list[str] = []

    def _lose(self, name: str) -> None:
        if name in self.losing:
            self.losing[name] -= 1
            if self.losing[name] == 0:
                del self.losing[name]
                self.lost.append(name)
                raise StorageContention(f"{name}: could not serialize access (staged)")

    def update_game(self, *args, **kwargs):
        self._lose("update_game")
        return super().update_game(*args, **kwargs)

    def claim_daily_post(self, *args, **kwargs):
        self._lose("claim_daily_post")
        return super().claim_daily_post(*args, **kwargs)

    def close_challenge(self, *args, **kwargs):
        self._lose("close_challenge")
        return super().close_challenge(*args, **kwargs)


def service(tmp_path: Path, now: list[float]) -> tuple[GameService, LosesOnce]:
    store = LosesOnce(tmp_path / "t.db")
    return GameService(store, clock=lambda: now[0], rng=random.Random(2), bot_seconds=0.05), store


def say(service: GameService, user: str, text: str, chat: str = "g1") -> list:
    return service.handle(ChatEvent(platform="test", chat_id=chat, user_id=user, user_name=user.title(),
                                    username=user, chat_kind="group", language="en", text=text, is_admin=True))


def test_a_loss_on_time_that_loses_a_race_is_written_once(tmp_path):
    now = [T0]
    svc, store = service(tmp_path, now)
    try:
        say(svc, "ana", "/new italian white 1h")
        say(svc, "bob", "/accept")
        game_id = store.active_games("test", "g1")[0].id
        now[0] += 2 * HOUR
        store.losing = {"update_game": 1}
        svc.run_due("test")
        assert store.lost == ["update_game"]
        row = store.game(game_id)
        assert row is not None and row.status == "finished" and row.result_reason is not None
        assert sum(1 for m in store.find_outbox("test") if '"lost_on_time"' in m.payload) == 1
        svc.run_due("test")
        assert store.game(game_id).version == row.version           # not ended twice
        assert sum(1 for m in store.find_outbox("test") if '"lost_on_time"' in m.payload) == 1
    finally:
        svc.close()
        store.close()


def test_a_lapse_and_a_daily_post_that_lose_a_race_happen_once(tmp_path):
    now = [T0]
    svc, store = service(tmp_path, now)
    try:
        say(svc, "ana", "/new italian white", chat="g2")
        say(svc, "ana", "/daily on 00:00 UTC italian", chat="g3")
        before = len(store.find_outbox("test"))
        now[0] += 3 * 24 * HOUR
        store.losing = {"close_challenge": 1, "claim_daily_post": 1}
        svc.run_due("test")
        assert sorted(store.lost) == ["claim_daily_post", "close_challenge"]
        assert [c.status for c in store.find_challenges(chat_id="g2")] == ["expired"]
        assert len(store.daily_posts("test", "g3", 5)) == 1
        after = len(store.find_outbox("test"))
        svc.run_due("test")
        assert len(store.find_outbox("test")) == after > before
    finally:
        svc.close()
        store.close()


def test_the_bots_move_that_loses_a_race_is_played_once(tmp_path):
    now = [T0]
    svc, store = service(tmp_path, now)
    moved = threading.Event()
    svc.add_listener(lambda platform: moved.set())
    try:
        say(svc, "ana", "/play italian 1 white")
        game_id = store.active_games("test", "g1")[0].id
        # The first write is the human's move; the second, the bot's answer, loses a race.
        store.losing = {"update_game": 2}
        say(svc, "ana", "/m 21-17")
        # The bot answers from the engine's thread; wait until its move is stored.
        for _ in range(400):
            row = store.game(game_id)
            if row is not None and row.ply == 2:
                break
            moved.wait(0.05)
            moved.clear()
        row = store.game(game_id)
        assert row is not None and row.ply == 2, "the bot never moved after losing a race"
        assert "update_game" in store.lost
        assert [m.ply for m in store.moves(game_id)] == [1, 2]
    finally:
        svc.close()
        store.close()
