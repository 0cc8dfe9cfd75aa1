"""The web board's server: one page per game, its state as JSON, moves and the rest as POSTs, and a
server-sent event stream that brings every change within a second (docs/web.md).

It runs in the event loop of whatever starts it (an adapter's, or its own thread for
``python -m bot web``): ``start_web(service, config)`` and ``stop_web(server)``.  Every call into
the service (the database) goes to the board's own worker threads, so the loop never waits for a
lock and the chats' executor never waits for the board; the event streams are fed by one reader
per game (``hub.py``).
"""

from __future__ import annotations

import asyncio
import errno
import functools
import html
import ipaddress
import json
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from aiohttp import web

from bot import config as env_config
from bot.i18n import pick_language, t
from bot.platforms.web.auth import INIT_DATA_MAX_AGE, InitDataRefused, verify_init_data
from bot.platforms.web.hub import Listener, StreamHub, at, listen
from bot.platforms.web.icon import ico
from bot.service import GameService
from bot.service.web import (
    WATCH_MAC,
    BoardAnswer,
    BoardState,
    LinkRefused,
    Seat,
    StormPage,
    TournamentView,
    Watch,
    page_texts,
    storm_texts,
    tournament_texts,
)

log = logging.getLogger("bot.web")

DEFAULT_PORT = 8080
# How often a game's stream feed reads its version when nothing told it of a change (moves made by
# another process sharing an SQLite file show within this, plus the time to build the state); one
# read per game, whatever the number of its streams.
POLL_SECONDS = 0.5
# The same while the database announces every change (PostgreSQL's NOTIFY): a safety net only.
NOTIFIED_POLL_SECONDS = 5.0
# Open event streams allowed at once: in all, per game, per client address (more: 429).
MAX_STREAMS = 2000
STREAMS_PER_GAME = 200
STREAMS_PER_CLIENT = 20
# Worker threads of the board's requests, and of the stream feeds' reads (apart from the loop's
# default executor, where the chats' handlers run: the board never makes a chat wait).
REQUEST_THREADS = 4
FEED_THREADS = 2
# A resource limit met while accepting connections (out of file descriptors) is logged this often.
ACCEPT_LOG_SECONDS = 60.0
# A comment line this often keeps proxies from closing an idle stream.
KEEPALIVE_SECONDS = 15.0
# Bodies are a move or nothing.
MAX_BODY = 16 * 1024
# The longest path a move can have (a capture of every piece of a 10x10 side, and then some).
MAX_PATH = 24

SITE: web.AppKey[BoardSite] = web.AppKey("board_site")
STATIC = {"board.js": "application/javascript", "analysis.js": "application/javascript",
          "board.css": "text/css", "a11y.js": "application/javascript",
          "tournament.js": "application/javascript", "tournament.css": "text/css",
          "storm.js": "application/javascript", "storm.css": "text/css"}
GAME_ID = r"{game:[0-9]{1,9}}"
TOURNAMENT_ID = r"{tournament:[0-9]{1,9}}"
STORM_ID = r"{run:[0-9]{1,9}}"
# A game named by the Mini App's launch: ``g<id>`` (a direct link's startapp), ``<id>`` (a web_app
# button's ``?g=``), either followed by ``s<mac>``, the game's spectator signature, and by
# ``p<ply>``, the ply a Review button opens the page at (the page reads it; the session ignores it).
_LAUNCH_GAME = re.compile(r"g?([0-9]{1,9})(?:s(" + WATCH_MAC + "))?(?:p[0-9]{1,6})?")
# What a body that is not JSON (or nests deeper than the parser goes) is read as.
_NOT_JSON = object()


# A web setting that cannot be used; the message names the variable.
ConfigProblem = env_config.ConfigError


@dataclass(frozen=True)
class WebConfig:
    """Where and how the board is served.  ``public_url``: how links name this server (behind a
    proxy, say), else ``http://host:port``; ``telegram_token``: when set, Telegram Mini App initData
    (header ``X-Telegram-Init-Data``) gives the seat of a Telegram player."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    public_url: str | None = None
    poll_seconds: float = POLL_SECONDS
    keepalive_seconds: float = KEEPALIVE_SECONDS
    telegram_token: str | None = field(default=None, repr=False)
    max_streams: int = MAX_STREAMS
    streams_per_game: int = STREAMS_PER_GAME
    streams_per_client: int = STREAMS_PER_CLIENT
    # Peers whose X-Forwarded-For names the client (a proxy in front); loopback ones always are.
    trusted_proxies: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, default_host: str = "127.0.0.1", environ: Mapping[str, str] | None = None) -> WebConfig:
        """The board's settings in ``environ`` (the entry point's ``Config.environ``; None: every
        default), parsed by ``bot.config.web``: ``$PORT`` (default 8080; ``$WEB_PORT`` instead where
        ``$PORT`` is another server's, such as Telegram's webhook), ``$WEB_HOST`` (default
        ``default_host``: 127.0.0.1 for the local console, 0.0.0.0 for a platform), ``$WEB_URL``
        (the public address, for links)."""
        given = env_config.web(environ or {})
        return cls(host=given.host or default_host, port=given.port, public_url=given.url,
                   trusted_proxies=given.trusted_proxies, max_streams=given.max_streams,
                   streams_per_game=given.streams_per_game, streams_per_client=given.streams_per_client)


@dataclass
class WebServer:
    """A running board server: ``url`` is its address for links (the port actually bound when 0
    was asked for)."""

    runner: web.AppRunner
    url: str
    port: int

    async def stop(self) -> None:
        await stop_web(self)


@dataclass
class _Streams:
    """What wakes the event streams' game feeds (the stream hub) when the service says something
    changed."""

    # Each game feed's wake-up, with its game.
    wakes: dict[asyncio.Event, int] = field(default_factory=dict)
    closing: bool = False
    loop: asyncio.AbstractEventLoop | None = None
    # Which games changed since the last look (the board layer's ``take_changed``).
    taken: Callable[[], set[int]] = field(default=set)

    def wake_all(self) -> None:
        self.wake(set())

    def wake(self, games: set[int]) -> None:
        """Wake the streams of ``games`` (every stream when it is empty: a change of another kind)."""
        for event, game in list(self.wakes.items()):
            if not games or game in games:
                event.set()

    def changed(self, platform: str) -> None:
        """The service's listener (any thread): the feeds of the games that changed look again now
        (a feed polls or hears its game anyway, for what other processes change)."""
        loop = self.loop
        if loop is None or self.closing or loop.is_closed():
            return
        games = self.taken()
        try:
            loop.call_soon_threadsafe(self.wake, games)
        except RuntimeError:
            pass                    # the loop closed meanwhile


def _resource(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


# The page runs only its own script and style (the boot data rides in an attribute, not an inline
# script); a seat token in the address is never sent on as a referrer.  Framing stays allowed:
# Telegram's web client opens a Mini App in a frame.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


_T = TypeVar("_T")


class _AcceptErrors:
    """The loop's exception handler while the board serves: a connection not accepted for want of
    a resource (out of file descriptors: EMFILE) is logged at most once a minute, with how many
    more there were; asyncio stops accepting for a second and tries again by itself.  Anything
    else goes to the handler that was there before."""

    RESOURCE = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.previous = loop.get_exception_handler()
        self.logged: float | None = None
        self.unlogged = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        err = context.get("exception")
        if isinstance(err, OSError) and err.errno in self.RESOURCE and "accept" in str(context.get("message", "")):
            now = time.monotonic()
            if self.logged is not None and now - self.logged < ACCEPT_LOG_SECONDS:
                self.unlogged += 1
                return
            log.error("web board: a connection cannot be accepted: %s (%s more since the last such line); "
                      "raise the open-files limit (ulimit -n) or lower WEB_MAX_STREAMS",
                      err.strerror or err, self.unlogged)
            self.logged, self.unlogged = now, 0
            return
        if self.previous is not None:
            self.previous(loop, context)
        else:
            loop.default_exception_handler(context)

    def remove(self) -> None:
        if self.loop.get_exception_handler() is self:
            self.loop.set_exception_handler(self.previous)


class BoardSite:
    """The handlers, on one service."""

    def __init__(self, service: GameService, config: WebConfig) -> None:
        self.service = service
        self.board = service.web
        self.config = config
        self.streams = _Streams(taken=service.web.take_changed)
        self.page_template = _resource("page.html")
        self.tournament_template = _resource("tournament.html")
        self.storm_template = _resource("storm.html")
        self.static = {name: _resource(name).encode("utf-8") for name in STATIC}
        self.requests = ThreadPoolExecutor(REQUEST_THREADS, thread_name_prefix="web-board")
        self.feed_pool = ThreadPoolExecutor(FEED_THREADS, thread_name_prefix="web-feed")
        self.hub = StreamHub(service.web, self.feed_pool, config.poll_seconds, NOTIFIED_POLL_SECONDS,
                             self.streams.wakes)
        self.open_streams = 0
        self.client_streams: Counter[str] = Counter()
        self._listener: Listener | None = None
        self._accept_errors: _AcceptErrors | None = None
        service.add_listener(self.streams.changed)

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` in the board's own worker threads."""
        return await asyncio.get_running_loop().run_in_executor(self.requests, functools.partial(fn, *args))

    async def on_startup(self, _app: web.Application) -> None:
        loop = asyncio.get_running_loop()
        self.streams.loop = loop
        self._accept_errors = _AcceptErrors(loop)
        loop.set_exception_handler(self._accept_errors)

        def changed(game_id: int | None) -> None:      # the listener's thread
            if not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(self.hub.wake, set() if game_id is None else {game_id})
                except RuntimeError:
                    pass                    # the loop closed meanwhile
        self._listener = listener = listen(self.service.storage, changed)
        if listener is not None:
            self.hub.notified = lambda: listener.live

    async def on_cleanup(self, _app: web.Application) -> None:
        if self._listener is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._listener.stop)
        if self._accept_errors is not None:
            self._accept_errors.remove()
        self.requests.shutdown(wait=False, cancel_futures=True)
        self.feed_pool.shutdown(wait=False, cancel_futures=True)

    def _client(self, request: web.Request) -> str:
        """The client's address: the peer's, or the last X-Forwarded-For entry a trusted proxy (a
        loopback peer, or one named in WEB_TRUSTED_PROXIES) added."""
        peer = request.remote or ""
        forwarded = request.headers.get("X-Forwarded-For", "")
        if forwarded and (peer in self.config.trusted_proxies or _loopback(peer)):
            return forwarded.rsplit(",", 1)[-1].strip()[:64] or peer
        return peer

    # -- who is asking ----------------------------------------------------------------------------------

    def _token(self, request: web.Request) -> str | None:
        header = request.headers.get("Authorization", "")
        if header.lower().startswith("bearer "):
            return header[7:].strip() or None
        return request.query.get("t") or None

    def _credential(self, request: web.Request, game_id: int) -> Seat | Watch | LinkRefused | None:
        """The seat or spectator's view a request holds (a signed link, else Telegram initData of a
        player when enabled), why its credential gives none, or None: no credential (nothing may be
        seen: a game's number alone is no link)."""
        token = self._token(request)
        if token is not None:
            return self.board.read_token(token)
        init = request.headers.get("X-Telegram-Init-Data")
        if init and self.config.telegram_token:
            user = verify_init_data(init, self.config.telegram_token, now=self.service.clock())
            if isinstance(user, InitDataRefused):
                return LinkRefused(user.reason)
            if not self.board.plays(game_id, "telegram", str(user.id)):
                return None             # anyone in Telegram may sign in; only players see a game so
            return Seat(game_id, "telegram", str(user.id), float(user.auth_date + INIT_DATA_MAX_AGE))
        return None

    async def _who(self, request: web.Request, game_id: int) -> tuple[Seat | None, str, _Refusal | None]:
        """The seat (None: a spectator's view), the language, and the refusal to send instead when
        the credential is missing, forged, expired, revoked or another game's."""
        asked = request.query.get("lang") or request.headers.get("Accept-Language", "")[:2] or None
        lang, found = await self._call(lambda: (self.board.language(game_id, asked),
                                                 self._credential(request, game_id)))
        if found is None:
            return None, lang, _Refusal(403, "need_link", t(lang, "web.need_link"))
        if isinstance(found, LinkRefused):
            return None, lang, _Refusal(401, "link_" + found.reason, t(lang, found.key))
        if found.game_id != game_id:
            return None, lang, _Refusal(403, "other_game", t(lang, "web.other_game"))
        return (found if isinstance(found, Seat) else None), lang, None

    # -- pages and state --------------------------------------------------------------------------------

    async def page(self, request: web.Request) -> web.Response:
        game_id = int(request.match_info["game"])
        _seat, lang, refusal = await self._who(request, game_id)
        if refusal is not None:
            # Why, in words, and nothing of the game (not even whether it exists).
            return web.Response(status=refusal.status, text=refusal.message, headers=PAGE_HEADERS)
        exists = await self._call(self.board.version, game_id)
        if exists is None:
            return web.Response(status=404, text=t(lang, "web.no_game"), headers=PAGE_HEADERS)
        return self._page(lang, t(lang, "web.title", id=game_id), {"game": game_id})

    def _page(self, lang: str, title: str, boot_extra: dict[str, Any]) -> web.Response:
        boot = json.dumps({**boot_extra, "lang": lang, "texts": _texts(lang)}, ensure_ascii=False,
                          separators=(",", ":"))
        body = (self.page_template.replace("{{lang}}", lang).replace("{{title}}", html.escape(title))
                .replace("{{boot}}", html.escape(boot, quote=True)))
        return web.Response(text=body, content_type="text/html", headers=PAGE_HEADERS)

    # -- a tournament's standings and pairings ----------------------------------------------------------

    async def _tournament_view(self, request: web.Request) -> tuple[TournamentView | _Refusal, str]:
        """The tournament's view and the language, or the refusal: no valid link to it (a
        tournament's number alone shows nothing), or no such tournament."""
        tid = int(request.match_info["tournament"])
        asked = request.query.get("lang") or None
        token = self._token(request)
        if not await self._call(self.board.tournament_signed, tid, token):
            lang = pick_language(asked or request.headers.get("Accept-Language", "")[:2] or None)
            if token is None:
                return _Refusal(403, "need_link", t(lang, "webt.need_link")), lang
            return _Refusal(401, "link_invalid", t(lang, "webt.link_invalid")), lang

        view = await self._call(self.board.tournament, tid, asked)
        if view is None:
            lang = pick_language(asked or request.headers.get("Accept-Language", "")[:2] or None)
            return _Refusal(404, "no_tournament", t(lang, "webt.no_tournament")), lang
        return view, view.lang

    async def tournament_page(self, request: web.Request) -> web.Response:
        """The tournament's page: its standings and rounds drawn by ``tournament.js`` from the view
        in the boot data, which then asks ``/api/t/<id>`` again now and then (a result shows by itself)."""
        view, lang = await self._tournament_view(request)
        if isinstance(view, _Refusal):
            # Why, in words, and nothing of the tournament.
            return web.Response(status=view.status, text=view.message, headers=PAGE_HEADERS)
        boot = json.dumps({"tournament": view.id, "lang": lang, "texts": tournament_texts(lang),
                           "view": view.to_json()}, ensure_ascii=False, separators=(",", ":"))
        body = (self.tournament_template.replace("{{lang}}", lang).replace("{{title}}", html.escape(view.title))
                .replace("{{boot}}", html.escape(boot, quote=True)))
        return web.Response(text=body, content_type="text/html", headers=PAGE_HEADERS)

    async def tournament_data(self, request: web.Request) -> web.Response:
        view, _lang = await self._tournament_view(request)
        if isinstance(view, _Refusal):
            return view.json()
        return web.json_response({"ok": True, "tournament": view.to_json()}, headers={"Cache-Control": "no-store"})

    # -- a storm run (issue 33) ----------------------------------------------------------------------

    async def _storm_access(self, request: web.Request) -> tuple[StormPage, int, str, _Refusal | None]:
        """The storm page, the run, the language, and the refusal to send instead: no link (a
        run's number alone shows nothing), a forged one or another run's, or no such run; each
        before anything of the run is read or said."""
        page = self.board.storm
        if page is None:
            raise web.HTTPNotFound()
        run_id = int(request.match_info["run"])
        asked = request.query.get("lang") or request.headers.get("Accept-Language", "")[:2] or None
        token = self._token(request)
        refused = await self._call(page.check, run_id, token)
        if refused is not None:
            lang = pick_language(asked)
            return page, run_id, lang, _Refusal(refused.status, refused.reason, t(lang, refused.key))
        lang = await self._call(page.language, run_id, asked)
        return page, run_id, lang, None

    async def storm_page(self, request: web.Request) -> web.Response:
        """A storm run's page: the puzzle of the moment and the clock, drawn by ``storm.js`` from
        the state in the boot data; its answers go to ``/api/storm/<id>/move``."""
        page, run_id, lang, refusal = await self._storm_access(request)
        if refusal is not None:
            return web.Response(status=refusal.status, text=refusal.message, headers=PAGE_HEADERS)
        state = await self._call(page.state, run_id, lang)
        if state is None:
            return web.Response(status=404, text=t(lang, "storm.no_run"), headers=PAGE_HEADERS)
        title = t(lang, "storm.page.title")
        boot = json.dumps({"run": run_id, "lang": lang, "texts": storm_texts(lang), "state": state},
                          ensure_ascii=False, separators=(",", ":"))
        body = (self.storm_template.replace("{{lang}}", lang).replace("{{title}}", html.escape(title))
                .replace("{{boot}}", html.escape(boot, quote=True)))
        return web.Response(text=body, content_type="text/html", headers=PAGE_HEADERS)

    async def storm_data(self, request: web.Request) -> web.Response:
        page, run_id, lang, refusal = await self._storm_access(request)
        if refusal is not None:
            return refusal.json()
        state = await self._call(page.state, run_id, lang)
        if state is None:
            return _error(404, "no_run", t(lang, "storm.no_run"))
        return web.json_response({"ok": True, "state": state}, headers={"Cache-Control": "no-store"})

    async def storm_move(self, request: web.Request) -> web.Response:
        """An answer: ``{"index": puzzle, "ply": moves played in it, "path": [squares]}`` or
        ``"move": "22-18"`` instead of the path.  Judged by the server's clock and the run as
        stored: too late, or for a puzzle or position the run has left, changes nothing (409)."""
        page, run_id, lang, refusal = await self._storm_access(request)
        if refusal is not None:
            return refusal.json()
        body = await _read_json(request)
        bad = _error(400, "bad_request", t(lang, "web.bad_request"))
        if not isinstance(body, dict):
            return bad
        index, ply, path, text = body.get("index"), body.get("ply"), body.get("path"), body.get("move")
        if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 10_000 for n in (index, ply)):
            return bad
        if path is not None and not (isinstance(path, list) and 2 <= len(path) <= MAX_PATH
                                     and all(isinstance(s, int) and not isinstance(s, bool) and 0 < s < 1000
                                             for s in path)):
            return bad
        if (path is None) == (text is None) or (text is not None and not isinstance(text, str)):
            return bad
        found = await self._call(page.answer, run_id, lang, index, ply, path, text)
        if found is None:
            return _error(404, "no_run", t(lang, "storm.no_run"))
        status, answer = found
        return web.json_response(answer, status=status, headers={"Cache-Control": "no-store"})

    # -- Telegram's Mini App ------------------------------------------------------------------------------

    async def mini_app(self, request: web.Request) -> web.Response:
        """The Mini App's page (the URL given to @BotFather is ``WEB_URL/tg``): the same page, which
        reads Telegram's launch parameters from its address and asks ``/api/tg/session`` for its
        game and seat."""
        lang = pick_language(request.query.get("lang") or request.headers.get("Accept-Language", "")[:2] or None)
        return self._page(lang, t(lang, "web.tg_title"), {"game": None, "tg": True})

    async def tg_session(self, request: web.Request) -> web.Response:
        """``{"initData": ..., "game": N?}`` from the Mini App: Telegram's signed initData (checked
        with the bot token) says who opened it and, from a direct link, which game (``start_param``
        ``g<id>``; else ``game``), with its spectator signature (``g<id>s<mac>``) for one who does
        not play it.  initData is taken at most ``INIT_DATA_MAX_AGE`` (an hour) old.  The answer:
        the game, and a seat token when that user plays it (``SESSION_SECONDS`` from when Telegram
        signed initData; null for a spectator), and ``watch``, a spectator token, for one who does
        not.  Nothing is written either way."""
        asked = request.query.get("lang") or request.headers.get("Accept-Language", "")[:2] or None
        body = await _read_json(request)
        if not isinstance(body, dict) or not isinstance(body.get("initData"), str):
            lang = pick_language(asked)
            return _error(400, "bad_request", t(lang, "web.bad_request"))
        init = body["initData"]
        # The language is only how the refusal is worded: read before the check, trusted for nothing.
        lang = pick_language(_claimed_language(init) or asked)
        token = self.config.telegram_token
        if not token:
            return _error(404, "tg_off", t(lang, "web.tg_off"))
        user = verify_init_data(init, token, now=self.service.clock())
        if isinstance(user, InitDataRefused):
            return _error(401, "tg_" + user.reason, t(lang, f"web.tg_{user.reason}"))
        lang = pick_language(user.language or asked)
        launch = _game_param(user.start_param) or _game_param(body.get("game"))
        if launch is None:
            return _error(400, "tg_no_game", t(lang, "web.tg_no_game"))
        game_id, mac = launch
        if await self._call(self.board.version, game_id) is None:
            return _error(404, "no_game", t(lang, "web.no_game"))
        seat: str | None = None
        watch: str | None = None
        if await self._call(self.board.plays, game_id, "telegram", str(user.id)):
            seat = await self._call(self.board.session_token, game_id, "telegram", str(user.id),
                                           float(user.auth_date))
        elif await self._call(self.board.watch_signed, game_id, mac):
            watch = await self._call(self.board.watch_token, game_id)
        else:
            return _error(403, "need_link", t(lang, "web.need_link"))
        return web.json_response({"ok": True, "game": game_id, "token": seat, "watch": watch, "lang": lang,
                                  "title": t(lang, "web.title", id=game_id), "texts": _texts(lang)},
                                 headers={"Cache-Control": "no-store"})

    async def static_file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in self.static:
            raise web.HTTPNotFound()
        return web.Response(body=self.static[name], content_type=STATIC[name],
                            headers={"Cache-Control": "public, max-age=300"})

    async def favicon(self, _request: web.Request) -> web.Response:
        return web.Response(body=ico(), content_type="image/x-icon",
                            headers={"Cache-Control": "public, max-age=86400"})

    async def state(self, request: web.Request) -> web.Response:
        game_id = int(request.match_info["game"])
        seat, lang, refusal = await self._who(request, game_id)
        if refusal is not None:
            return refusal.json()
        state = await self._call(self.board.state, game_id, seat, lang)
        if state is None:
            return _error(404, "no_game", t(lang, "web.no_game"))
        return web.json_response({"ok": True, "state": state.to_json()}, headers={"Cache-Control": "no-store"})

    async def pdn(self, request: web.Request) -> web.Response:
        game_id = int(request.match_info["game"])
        _seat, _lang, refusal = await self._who(request, game_id)
        if refusal is not None:
            return refusal.json()
        found = await self._call(self.board.pdn, game_id)
        if found is None:
            raise web.HTTPNotFound()
        name, text = found
        return web.Response(text=text, content_type="application/x-draughts-pdn", charset="utf-8",
                            headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def moves(self, request: web.Request) -> web.Response:
        """The game's plies as played (docs/web.md): for other clients and the page's move list."""
        game_id = int(request.match_info["game"])
        _seat, lang, refusal = await self._who(request, game_id)
        if refusal is not None:
            return refusal.json()
        found = await self._call(self.board.record, game_id)
        if found is None:
            return _error(404, "no_game", t(lang, "web.no_game"))
        return web.json_response({"ok": True, **found.to_json(lang)}, headers={"Cache-Control": "no-store"})

    async def ply(self, request: web.Request) -> web.Response:
        """The position after ply ``n`` (0: the first position): FEN, pieces by square, whose turn,
        and the move that led to it."""
        game_id = int(request.match_info["game"])
        _seat, lang, refusal = await self._who(request, game_id)
        if refusal is not None:
            return refusal.json()
        text = request.match_info["n"]
        if not (text.isascii() and text.isdigit()) or len(text) > 6:
            return _error(400, "bad_ply", t(lang, "web.bad_ply"))
        found = await self._call(self.board.record, game_id)
        if found is None:
            return _error(404, "no_game", t(lang, "web.no_game"))
        shown = found.at(int(text), lang)
        if shown is None:
            return _error(404, "no_ply", t(lang, "web.no_ply"))
        return web.json_response({"ok": True, "plies": len(found.plies), **shown},
                                 headers={"Cache-Control": "no-store"})

    async def analysis(self, request: web.Request) -> web.Response:
        """The game's stored analysis as the page draws it (docs/web.md); the same access rule as
        the moves."""
        game_id = int(request.match_info["game"])
        seat, lang, refusal = await self._who(request, game_id)
        if refusal is not None:
            return refusal.json()
        found = await self._call(self.board.analysis_view, game_id, seat, lang)
        if found is None:
            return _error(404, "no_game", t(lang, "web.no_game"))
        return web.json_response({"ok": True, **found}, headers={"Cache-Control": "no-store"})

    async def request_analysis(self, request: web.Request) -> web.Response:
        """A player asks for the finished game's analysis (the chat's /analysis, its limits and queue)."""
        game_id = int(request.match_info["game"])
        seat, lang, refusal = await self._who(request, game_id)
        if refusal is not None:
            return refusal.json()
        if seat is None:
            return _error(403, "spectator", t(lang, "web.spectator_only"))
        outcome, message = await self._call(self.board.request_analysis, seat, lang)
        if outcome != "started":
            return _error(403 if outcome == "forbidden" else 409, outcome, message)
        return web.json_response({"ok": True, "outcome": outcome, "message": message})

    async def events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: the state now, then again each time the game's version changes (from
        the game's feed in the stream hub: this handler reads nothing itself); a finished game's
        stream gets its final state and ends.  Too many streams open (in all, on this game, from
        this client) is a 429."""
        game_id = int(request.match_info["game"])
        client = self._client(request)
        config = self.config
        if (self.open_streams >= config.max_streams or self.hub.count(game_id) >= config.streams_per_game
                or self.client_streams[client] >= config.streams_per_client):
            lang = pick_language(request.query.get("lang") or request.headers.get("Accept-Language", "")[:2] or None)
            busy = _error(429, "too_many_streams", t(lang, "web.too_many_streams"))
            busy.headers["Retry-After"] = "30"
            return busy
        # Counted from here (before any wait), so streams opened at once cannot pass a cap together.
        self.open_streams += 1
        self.client_streams[client] += 1
        sub = None
        try:
            seat, lang, refusal = await self._who(request, game_id)
            if refusal is not None:
                return refusal.json()
            if self.hub.closing:
                raise web.HTTPServiceUnavailable()
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                                                   "X-Accel-Buffering": "no"})
            await response.prepare(request)
            sub = self.hub.subscribe(game_id, seat, lang)
            written: int | None = None
            while True:
                sub.event.clear()
                if sub.data is not None and sub.version != written:
                    written = sub.version
                    await response.write(at(sub.data, self.service.clock()))
                if sub.done:
                    break
                try:
                    await asyncio.wait_for(sub.event.wait(), config.keepalive_seconds)
                except TimeoutError:
                    await response.write(b": keepalive\n\n")
        except (ConnectionResetError, ConnectionError):
            pass                        # the page went away
        finally:
            if sub is not None:
                self.hub.unsubscribe(sub)
            self.open_streams -= 1
            self.client_streams[client] -= 1
            if self.client_streams[client] <= 0:
                del self.client_streams[client]
        return response

    # -- acting -------------------------------------------------------------------------------------------

    async def _act(self, request: web.Request,
                   act: Callable[[Seat, str, dict[str, Any]], BoardAnswer | web.Response]) -> web.Response:
        game_id = int(request.match_info["game"])
        seat, lang, refusal = await self._who(request, game_id)
        if refusal is not None:
            return refusal.json()
        if seat is None:
            return _error(403, "spectator", t(lang, "web.spectator_only"))
        body: dict[str, Any] = {}
        if request.can_read_body:
            parsed = await _read_json(request)
            if not isinstance(parsed, dict):
                return _error(400, "bad_request", t(lang, "web.bad_request"))
            body = parsed
        answer = await self._call(act, seat, lang, body)
        if isinstance(answer, web.Response):
            return answer
        return _answer(answer)

    async def move(self, request: web.Request) -> web.Response:
        def run(seat: Seat, lang: str, body: dict[str, Any]) -> BoardAnswer | web.Response:
            path, text, ply = body.get("path"), body.get("move"), body.get("ply")
            if path is not None and not (isinstance(path, list) and 2 <= len(path) <= MAX_PATH
                                         and all(isinstance(s, int) and not isinstance(s, bool) and 0 < s < 1000
                                                 for s in path)):
                return _error(400, "bad_request", t(lang, "web.bad_request"))
            if (path is None) == (text is None) or (text is not None and not isinstance(text, str)):
                return _error(400, "bad_request", t(lang, "web.bad_request"))
            if ply is not None and (not isinstance(ply, int) or isinstance(ply, bool)):
                return _error(400, "bad_request", t(lang, "web.bad_request"))
            return self.board.move(seat, lang, path=path, text=text, ply=ply)
        return await self._act(request, run)

    async def draw(self, request: web.Request) -> web.Response:
        return await self._act(request, lambda seat, lang, _body: self.board.draw(seat, lang))

    async def resign(self, request: web.Request) -> web.Response:
        def run(seat: Seat, lang: str, body: dict[str, Any]) -> BoardAnswer | web.Response:
            # The page asks the player first; a request without the confirmation resigns nothing.
            if body.get("confirm") is not True:
                return _error(400, "confirm_needed", t(lang, "web.confirm_needed"))
            return self.board.resign(seat, lang)
        return await self._act(request, run)

    async def on_shutdown(self, _app: web.Application) -> None:
        self.streams.closing = True
        self.hub.close()


@dataclass(frozen=True)
class _Refusal:
    """Why a request sees nothing: its status, reason (machine-readable) and message (worded)."""

    status: int
    reason: str
    message: str

    def json(self) -> web.Response:
        return _error(self.status, self.reason, self.message)


_STATUS = {"ok": 200, "illegal": 422, "refused": 409, "forbidden": 403, "busy": 503, "failed": 500}


def _answer(answer: BoardAnswer) -> web.Response:
    state: BoardState | None = answer.state
    body = {"ok": answer.outcome == "ok", "outcome": answer.outcome, "message": answer.message,
            "state": state.to_json() if state is not None else None}
    if answer.outcome != "ok":
        body["error"] = answer.message
    return web.json_response(body, status=_STATUS.get(answer.outcome, 500))


def _texts(lang: str) -> dict[str, str]:
    """The page's words: the board layer's, and the chat's line for a move played, its {name},
    {move} and {id} left for the page to fill in (the message line says each move as the chat does)."""
    return {**page_texts(lang), "move_played": t(lang, "move.played", name="{name}", move="{move}", id="{id}")}


async def _read_json(request: web.Request) -> Any:
    """The request's JSON body; ``_NOT_JSON`` when it is none (not JSON, not UTF-8, or nested
    deeper than the parser recurses: a bad request like any other, not a server error)."""
    if not request.can_read_body:
        return None
    try:
        return await request.json()
    except (ValueError, RecursionError):
        return _NOT_JSON


def _game_param(value: object) -> tuple[int, str | None] | None:
    """A game named by the Mini App's launch, with the spectator signature it carries (None when
    it carries none): ``g<id>[s<mac>]`` (startapp), ``<id>[s<mac>]``, or a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (value, None) if 0 < value < 10**9 else None
    if isinstance(value, str):
        found = _LAUNCH_GAME.fullmatch(value)
        if found is not None and int(found[1]) > 0:
            return int(found[1]), found[2]
    return None


def _claimed_language(init_data: str) -> str | None:
    """The language initData's user claims, unverified (only to word a refusal)."""
    try:
        user = json.loads(dict(parse_qsl(init_data[:8192])).get("user", ""))
        code = user.get("language_code") if isinstance(user, dict) else None
    except (ValueError, RecursionError):
        return None
    return code if isinstance(code, str) else None


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _error(status: int, reason: str, message: str) -> web.Response:
    return web.json_response({"ok": False, "reason": reason, "error": message}, status=status)


def make_app(service: GameService, config: WebConfig | None = None) -> web.Application:
    """The board's aiohttp application on ``service`` (tests run it with aiohttp's test server)."""
    site = BoardSite(service, config or WebConfig())
    app = web.Application(client_max_size=MAX_BODY)
    app[SITE] = site
    routes: list[tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]] = [
        ("GET", f"/g/{GAME_ID}", site.page),
        ("GET", "/tg", site.mini_app),
        ("POST", "/api/tg/session", site.tg_session),
        ("GET", "/static/{name}", site.static_file),
        ("GET", "/favicon.ico", site.favicon),
        ("GET", f"/api/g/{GAME_ID}/state", site.state),
        ("GET", f"/api/g/{GAME_ID}/events", site.events),
        ("GET", f"/api/g/{GAME_ID}/pdn", site.pdn),
        ("GET", f"/api/g/{GAME_ID}/moves", site.moves),
        ("GET", f"/api/g/{GAME_ID}/ply/{{n}}", site.ply),
        ("GET", f"/api/g/{GAME_ID}/analysis", site.analysis),
        ("POST", f"/api/g/{GAME_ID}/analysis", site.request_analysis),
        ("POST", f"/api/g/{GAME_ID}/move", site.move),
        ("POST", f"/api/g/{GAME_ID}/draw", site.draw),
        ("POST", f"/api/g/{GAME_ID}/resign", site.resign),
        ("GET", f"/t/{TOURNAMENT_ID}", site.tournament_page),
        ("GET", f"/api/t/{TOURNAMENT_ID}", site.tournament_data),
        ("GET", f"/storm/{STORM_ID}", site.storm_page),
        ("GET", f"/api/storm/{STORM_ID}", site.storm_data),
        ("POST", f"/api/storm/{STORM_ID}/move", site.storm_move),
    ]
    for method, path, handler in routes:
        app.router.add_route(method, path, handler)

    app.on_startup.append(site.on_startup)
    app.on_shutdown.append(site.on_shutdown)
    app.on_cleanup.append(site.on_cleanup)
    return app


async def start_web(service: GameService, config: WebConfig | None = None) -> WebServer:
    """Serve the board for ``service`` in the running event loop (an adapter's: call it from the
    loop it runs in, e.g. in python-telegram-bot's ``post_init`` or discord.py's ``setup_hook``);
    ``await server.stop()`` (or ``stop_web``) when the adapter stops.  OSError when the port is taken."""
    config = config or WebConfig.from_env()
    runner = web.AppRunner(make_app(service, config), access_log=None, shutdown_timeout=2.0)
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    addresses = runner.addresses
    port = int(addresses[0][1]) if addresses else config.port
    host = "127.0.0.1" if config.host in ("0.0.0.0", "", "::") else config.host
    url = config.public_url or f"http://{host}:{port}"
    log.info("web board at %s", url)
    return WebServer(runner, url, port)


async def stop_web(server: WebServer) -> None:
    """Stop serving: open streams end, the port is freed."""
    await server.runner.cleanup()


class WebThread:
    """The board served from a thread of its own with its own event loop (``python -m bot web``,
    next to the console chat, which reads standard input on the main thread)."""

    def __init__(self, service: GameService, config: WebConfig | None = None) -> None:
        self.config = config or WebConfig.from_env()
        self.loop = asyncio.new_event_loop()
        self._server: WebServer | None = None
        self.url: str | None = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(service,), name="web-board", daemon=True)

    def start(self) -> str:
        """Serve; the board's URL.  OSError when the port is taken (or the host cannot be bound)."""
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        assert self._server is not None
        self.url = self._server.url
        return self.url

    def _run(self, service: GameService) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self._server = self.loop.run_until_complete(start_web(service, self.config))
        except BaseException as err:        # handed to start(), which raises it in the caller
            self._error = err
            self._ready.set()
            self.loop.close()
            return
        self._ready.set()
        self.loop.run_forever()
        self.loop.close()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and end the thread."""
        if self._server is None or self.loop.is_closed():
            return
        try:
            asyncio.run_coroutine_threadsafe(stop_web(self._server), self.loop).result(timeout)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)
