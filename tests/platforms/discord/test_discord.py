"""The Discord adapter against real discord.py objects, with only HTTP replaced.

``bot.http.request`` (REST) and ``AsyncWebhookAdapter.request`` (interaction callbacks,
followups, edits) are recorders that answer with realistic JSON and enforce what Discord
enforces: acknowledgement within 3 seconds (else 404, code 10062), one acknowledgement,
2,000 characters, 5 rows of 5 buttons, 80-character labels, 100-character custom ids, and the
rule that the first followup after a deferral takes the deferral's visibility.
Interactions go in as INTERACTION_CREATE payloads through ``parse_interaction_create``.
The service, its SQLite file and the board renderer are real.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
import logging
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
import discord.webhook.async_
import pytest

from bot.i18n import t
from bot.platforms.discord import DraughtsBot, GameButton, sync_tree
from bot.platforms.discord.render import split_text
from bot.rules import Position
from bot.service import GameService
from bot.service.wording import variant_name
from bot.storage import Storage

TOKEN = "MTEST.fake-token.never-logged-4f1c2"
APP_ID = 1_200_000_000_000_000_001
GUILD_ID = 1_200_000_000_000_000_100
CHANNEL_ID = 1_200_000_000_000_000_200
OTHER_CHANNEL_ID = 1_200_000_000_000_000_300
DM_CHANNEL_ID = 1_200_000_000_000_000_400
SIZE_LIMIT = 10 * 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n"
TEMPLATE = GameButton.__discord_ui_compiled_template__

BOT_USER = {"id": str(APP_ID), "username": "draughts", "discriminator": "0", "global_name": "Draughts",
            "avatar": None, "bot": True, "public_flags": 0, "flags": 0, "verified": True, "mfa_enabled": False}
USERS = {
    name: {"id": str(1_200_000_000_000_001_000 + i), "username": name, "discriminator": "0",
           "global_name": name.capitalize(), "avatar": None, "public_flags": 0}
    for i, name in enumerate(["ana", "bob", "cid"])
}


def uid(name: str) -> str:
    return USERS[name]["id"]


def iso(ts: float | None = None) -> str:
    return dt.datetime.fromtimestamp(ts or time.time(), dt.UTC).isoformat()


# -- the fake Discord HTTP API ----------------------------------------------------------------------


class FakeResponse:
    """What discord.HTTPException reads from an aiohttp response."""

    def __init__(self, status: int, reason: str) -> None:
        self.status = status
        self.reason = reason


def http_error(status: int, code: int, message: str) -> discord.HTTPException:
    response = FakeResponse(status, message)
    body = {"code": code, "message": message}
    if status == 404:
        return discord.NotFound(response, body)
    if status == 403:
        return discord.Forbidden(response, body)
    return discord.HTTPException(response, body)


@dataclass
class Call:
    method: str
    path: str
    payload: dict[str, Any] | None
    files: dict[str, bytes] = field(default_factory=dict)
    token: str | None = None

    @property
    def flags(self) -> int:
        return int((self.payload or {}).get("flags") or 0)

    def custom_ids(self) -> list[str]:
        return [c["custom_id"] for row in (self.payload or {}).get("components") or [] for c in row["components"]]


@dataclass
class Sent:
    """A message as users see it."""

    message: dict[str, Any]
    ephemeral: bool
    channel_id: int
    token: str | None = None

    @property
    def content(self) -> str:
        return self.message["content"]

    @property
    def id(self) -> int:
        return int(self.message["id"])

    def custom_ids(self) -> list[str]:
        return [c["custom_id"] for row in self.message["components"] for c in row["components"]]

    def filenames(self) -> list[str]:
        return [a["filename"] for a in self.message["attachments"]]


@dataclass
class InteractionState:
    id: int
    token: str
    channel_id: int
    message: dict[str, Any] | None          # the clicked message, for components
    acked: int | None = None                # callback type
    placeholder: dict[str, Any] | None = None
    placeholder_ephemeral: bool = False


class FakeDiscord:
    """Records every request and answers like Discord."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.interactions: dict[str, InteractionState] = {}
        self.messages: dict[int, Sent] = {}
        self.gone_channels: set[int] = set()
        self.fail_next_followups = 0
        self.refused: list[tuple[str, int]] = []      # acknowledgements Discord would refuse
        self._ids = itertools.count(1)

    # -- ids and payloads --------------------------------------------------------------------

    def snowflake(self, age: float = 0.0) -> int:
        when = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=age)
        return discord.utils.time_snowflake(when) + next(self._ids) % 4096

    def user_message(self, channel_id: int, content: str, *, ephemeral: bool, components: list | None = None,
                     files: dict[str, bytes] | None = None, msg_type: int = 0) -> dict[str, Any]:
        mid = self.snowflake()
        return {
            "id": str(mid), "channel_id": str(channel_id), "type": msg_type, "content": content,
            "author": dict(BOT_USER),
            "attachments": [self._attachment(name, data) for name, data in (files or {}).items()],
            "embeds": [], "mentions": [], "mention_roles": [], "pinned": False, "mention_everyone": False,
            "tts": False, "timestamp": iso(), "edited_timestamp": None, "flags": 64 if ephemeral else 0,
            "components": components or [], "application_id": str(APP_ID), "webhook_id": str(APP_ID),
        }

    def _attachment(self, name: str, data: bytes) -> dict[str, Any]:
        aid = self.snowflake()
        return {"id": str(aid), "filename": name, "size": len(data),
                "url": f"https://cdn.discordapp.com/attachments/{CHANNEL_ID}/{aid}/{name}",
                "proxy_url": f"https://media.discordapp.net/attachments/{CHANNEL_ID}/{aid}/{name}",
                "content_type": "image/png" if name.endswith(".png") else "application/octet-stream"}

    # -- reading requests ------------------------------------------------------------------------

    @staticmethod
    def _read(payload: dict | None, multipart: list | None, files: Any) -> tuple[dict[str, Any] | None,
                                                                                 dict[str, bytes]]:
        body = payload
        for part in multipart or []:
            if part.get("name") == "payload_json":
                body = json.loads(part["value"])
        uploads: dict[str, bytes] = {}
        for f in files or []:
            # Read while the file is still open: discord.py closes it after the request.
            f.reset()
            uploads[f.filename] = f.fp.read()
        return body, uploads

    def _validate(self, body: dict[str, Any] | None, uploads: dict[str, bytes]) -> None:
        """Discord's 400 Invalid Form Body for what it refuses."""
        body = body or {}
        content = body.get("content") or ""
        problems = []
        if len(content) > 2000:
            problems.append("content longer than 2000")
        rows = body.get("components") or []
        if len(rows) > 5:
            problems.append("more than 5 action rows")
        seen = set()
        for row in rows:
            if row.get("type") != 1 or len(row.get("components", [])) > 5:
                problems.append("bad action row")
            for c in row.get("components", []):
                if len(c.get("label") or "") > 80:
                    problems.append("label longer than 80")
                cid = c.get("custom_id") or ""
                if not 1 <= len(cid) <= 100 or cid in seen:
                    problems.append(f"bad custom_id {cid!r}")
                seen.add(cid)
        if sum(len(d) for d in uploads.values()) > SIZE_LIMIT:
            problems.append("files too large")
        if not content and not uploads and not rows and "attachments" not in body and "components" not in body:
            problems.append("empty message")
        if problems:
            raise http_error(400, 50035, "Invalid Form Body: " + "; ".join(problems))

    # -- REST ---------------------------------------------------------------------------------------

    async def rest(self, route: discord.http.Route, *, files: Any = None, form: list | None = None,
                   json: dict | None = None, **kwargs: Any) -> Any:
        body, uploads = self._read(json, form, files)
        method, path = route.method, route.path
        self.calls.append(Call(method, path, body, uploads))
        if (method, path) == ("GET", "/users/@me"):
            return dict(BOT_USER)
        if (method, path) == ("GET", "/oauth2/applications/@me"):
            return {"id": str(APP_ID), "name": "Draughts", "description": "", "icon": None, "bot_public": True,
                    "bot_require_code_grant": False, "owner": dict(USERS["ana"]), "verify_key": "ab" * 32,
                    "flags": 0, "summary": "", "team": None}
        if method == "PUT" and path == "/applications/{application_id}/commands":
            return [dict(c, id=str(self.snowflake()), application_id=str(APP_ID), version=str(self.snowflake()))
                    for c in body or []]
        if method == "PUT" and path == "/applications/{application_id}/guilds/{guild_id}/commands":
            return [dict(c, id=str(self.snowflake()), application_id=str(APP_ID), guild_id=str(route.guild_id),
                         version=str(self.snowflake())) for c in body or []]
        if (method, path) == ("POST", "/channels/{channel_id}/messages"):
            channel_id = int(route.channel_id)
            if channel_id in self.gone_channels:
                raise http_error(404, 10003, "Unknown Channel")
            self._validate(body, uploads)
            message = self.user_message(channel_id, (body or {}).get("content") or "", ephemeral=False,
                                        components=(body or {}).get("components"), files=uploads)
            self.messages[int(message["id"])] = Sent(message, False, channel_id)
            return message
        raise http_error(404, 0, f"404: Not Found ({method} {path})")

    # -- interactions and webhooks ---------------------------------------------------------------------------

    async def webhook(self, route: Any, session: Any = None, *, payload: dict | None = None,
                      multipart: list | None = None, files: Any = None, params: dict | None = None,
                      **kwargs: Any) -> Any:
        body, uploads = self._read(payload, multipart, files)
        method, path = route.method, route.path
        token = route.webhook_token
        self.calls.append(Call(method, path, body, uploads, token))
        state = self.interactions.get(token)
        if state is None:
            raise http_error(404, 10015, "Unknown Webhook")
        if path.endswith("/callback"):
            return self._callback(state, body or {}, uploads)
        if state.acked is None:
            raise http_error(404, 10015, "Unknown Webhook")
        if method == "POST" and path == "/webhooks/{webhook_id}/{webhook_token}":
            if self.fail_next_followups:
                self.fail_next_followups -= 1
                raise http_error(400, 50035, "Invalid Form Body")
            self._validate(body, uploads)
            if state.placeholder is not None:
                # The first followup after a deferral resolves the placeholder, keeping its visibility.
                message, state.placeholder = state.placeholder, None
                message.update(content=(body or {}).get("content") or "",
                               components=(body or {}).get("components") or [],
                               attachments=[self._attachment(n, d) for n, d in uploads.items()])
                sent = Sent(message, state.placeholder_ephemeral, state.channel_id, token)
            else:
                ephemeral = bool(int((body or {}).get("flags") or 0) & 64)
                message = self.user_message(state.channel_id, (body or {}).get("content") or "", ephemeral=ephemeral,
                                            components=(body or {}).get("components"), files=uploads)
                sent = Sent(message, ephemeral, state.channel_id, token)
            self.messages[sent.id] = sent
            return sent.message
        if path == "/webhooks/{webhook_id}/{webhook_token}/messages/@original":
            if state.message is not None:          # a component: @original is the clicked message
                target = self.messages.get(int(state.message["id"]))
                assert target is not None, "editing a message the fake never sent"
            elif state.placeholder is not None:
                target = Sent(state.placeholder, state.placeholder_ephemeral, state.channel_id, token)
                state.placeholder = None
            else:
                original = [s for s in self.messages.values() if s.token == token]
                if not original:
                    raise http_error(404, 10008, "Unknown Message")
                target = original[0]
            if method == "DELETE":
                self.messages.pop(target.id, None)
                return None
            self._validate(body, uploads)
            if "content" in (body or {}):
                target.message["content"] = body["content"] or ""
            if "components" in (body or {}):
                target.message["components"] = body["components"] or []
            if "attachments" in (body or {}) or uploads:
                target.message["attachments"] = [self._attachment(n, d) for n, d in uploads.items()]
            target.message["edited_timestamp"] = iso()
            self.messages[target.id] = target
            return target.message
        raise http_error(404, 0, f"404: Not Found ({method} {path})")

    def _callback(self, state: InteractionState, body: dict[str, Any], uploads: dict[str, bytes]) -> Any:
        age = time.time() - discord.utils.snowflake_time(state.id).timestamp()
        if age > 3.0:
            self.refused.append((state.token, 10062))
            raise http_error(404, 10062, "Unknown interaction")
        if state.acked is not None:
            self.refused.append((state.token, 40060))
            raise http_error(400, 40060, "Interaction has already been acknowledged.")
        kind = body["type"]
        state.acked = kind
        data = body.get("data") or {}
        ephemeral = bool(int(data.get("flags") or 0) & 64)
        interaction: dict[str, Any] = {"id": str(state.id), "type": 2 if state.message is None else 3}
        resource: dict[str, Any] = {"type": kind}
        if kind == 5:
            state.placeholder = self.user_message(state.channel_id, "", ephemeral=ephemeral, msg_type=20)
            state.placeholder_ephemeral = ephemeral
            interaction.update(response_message_id=state.placeholder["id"], response_message_loading=True,
                               response_message_ephemeral=ephemeral)
            resource["message"] = state.placeholder
        elif kind == 4:
            self._validate(data, uploads)
            message = self.user_message(state.channel_id, data.get("content") or "", ephemeral=ephemeral,
                                        components=data.get("components"), files=uploads, msg_type=20)
            self.messages[int(message["id"])] = Sent(message, ephemeral, state.channel_id, state.token)
            interaction.update(response_message_id=message["id"], response_message_loading=False,
                               response_message_ephemeral=ephemeral)
            resource["message"] = message
        return {"interaction": interaction, "resource": resource}

    # -- what the tests look at -----------------------------------------------------------------------

    def requests(self, token: str | None = None, method: str | None = None,
                 path_end: str | None = None) -> list[Call]:
        return [c for c in self.calls if (token is None or c.token == token) and (method is None or c.method == method)
                and (path_end is None or c.path.endswith(path_end))]

    def answers(self, token: str) -> list[Sent]:
        """The messages one interaction left, in order."""
        return [s for s in self.messages.values() if s.token == token]


# -- the harness ---------------------------------------------------------------------------------------


@pytest.fixture
def discord_errors(bot_errors):
    """ERROR records of the discord logger and ours (tests/conftest.py fails the test on any)."""
    return bot_errors


class Harness:
    def __init__(self, bot: DraughtsBot, fake: FakeDiscord, storage: Storage, now: list[float]) -> None:
        self.bot = bot
        self.fake = fake
        self.storage = storage
        self.now = now

    # -- payloads ----------------------------------------------------------------------------------------

    def _base(self, kind: int, user: str, *, locale: str, age: float, dm: bool,
              channel_id: int) -> dict[str, Any]:
        iid = self.fake.snowflake(age)
        token = f"aW50ZXJhY3Rpb246{iid}"
        payload: dict[str, Any] = {
            "id": str(iid), "application_id": str(APP_ID), "type": kind, "token": token, "version": 1,
            "locale": locale, "app_permissions": "2248473465835073", "attachment_size_limit": SIZE_LIMIT,
            "entitlements": [], "authorizing_integration_owners": {"0": str(GUILD_ID)},
        }
        if dm:
            payload.update(channel={"id": str(DM_CHANNEL_ID), "type": 1, "last_message_id": None, "flags": 0,
                                    "recipients": [USERS[user]]},
                           channel_id=str(DM_CHANNEL_ID), user=USERS[user], context=1)
        else:
            payload.update(
                guild_id=str(GUILD_ID), guild_locale="en-US", context=0,
                guild={"id": str(GUILD_ID), "locale": "en-US", "features": []},
                channel={"id": str(channel_id), "type": 0, "guild_id": str(GUILD_ID), "name": "draughts",
                         "position": 0, "permission_overwrites": [], "nsfw": False, "parent_id": None,
                         "topic": None, "last_message_id": None, "rate_limit_per_user": 0, "flags": 0,
                         "permissions": "2248473465835073"},
                channel_id=str(channel_id),
                member={"user": USERS[user], "roles": [], "joined_at": iso(1_600_000_000), "deaf": False,
                        "mute": False, "flags": 0, "nick": None, "avatar": None, "pending": False,
                        "permissions": "2248473465835073"},
            )
        self.fake.interactions[token] = InteractionState(iid, token, DM_CHANNEL_ID if dm else channel_id, None)
        return payload

    def slash_payload(self, name: str, user: str, options: dict[str, Any] | None = None, *, locale: str = "en-US",
                      age: float = 0.0, dm: bool = False, channel_id: int = CHANNEL_ID) -> dict[str, Any]:
        payload = self._base(2, user, locale=locale, age=age, dm=dm, channel_id=channel_id)
        opts, resolved = [], {}
        for key, value in (options or {}).items():
            if isinstance(value, bool):
                raise TypeError(key)
            if isinstance(value, Member):
                opts.append({"name": key, "type": 6, "value": uid(value.name)})
                resolved.setdefault("users", {})[uid(value.name)] = USERS[value.name]
                if dm:      # no members outside a server
                    continue
                resolved.setdefault("members", {})[uid(value.name)] = {
                    "roles": [], "joined_at": iso(1_600_000_000), "nick": None, "avatar": None, "flags": 0,
                    "pending": False, "permissions": "2248473465835073"}
            elif isinstance(value, int):
                opts.append({"name": key, "type": 4, "value": value})
            else:
                opts.append({"name": key, "type": 3, "value": value})
        data: dict[str, Any] = {"id": str(self.fake.snowflake()), "name": name, "type": 1, "options": opts}
        if resolved:
            data["resolved"] = resolved
        payload["data"] = data
        return payload

    def click_payload(self, custom_id: str, user: str, message: Sent, *, locale: str = "en-US",
                      age: float = 0.0) -> dict[str, Any]:
        payload = self._base(3, user, locale=locale, age=age, dm=False, channel_id=message.channel_id)
        payload["data"] = {"custom_id": custom_id, "component_type": 2}
        payload["message"] = json.loads(json.dumps(message.message))
        self.fake.interactions[payload["token"]].message = payload["message"]
        return payload

    # -- feeding ----------------------------------------------------------------------------------------

    async def feed(self, payload: dict[str, Any]) -> str:
        """INTERACTION_CREATE, then wait for every task it spawned; the interaction token."""
        before = asyncio.all_tasks()
        self.bot._connection.parse_interaction_create(payload)
        for _ in range(100):
            pending = [task for task in asyncio.all_tasks() - before
                       if task is not asyncio.current_task() and not task.done()]
            if not pending:
                break
            await asyncio.wait(pending, timeout=20)
        return payload["token"]

    async def slash(self, name: str, user: str, options: dict[str, Any] | None = None, **kw: Any) -> str:
        return await self.feed(self.slash_payload(name, user, options, **kw))

    async def click(self, custom_id: str, user: str, message: Sent, **kw: Any) -> str:
        return await self.feed(self.click_payload(custom_id, user, message, **kw))

    # -- shortcuts ------------------------------------------------------------------------------------

    def only_answer(self, token: str) -> Sent:
        answers = self.fake.answers(token)
        assert len(answers) == 1, [a.content for a in answers]
        return answers[0]

    async def new_game(self, white: str = "ana", black: str = "bob") -> tuple[int, Sent]:
        token = await self.slash("new", white, {"variant": "italian", "color": "white", "opponent": Member(black),
                                                 "move_time": "1h"})
        challenge = self.only_answer(token)
        cid = int(re.search(r"#(\d+)", challenge.content).group(1))
        token = await self.slash("accept", black, {"id": cid})
        board = self.only_answer(token)
        game_id = self.storage.challenge(cid)["game_id"]
        assert game_id is not None, board.content
        return game_id, board

    def legal(self, game_id: int) -> list[str]:
        row = self.storage.game(game_id)
        return [str(m) for m in Position.from_fen(row["variant"], row["fen"]).legal_moves()]


@dataclass(frozen=True)
class Member:
    """An @member option value in a slash payload."""

    name: str


@pytest.fixture
async def h(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, discord_errors):
    storage = Storage(tmp_path / "discord.db")
    now = [time.time()]
    service = GameService(storage, clock=lambda: now[0], rng=random.Random(1))
    bot = DraughtsBot(service)
    fake = FakeDiscord()
    monkeypatch.setattr(bot.http, "request", fake.rest)
    monkeypatch.setattr(discord.webhook.async_.AsyncWebhookAdapter, "request",
                        lambda adapter, route, session=None, **kw: fake.webhook(route, session, **kw))
    await bot.login(TOKEN)
    try:
        yield Harness(bot, fake, storage, now)
    finally:
        await bot.close()
        storage.close()
    assert not fake.refused, f"acknowledgements Discord would refuse: {fake.refused}"


# -- tests ---------------------------------------------------------------------------------------------


async def test_login_registers_the_persistent_buttons_and_no_privileged_intent(h: Harness):
    assert [c.path for c in h.fake.calls[:2]] == ["/users/@me", "/oauth2/applications/@me"]
    assert TEMPLATE in h.bot._connection._view_store._dynamic_items
    intents = h.bot.intents
    assert not (intents.members or intents.presences or intents.message_content)
    assert h.bot.deadline_loop.seconds == 30
    assert not h.bot.deadline_loop.is_running()     # starts on_ready, never for `sync`
    assert not h.fake.requests(method="PUT")        # no sync on start


async def test_new_then_accept_posts_a_board_with_persistent_buttons(h: Harness):
    token = await h.slash("new", "ana", {"variant": "italian", "color": "white", "opponent": Member("bob"),
                                         "move_time": "2h"})
    callback = h.fake.requests(token, path_end="/callback")
    assert [c.payload["type"] for c in callback] == [5]        # deferred first
    challenge = h.only_answer(token)
    assert not challenge.ephemeral
    assert "#1" in challenge.content and "@bob" in challenge.content
    assert challenge.custom_ids() == ["dr:acc:1", "dr:dec:1"]
    assert all(TEMPLATE.fullmatch(cid) for cid in challenge.custom_ids())
    stored = h.storage.challenge(1)
    assert stored["target_username"] == "bob" and stored["move_seconds"] == 7200 and stored["color"] == "white"

    token = await h.slash("accept", "bob", {"id": 1})
    board = h.only_answer(token)
    game_id = h.storage.challenge(1)["game_id"]
    assert game_id is not None
    assert f"#{game_id}" in board.content
    edit = h.fake.requests(token, method="PATCH")[-1]
    assert edit.files["board.png"].startswith(PNG)
    assert board.filenames() == ["board.png"]
    ids = board.custom_ids()
    assert ids and all(TEMPLATE.fullmatch(cid) and len(cid) <= 100 for cid in ids)
    assert all(cid.startswith(f"dr:s:{game_id}:0:") for cid in ids)
    assert len(board.message["components"]) <= 5
    # The board message is remembered for the game.
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(board.id)) == game_id
    assert h.storage.game(game_id)["white_name"] == "Ana"


async def test_move_command_plays_the_move(h: Harness):
    game_id, _ = await h.new_game()
    move = h.legal(game_id)[0]
    token = await h.slash("move", "ana", {"move": move, "game": game_id})
    answer = h.only_answer(token)
    assert h.storage.game(game_id)["ply"] == 1
    assert [m["notation"] for m in h.storage.moves(game_id)] == [move]
    assert move in answer.content and answer.filenames()[0] == "board.png"
    assert all(cid.startswith(f"dr:s:{game_id}:1:") for cid in answer.custom_ids())
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(answer.id)) == game_id


async def test_clicking_a_piece_edits_the_board_with_its_destinations(h: Harness):
    game_id, board = await h.new_game()
    piece = board.custom_ids()[0]
    posted_before = len(h.fake.messages)
    token = await h.click(piece, "ana", board)
    assert [c.payload["type"] for c in h.fake.requests(token, path_end="/callback")] == [6]   # deferred update
    edits = h.fake.requests(token, method="PATCH")
    assert len(edits) == 1 and edits[0].path.endswith("/messages/@original")
    assert edits[0].files["board.png"].startswith(PNG)
    assert not h.fake.requests(token, method="POST", path_end="{webhook_token}")   # no new message
    assert len(h.fake.messages) == posted_before
    edited = h.fake.messages[board.id]
    ids = edited.custom_ids()
    assert any(cid.startswith(f"dr:d:{game_id}:0:") for cid in ids)
    assert f"dr:p:{game_id}:0" in ids
    assert all(TEMPLATE.fullmatch(cid) for cid in ids)

    # Choosing a destination plays the move, again by editing the board.
    destination = next(cid for cid in ids if cid.startswith("dr:d:"))
    token = await h.click(destination, "ana", edited)
    assert h.storage.game(game_id)["ply"] == 1
    assert h.fake.requests(token, method="PATCH")
    assert all(cid.startswith(f"dr:s:{game_id}:1:") for cid in h.fake.messages[board.id].custom_ids())


async def test_stale_unknown_and_missing_button_ids_are_still_answered(h: Harness):
    game_id, board = await h.new_game()
    old_piece = board.custom_ids()[0]
    await h.slash("move", "ana", {"move": h.legal(game_id)[0]})
    assert h.storage.game(game_id)["ply"] == 1

    # A button of an old position: the service shows the current board in its place.
    token = await h.click(old_piece, "bob", board)
    assert h.fake.requests(token, path_end="/callback")[0].payload["type"] == 6
    assert t("en", "button.stale") in h.fake.messages[board.id].content

    # Garbage that is not even our prefix.
    token = await h.click("garbage!!", "bob", board)
    answer = h.only_answer(token)
    assert answer.ephemeral and h.fake.requests(token, method="POST")[-1].flags & 64
    assert answer.content == t("en", "button.invalid")

    # Our prefix and the template's characters, but nonsense, on a message that carries it.
    odd = json.loads(json.dumps(board.message))
    odd["components"][0]["components"][0]["custom_id"] = "dr:zz:qq"
    token = await h.click("dr:zz:qq", "bob", Sent(odd, False, CHANNEL_ID))
    assert len(h.fake.requests(token, path_end="/callback")) == 1
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.content == t("en", "button.invalid")

    # Our prefix, but nonsense; and an id the clicked message does not carry.
    for custom_id in ("dr:zz:qq", "dr:s:99:0:22"):
        token = await h.click(custom_id, "bob", board)
        assert h.fake.requests(token, path_end="/callback"), custom_id
        assert h.fake.answers(token) or h.fake.requests(token, method="PATCH"), custom_id


async def test_private_replies_are_ephemeral(h: Harness):
    game_id, board = await h.new_game()
    # A spectator types a move: the public "thinking" placeholder is removed, the answer is ephemeral.
    token = await h.slash("move", "cid", {"move": h.legal(game_id)[0], "game": game_id})
    assert h.fake.requests(token, method="DELETE")
    answer = h.only_answer(token)
    assert answer.ephemeral
    assert h.fake.requests(token, method="POST", path_end="{webhook_token}")[-1].flags & 64
    assert answer.content == t("en", "game.not_player", id=game_id)
    # A spectator clicks a piece: ephemeral followup, the board untouched.
    before = json.dumps(h.fake.messages[board.id].message)
    token = await h.click(board.custom_ids()[0], "cid", board)
    answer = h.only_answer(token)
    assert answer.ephemeral and h.fake.requests(token, method="POST")[-1].flags & 64
    assert json.dumps(h.fake.messages[board.id].message) == before
    assert h.storage.game(game_id)["ply"] == 0


async def test_deadline_work_posts_a_reminder_then_the_loss_on_time(h: Harness):
    game_id, _ = await h.new_game()
    h.now[0] += 3600 - 300       # a tenth of the hour is left
    assert await h.bot.post_deadlines() == 1
    posts = h.fake.requests(method="POST", path_end="/channels/{channel_id}/messages")
    assert len(posts) == 1
    reminder = posts[0].payload["content"]
    assert f"#{game_id}" in reminder and "Ana" in reminder
    sent = [s for s in h.fake.messages.values() if s.content == reminder][0]
    assert h.storage.game_of_message("discord", str(CHANNEL_ID), str(sent.id)) == game_id
    assert await h.bot.post_deadlines() == 0       # once only

    h.now[0] += 600
    assert await h.bot.post_deadlines() == 1
    final = h.fake.requests(method="POST", path_end="/channels/{channel_id}/messages")[-1]
    assert final.files["board.png"].startswith(PNG)
    assert h.storage.game(game_id)["status"] == "finished"


async def test_deadline_in_a_channel_that_is_gone_is_logged_and_skipped(h: Harness, caplog):
    await h.slash("new", "ana", {"color": "white", "move_time": "1h"}, channel_id=OTHER_CHANNEL_ID)
    await h.slash("accept", "bob", {}, channel_id=OTHER_CHANNEL_ID)
    game_id, _ = await h.new_game()
    h.fake.gone_channels.add(OTHER_CHANNEL_ID)
    h.now[0] += 3400
    with caplog.at_level(logging.WARNING):
        assert await h.bot.post_deadlines() == 1
    assert any(str(OTHER_CHANNEL_ID) in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    posts = [c for c in h.fake.requests(method="POST", path_end="/channels/{channel_id}/messages")]
    assert len(posts) == 2 and f"#{game_id}" in posts[-1].payload["content"]


async def test_spanish_locale_gets_spanish_answers(h: Harness):
    token = await h.slash("help", "ana", locale="es-ES")
    answer = h.only_answer(token)
    assert answer.ephemeral                              # help is for the one who asked
    assert answer.content == t("es", "help.text")[:2000]
    token = await h.slash("new", "ana", {"move_time": "2h"}, locale="es-ES")
    assert "#1" in h.only_answer(token).content
    assert h.only_answer(token).content != t("en", "new.open", name="Ana", id=1, target="", variant="", colors="",
                                             time="")
    assert h.storage.challenge(1)["variant"] == "spanish"   # Spanish speakers default to Spanish draughts


async def test_pdn_sends_a_file(h: Harness):
    game_id, _ = await h.new_game()
    move = h.legal(game_id)[0]
    await h.slash("move", "ana", {"move": move})
    token = await h.slash("pdn", "bob", {"game": game_id})
    answer = h.only_answer(token)
    upload = h.fake.requests(token, method="PATCH")[-1].files
    assert list(upload) == [f"game-{game_id}.pdn"]
    pdn = upload[f"game-{game_id}.pdn"].decode("utf-8")
    assert '[White "Ana"]' in pdn and move in pdn
    assert answer.filenames() == [f"game-{game_id}.pdn"]


async def test_other_commands_rebuild_the_typed_text(h: Harness):
    game_id, _ = await h.new_game()
    token = await h.slash("draw", "ana", {"game": game_id})
    offer = h.only_answer(token)
    assert offer.custom_ids() == [f"dr:dr:{game_id}:0"]
    token = await h.click(offer.custom_ids()[0], "bob", offer)
    assert h.storage.game(game_id)["status"] == "finished"
    token = await h.slash("games", "cid")
    assert h.only_answer(token).content == t("en", "games.empty")
    token = await h.slash("settings", "ana", {"key": "variant", "value": "spanish"})
    assert h.only_answer(token).content == t("en", "settings.variant_set", variant=variant_name("en", "spanish"))
    token = await h.slash("lang", "ana", {"language": "it"})
    assert h.only_answer(token).content == t("it", "lang.set")
    token = await h.slash("rules", "bob", {"variant": "triestina"})
    assert h.only_answer(token).content == t("it", "rules.triestina")[:2000]
    token = await h.slash("new", "ana", {"opponent": Member("bob")})
    challenge = h.storage.challenge(2)
    assert (challenge["target_username"], challenge["status"]) == ("bob", "open")
    assert "@bob" in h.only_answer(token).content
    token = await h.slash("decline", "bob", {})
    assert "#2" in h.only_answer(token).content
    assert h.storage.challenge(2)["status"] == "declined"
    await h.slash("new", "ana", {})
    token = await h.slash("cancel", "ana", {"id": 3})
    assert h.storage.challenge(3)["status"] == "cancelled"
    token = await h.slash("board", "cid", {"game": game_id})
    assert h.only_answer(token).filenames() == ["board.png"]
    token = await h.slash("resign", "cid", {})
    # Carl plays no game here: told so, and nothing changes.
    assert h.only_answer(token).content == t("it", "game.none")
    assert h.storage.game(game_id)["result_reason"] == "agreement"


async def test_direct_messages_are_private_chats(h: Harness):
    token = await h.slash("games", "ana", dm=True)
    assert h.only_answer(token).content
    chat = h.storage.chat("discord", str(DM_CHANNEL_ID))
    assert chat is not None and chat["kind"] == "private"


async def test_a_member_option_in_a_dm_is_answered_not_failed(h: Harness):
    token = await h.slash("new", "ana", {"opponent": Member("bob")}, dm=True)
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.content == t("en", "error.internal")
    assert h.storage.open_challenges("discord", str(DM_CHANNEL_ID)) == []


async def test_a_late_acknowledgement_is_rejected_and_nothing_is_done(h: Harness, caplog):
    with caplog.at_level(logging.WARNING):
        token = await h.slash("new", "ana", {}, age=5.0)
    callback = h.fake.requests(token, path_end="/callback")
    assert len(callback) == 1 and not h.fake.answers(token)
    assert h.storage.open_challenges("discord", str(CHANNEL_ID)) == []
    assert any("acknowledge" in r.getMessage() for r in caplog.records)
    assert h.fake.refused == [(token, 10062)]
    h.fake.refused.clear()


async def test_a_failure_while_answering_still_gets_an_ephemeral_answer(h: Harness, bot_errors):
    game_id, board = await h.new_game()
    h.fake.fail_next_followups = 1
    token = await h.click(board.custom_ids()[0], "cid", board)     # its private answer fails once
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.content == t("en", "error.internal")
    assert [r.name for r in bot_errors] == ["bot.platforms.discord.bot"]
    bot_errors.clear()       # the one expected error


async def test_an_unknown_slash_command_is_answered(h: Harness):
    token = await h.slash("oldcommand", "ana", {})
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.content == t("en", "error.internal")


async def test_the_fake_refuses_what_discord_refuses(h: Harness):
    token = await h.slash("games", "ana")
    channel = h.bot.get_partial_messageable(CHANNEL_ID)
    with pytest.raises(discord.HTTPException) as err:
        await channel.send("x" * 2001)
    assert err.value.code == 50035
    interaction_state = h.fake.interactions[token]
    with pytest.raises(discord.HTTPException) as err:
        h.fake._callback(interaction_state, {"type": 5}, {})
    assert err.value.code in (40060, 10062)
    h.fake.refused.clear()


def test_long_text_is_split_at_lines():
    text = "\n".join(f"line {i} " + "x" * 50 for i in range(100))
    chunks = split_text(text)
    assert len(chunks) > 1 and all(len(c) <= 2000 for c in chunks)
    assert "\n".join(chunks) == text
    assert all(len(c) <= 2000 for c in split_text("y" * 4500))
    assert "".join(split_text("y" * 4500)) == "y" * 4500


async def test_sync_uploads_the_commands_and_never_logs_the_token(tmp_path: Path, monkeypatch, caplog,
                                                                   discord_errors):
    fake = FakeDiscord()
    monkeypatch.setattr(discord.http.HTTPClient, "request", lambda http, route, **kw: fake.rest(route, **kw))
    storage = Storage(tmp_path / "sync.db")
    try:
        with caplog.at_level(logging.DEBUG):
            synced = await sync_tree(TOKEN, GameService(storage))
    finally:
        storage.close()
    put = fake.requests(method="PUT")
    assert len(put) == 1
    names = {c["name"] for c in put[0].payload}
    assert names == {"help", "rules", "new", "accept", "decline", "cancel", "move", "board", "resign", "draw",
                     "games", "pdn", "lang", "settings"}
    assert len(synced) == 14
    new = next(c for c in put[0].payload if c["name"] == "new")
    assert [(o["name"], o["type"]) for o in new["options"]] == [
        ("variant", 3), ("color", 3), ("opponent", 6), ("move_time", 3)]
    assert all(TOKEN not in r.getMessage() and TOKEN not in str(r.args) for r in caplog.records)
