"""The Telegram adapter with the real python-telegram-bot objects; only HTTP is replaced.

The fake enforces what Telegram enforces and PTB does not (button data 1-64 bytes,
caption <= 1024, text <= 4096) and can answer 403 or "message is not modified".
"""

from __future__ import annotations

import itertools
import json
import time

import pytest
from telegram import Update
from telegram.request import BaseRequest

from bot.platforms.telegram import TelegramAdapter
from bot.service import GameService
from bot.storage import Storage

BOT = {"id": 999, "is_bot": True, "first_name": "Damas", "username": "DraughtsBot"}
GROUP = {"id": -100123, "type": "supergroup", "title": "Club"}
USERS = {
    "ana": {"id": 1, "is_bot": False, "first_name": "Ana", "username": "ana", "language_code": "es"},
    "bob": {"id": 2, "is_bot": False, "first_name": "Bob", "username": "bob", "language_code": "en"},
    "eve": {"id": 3, "is_bot": False, "first_name": "Eve", "username": "eve", "language_code": "it"},
}


class FakeTelegram(BaseRequest):
    """Records every Bot API call and answers like Telegram would."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict, dict]] = []
        self.ids = itertools.count(100)
        self.fail_next: dict[str, tuple[int, dict]] = {}

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    @property
    def read_timeout(self) -> float:
        return 1.0

    def _message(self, chat_id, **extra) -> dict:
        return {"message_id": next(self.ids), "date": int(time.time()), "from": BOT,
                "chat": dict(GROUP, id=int(chat_id)), **extra}

    async def do_request(self, url, method, request_data=None, read_timeout=None, write_timeout=None,
                         connect_timeout=None, pool_timeout=None):
        name = url.rsplit("/", 1)[-1]
        params = dict(request_data.parameters) if request_data else {}
        files = {}
        if request_data and request_data.multipart_data:
            for key, value in request_data.multipart_data.items():
                files[key] = value[1] if isinstance(value, tuple) else value
        self.calls.append((name, params, files))
        if name in self.fail_next:
            status, body = self.fail_next.pop(name)
            return status, json.dumps(body).encode()
        problem = self._check(params)
        if problem:
            return 400, json.dumps({"ok": False, "error_code": 400, "description": problem}).encode()
        if name == "getMe":
            result = BOT
        elif name in ("sendMessage", "sendPhoto", "sendDocument", "sendAnimation"):
            result = self._message(params.get("chat_id", GROUP["id"]))
        elif name == "editMessageMedia":
            result = self._message(params.get("chat_id", GROUP["id"]))
        else:
            result = True
        return 200, json.dumps({"ok": True, "result": result}).encode()

    @staticmethod
    def _check(params: dict) -> str | None:
        markup = params.get("reply_markup")
        if markup:
            markup = json.loads(markup) if isinstance(markup, str) else markup
            for row in markup.get("inline_keyboard", []):
                for button in row:
                    if not 1 <= len(button.get("callback_data", "").encode()) <= 64:
                        return "Bad Request: BUTTON_DATA_INVALID"
        if len(params.get("caption") or "") > 1024:
            return "Bad Request: message caption is too long"
        if len(params.get("text") or "") > 4096:
            return "Bad Request: message is too long"
        return None

    def named(self, name: str) -> list[tuple[dict, dict]]:
        return [(p, f) for n, p, f in self.calls if n == name]


class Harness:
    def __init__(self, tmp_path) -> None:
        self.storage = Storage(tmp_path / "tg.db")
        self.service = GameService(self.storage)
        self.http = FakeTelegram()
        self.adapter = TelegramAdapter(self.service)
        self.app = self.adapter.build("123:TEST", request=self.http, rate_limiter=False)
        self.errors: list[BaseException] = []
        self.app.add_error_handler(self._collect)
        self.update_ids = itertools.count(1)
        self.message_ids = itertools.count(1)

    async def _collect(self, update, context) -> None:
        self.errors.append(context.error)

    async def say(self, user: str, text: str, reply_to: int | None = None, chat: dict = GROUP) -> None:
        message = {"message_id": next(self.message_ids), "date": int(time.time()), "chat": chat,
                   "from": USERS[user], "text": text}
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        if reply_to is not None:
            message["reply_to_message"] = {"message_id": reply_to, "date": int(time.time()), "chat": chat,
                                           "from": BOT}
        await self.app.process_update(Update.de_json({"update_id": next(self.update_ids), "message": message},
                                                     self.app.bot))

    async def press(self, user: str, data: str, message_id: int = 500) -> None:
        query = {"id": str(next(self.update_ids)), "from": USERS[user], "chat_instance": "ci", "data": data,
                 "message": {"message_id": message_id, "date": int(time.time()), "chat": GROUP, "from": BOT,
                             "photo": [{"file_id": "f", "file_unique_id": "u", "width": 600, "height": 600}]}}
        await self.app.process_update(Update.de_json({"update_id": next(self.update_ids), "callback_query": query},
                                                     self.app.bot))


@pytest.fixture
async def tg(tmp_path):
    harness = Harness(tmp_path)
    async with harness.app:
        yield harness
    harness.storage.close()
    assert harness.errors == []


def photo_buttons(params: dict) -> list[str]:
    markup = json.loads(params["reply_markup"]) if isinstance(params["reply_markup"], str) else params["reply_markup"]
    return [b["callback_data"] for row in markup["inline_keyboard"] for b in row]


async def test_challenge_accept_and_board_photo_with_buttons(tg):
    await tg.say("ana", "/new@DraughtsBot italian white")
    text = tg.http.named("sendMessage")[-1][0]["text"]
    assert "Reto #1" in text                                   # Ana's client is Spanish
    await tg.say("bob", "/accept")
    params, files = tg.http.named("sendPhoto")[-1]
    assert "Game #1 starts" in params["caption"]
    png = files["photo"]
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 40_000
    assert photo_buttons(params) == ["s:1:0:21", "s:1:0:22", "s:1:0:23", "s:1:0:24"]


async def test_typed_move_and_reply_to_the_board(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    await tg.say("eve", "/new italian white")
    await tg.say("bob", "/accept")                 # Bob now plays two games here, black in both
    await tg.say("ana", "/m 22-18")
    assert tg.storage.game(1)["ply"] == 1
    board_of_game_1 = tg.storage.db.execute(
        "SELECT message_id FROM messages WHERE game_id=1 ORDER BY rowid DESC").fetchone()[0]
    await tg.say("bob", "11-15", reply_to=int(board_of_game_1))   # a bare move replying to the board
    assert (tg.storage.game(1)["ply"], tg.storage.game(2)["ply"]) == (2, 0)


async def test_commands_for_another_bot_are_ignored(tg):
    await tg.say("ana", "/new italian")
    before = len(tg.http.calls)
    await tg.say("bob", "/accept@SomeOtherBot")
    assert len(tg.http.calls) == before
    assert tg.storage.active_games("telegram", str(GROUP["id"])) == []


async def test_piece_button_edits_the_board_and_destination_plays(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    await tg.press("ana", "s:1:0:22")
    params, files = tg.http.named("editMessageMedia")[-1]
    assert photo_buttons(params)[:2] == ["d:1:0:22:18", "d:1:0:22:19"]
    assert tg.http.named("answerCallbackQuery")
    await tg.press("ana", "d:1:0:22:18")
    assert tg.storage.game(1)["ply"] == 1


async def test_wrong_player_gets_an_alert_and_nothing_changes(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    await tg.press("eve", "s:1:0:22")
    params, _ = tg.http.named("answerCallbackQuery")[-1]
    assert params.get("show_alert") is True and params.get("text")
    assert tg.storage.game(1)["ply"] == 0


async def test_garbage_button_data_is_answered(tg):
    await tg.press("ana", "zz:1:2:3")
    params, _ = tg.http.named("answerCallbackQuery")[-1]
    assert params.get("text")


async def test_message_not_modified_is_harmless(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    tg.http.fail_next["editMessageMedia"] = (400, {"ok": False, "error_code": 400,
                                                   "description": "Bad Request: message is not modified"})
    await tg.press("ana", "p:1:0")
    assert len(tg.http.named("editMessageMedia")) == 1 and "editMessageMedia" not in tg.http.fail_next


async def test_a_chat_that_removed_the_bot_is_skipped(tg):
    tg.http.fail_next["sendMessage"] = (403, {"ok": False, "error_code": 403,
                                              "description": "Forbidden: bot was kicked from the group chat"})
    await tg.say("ana", "/help")
    assert len(tg.http.named("sendMessage")) == 1          # tried once, refused, nothing raised


async def test_a_refused_button_answer_still_shows_the_played_move(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    tg.http.fail_next["answerCallbackQuery"] = (400, {"ok": False, "error_code": 400,
                                                      "description": "Bad Request: query is too old"})
    await tg.press("ana", "d:1:0:22:18")
    assert tg.storage.game(1)["ply"] == 1
    assert "Ana jugó 22-18" in str(tg.http.named("editMessageMedia")[-1][0]["media"])   # Ana plays in Spanish


async def test_one_failed_deadline_message_does_not_silence_the_others(tg):
    other = dict(GROUP, id=-100456)
    for chat in (GROUP, other):
        await tg.say("ana", "/new italian white 5m", chat=chat)
        await tg.say("bob", "/accept", chat=chat)
    tg.service.clock = lambda: time.time() + 3600
    tg.http.fail_next["sendPhoto"] = (400, {"ok": False, "error_code": 400,
                                            "description": "Bad Request: chat not found"})
    before = len(tg.http.named("sendPhoto"))
    await tg.app.job_queue.get_jobs_by_name("deadlines")[0].run(tg.app)
    sent = tg.http.named("sendPhoto")[before:]
    assert len(sent) == 2                                   # the second chat still hears its result
    assert "acabó el tiempo" in sent[1][0]["caption"]


async def test_a_send_to_a_migrated_group_follows_it(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    upgraded = "Bad Request: group chat was upgraded to a supergroup chat"
    tg.http.fail_next["sendMessage"] = (400, {"ok": False, "error_code": 400, "description": upgraded,
                                              "parameters": {"migrate_to_chat_id": -100888}})
    await tg.say("ana", "/games")
    assert tg.http.named("sendMessage")[-1][0]["chat_id"] == -100888
    assert tg.storage.active_games("telegram", "-100888")[0]["id"] == 1


async def test_group_migration_moves_the_games(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    update = {"update_id": 9999, "message": {"message_id": 77, "date": int(time.time()), "chat": GROUP,
                                             "from": USERS["ana"], "migrate_to_chat_id": -100777}}
    await tg.app.process_update(Update.de_json(update, tg.app.bot))
    assert tg.storage.active_games("telegram", "-100777")[0]["id"] == 1


async def test_deadline_job_posts_the_loss_on_time(tg):
    await tg.say("ana", "/new italian white 5m")
    await tg.say("bob", "/accept")
    tg.service.clock = lambda: time.time() + 3600
    job = tg.app.job_queue.get_jobs_by_name("deadlines")[0]
    await job.run(tg.app)
    params, _ = tg.http.named("sendPhoto")[-1]
    # Said in the language of the player who lost (Ana's client is Spanish).
    assert "Gana Bob: a Ana se le acabó el tiempo" in params["caption"]
    assert tg.storage.game(1)["result_reason"] == "time"


async def test_pdn_is_sent_as_a_document(tg):
    await tg.say("ana", "/new spanish white")
    await tg.say("bob", "/accept")
    await tg.say("ana", "/pdn")
    _, files = tg.http.named("sendDocument")[-1]
    assert b'[GameType "24,W,8,8,N1,1"]' in files["document"]


async def test_long_text_is_split_under_the_limit(tg):
    from types import SimpleNamespace

    from bot.service import Reply
    await tg.adapter.send(SimpleNamespace(bot=tg.app.bot), GROUP["id"], Reply("x" * 9000))
    texts = [p["text"] for p, _ in tg.http.named("sendMessage")]
    assert [len(t) for t in texts] == [4096, 4096, 808]


def test_tokens_are_redacted_from_every_log_line():
    import io
    import logging

    from bot.app import RedactSecrets
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RedactSecrets(["123456:REAL-SECRET"]))
    log = logging.getLogger("test.redaction")
    log.addHandler(handler)
    try:
        log.warning("GET https://api.telegram.org/bot%s/getMe", "123456:REAL-SECRET")
        try:
            raise RuntimeError("The token `123456:REAL-SECRET` was rejected by the server.")
        except RuntimeError:
            log.exception("stopped")
    finally:
        log.removeHandler(handler)
    text = out.getvalue()
    assert "REAL-SECRET" not in text
    assert text.count("[redacted]") >= 2 and "Traceback" in text


def test_missing_token_is_one_clear_line_pointing_to_the_console(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k not in ("TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN")}
    env["DRAUGHTS_DB"] = str(tmp_path / "x.db")
    root = Path(__file__).resolve().parents[3]
    for platform in ("telegram", "discord"):
        out = subprocess.run([sys.executable, "-m", "bot", platform], cwd=root, env=env, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{platform.upper()}_BOT_TOKEN is not set" in lines[0]
        assert "python -m bot" in lines[0]
