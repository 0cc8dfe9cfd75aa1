"""The bot's settings from the environment: every variable it reads is listed in ``VARIABLES``
(name, meaning, default, allowed values), read here and nowhere else, and checked before anything
starts (``from_env``: ConfigError names the variable and what is wrong, never a secret's value).

The entry points (``bot.cli``, ``bot.app``, ``bot.operator_cli``) read the environment once
(``load``) and pass the values down: tokens, the database, the console's language and images, the
engine pool's size, the Discord server and shards, and ``Config.environ`` (the known variables'
text) to the platform adapters, whose sections (``web``, ``webhook``, ``shards``) are parsed by the
functions below.

The engine is the exception, and on purpose: its settings (``EngineSettings``) belong to a process,
not a request, and every process that runs it (the bot, the engine's fork server and workers, the
pools of ``egtb build`` and ``puzzles check``, a command-line search) inherits the environment.
Threading them through every search call and every multiprocessing start would touch each of those
paths for values that never differ within a process, so the engine asks ``engine()`` here (this
module imports nothing of ours, so the engine still stands on the rules alone).

The README's table of variables is ``markdown_table()``; tests/test_config.py keeps the two equal
and checks that no other module reads the environment.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit


class ConfigError(ValueError):
    """A setting that cannot be used: one line naming the variable and what is wrong (never a
    secret's value)."""


@dataclass(frozen=True)
class Variable:
    """One environment variable, as the README's table lists it."""

    name: str
    meaning: str
    default: str
    allowed: str
    secret: bool = False


# The switches' words (DRAUGHTS_JIT, DRAUGHTS_EGTB, TELEGRAM_SHARED_BUDGET accepts 0 and 1).
SWITCH_OFF = ("0", "off", "no", "false")
SWITCH_ON = ("", "1", "on", "yes", "true")
# The most engine processes DRAUGHTS_AI_WORKERS may ask for.
MOST_WORKERS = 64
# The longest a write may wait for another process's lock.
MOST_BUSY_SECONDS = 3600.0
# Far beyond any bot (Discord asks for one shard per 1,000 to 2,500 guilds): a bigger number is a
# typo, and discord.py would open that many connections.
MAX_SHARDS = 10_000
# The only ports Telegram delivers webhook requests to (the URL's port, not the one we listen on:
# a proxy or load balancer may stand between).
TELEGRAM_PORTS = (443, 80, 88, 8443)
WEBHOOK_PORT = 8443
WEBHOOK_LISTEN = "0.0.0.0"
WEB_PORT = 8080
# The web board's stream limits (bot/platforms/web: docs/web.md).
MAX_STREAMS = 2000
STREAMS_PER_GAME = 200
STREAMS_PER_CLIENT = 20
DEFAULT_DB = "draughts.db"
DEFAULT_IMAGES = "boards"

_ON_OFF = f"on or off ({', '.join(SWITCH_ON[1:] + SWITCH_OFF)})"

VARIABLES: tuple[Variable, ...] = (
    Variable("TELEGRAM_BOT_TOKEN", "Telegram bot token (`python -m bot telegram` needs it)", "none",
             "the token @BotFather gave", secret=True),
    Variable("DISCORD_BOT_TOKEN", "Discord bot token (`python -m bot discord` needs it)", "none",
             "the token of the developer portal", secret=True),
    Variable("DISCORD_GUILD_ID", "with `discord sync`: register the commands in this server only", "all servers",
             "a Discord server id (a number like 123456789012345678)"),
    Variable("DATABASE_URL", "a PostgreSQL database shared by every process; wins over `DRAUGHTS_DB`",
             "none: the SQLite file", "`postgresql://user:password@host:5432/name` (the password is never logged)",
             secret=True),
    Variable("DRAUGHTS_DB", "SQLite database file", f"`{DEFAULT_DB}` in the current folder", "a file path"),
    Variable("DRAUGHTS_BUSY_TIMEOUT", "seconds a write waits for another process's lock before answering "
             "\"busy, try again\"", "`5`", f"a number of seconds from 0 to {MOST_BUSY_SECONDS:g}"),
    Variable("LOG_LEVEL", "Python log level", "`WARNING`", "DEBUG, INFO, WARNING, ERROR, CRITICAL or a number"),
    Variable("LANG", "the console chat's language until a chat chooses one with `/lang`", "English",
             "`es…` Spanish, `it…` Italian, anything else English"),
    Variable("DRAUGHTS_IMAGES", "folder for the console's board images", f"`{DEFAULT_IMAGES}`", "a folder path"),
    Variable("TELEGRAM_WEBHOOK_URL", "Telegram POSTs updates there (webhook mode, several workers possible)",
             "none: polling", f"`https://host/path`, port {', '.join(map(str, TELEGRAM_PORTS))} or none"),
    Variable("TELEGRAM_WEBHOOK_SECRET", "the secret Telegram sends with every update (header "
             "`X-Telegram-Bot-Api-Secret-Token`); a request without it gets 403",
             "derived from the token (HMAC-SHA256, 64 hex digits), the same in every worker", "1-256 of `A-Za-z0-9_-`",
             secret=True),
    Variable("TELEGRAM_WEBHOOK_LISTEN", "the address a webhook worker's own HTTP server listens on (TLS ends at the "
             "proxy)", f"`{WEBHOOK_LISTEN}`", "an address"),
    Variable("PORT", "the port a webhook worker listens on; else the web board's (unless `WEB_PORT` is set)",
             f"`{WEBHOOK_PORT}` (webhook), `{WEB_PORT}` (web board)", "1-65535 (webhook), 0-65535 (web board; 0: any)"),
    Variable("TELEGRAM_SHARED_BUDGET", "whether Telegram's send budget is shared through the database (several "
             "processes sending for one bot)", "on in webhook mode, else off", "`0` or `1`"),
    Variable("TELEGRAM_WEBAPP_NAME", "the Mini App's short name registered with @BotFather (`/newapp`, URL "
             "`WEB_URL/tg`): boards and `/web` in groups open it", "none: links in private",
             "3-30 of `A-Za-z0-9_`"),
    Variable("WEB_URL", "the web board's public https address; setting it turns the board on in the Telegram and "
             "Discord bots (`docs/web.md`)", "off", "an http(s) URL without query or fragment"),
    Variable("WEB_BASE_URL", "the older name of `WEB_URL` for Telegram's Open board links", "none",
             "an http(s) URL without query or fragment"),
    Variable("WEB_PORT", "the web board's port where `PORT` is another server's (required in Telegram webhook mode)",
             "`PORT`", "0-65535"),
    Variable("WEB_HOST", "the address the web board listens on", "`0.0.0.0` on a platform, `127.0.0.1` for the "
             "console", "an address"),
    Variable("WEB_TRUSTED_PROXIES", "peers whose X-Forwarded-For names the client (loopback ones always are)",
             "none", "addresses separated by commas"),
    Variable("WEB_MAX_STREAMS", "the web board's live streams in all", f"`{MAX_STREAMS}`", "a whole number ≥ 1"),
    Variable("WEB_STREAMS_PER_GAME", "live streams of one game", f"`{STREAMS_PER_GAME}`", "a whole number ≥ 1"),
    Variable("WEB_STREAMS_PER_CLIENT", "live streams of one client address", f"`{STREAMS_PER_CLIENT}`",
             "a whole number ≥ 1"),
    Variable("DISCORD_SHARD_COUNT", "the bot's total number of shards, the same in every process",
             "discord.py's automatic sharding", f"1 to {MAX_SHARDS}"),
    Variable("DISCORD_SHARD_IDS", "the shards this process runs (needs the count)", "all of them",
             "ids and ranges below the count: `0,1`, `0-3`, `0-1,4`"),
    Variable("DRAUGHTS_AI_WORKERS", "engine processes for the bot's moves and analyses; see *Memory* under "
             "Deployment", "one per CPU, within the container's CPU quota and memory limit (at most 8, at least 1)",
             f"1 to {MOST_WORKERS}"),
    Variable("DRAUGHTS_CACHE_DIR", "folder for the engine's compiled search and the unpacked endgame tables (about "
             "62 MB, which the workers map and share; never inside the installed package; see `docs/engine.md`)",
             "`$NUMBA_CACHE_DIR`, else `$XDG_CACHE_HOME/draughts-bot/numba`, else `~/.cache/draughts-bot/numba`",
             "a folder the bot may write"),
    Variable("NUMBA_CACHE_DIR", "numba's own setting, taken when `DRAUGHTS_CACHE_DIR` is not set (the bot sets it "
             "for the engine's processes)", "none", "a folder"),
    Variable("XDG_CACHE_HOME", "the user's cache folder (the XDG rule), under which `draughts-bot/numba` goes",
             "`~/.cache`", "an absolute folder (a relative one is ignored)"),
    Variable("LOCALAPPDATA", "on Windows, the user's cache folder, under which `draughts-bot\\numba` goes", "none",
             "a folder"),
    Variable("DRAUGHTS_EGTB_DIR", "folder of endgame tables built with `python -m bot ai egtb build` (more pieces "
             "than the shipped ones win)", "`~/.cache/draughts-bot/egtb`", "a folder"),
    Variable("DRAUGHTS_EGTB", "`off` plays without the endgame tables (see `docs/endgames.md`)", "on", _ON_OFF),
    Variable("DRAUGHTS_JIT", "`off` searches in Python instead of the compiled search: the same moves, about 12 "
             "times slower (see `docs/engine.md`)", "on", _ON_OFF),
)
NAMES = frozenset(v.name for v in VARIABLES)
SECRETS = frozenset(v.name for v in VARIABLES if v.secret)


def _text(environ: Mapping[str, str], name: str) -> str:
    return environ.get(name, "").strip()


# -- the engine ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineSettings:
    """How the engine runs in a process.  ``cache_dir``: the compiled search's folder (None: there
    is no home folder; the engine then takes one in the temp folder); ``egtb_dir``: built tables
    (None: ``~/.cache/draughts-bot/egtb``)."""

    jit: bool = True
    egtb: bool = True
    cache_dir: Path | None = None
    cache_dir_given: bool = False
    egtb_dir: Path | None = None


def _switch(environ: Mapping[str, str], name: str) -> bool:
    value = environ.get(name, "")
    word = value.strip().lower()
    if word in SWITCH_OFF:
        return False
    if word in SWITCH_ON:
        return True
    raise ConfigError(f"{name}={value!r} is neither on nor off; use one of {', '.join(SWITCH_ON[1:] + SWITCH_OFF)}")


def cache_folder(environ: Mapping[str, str]) -> Path | None:
    """The folder the environment names for the compiled search: ``$DRAUGHTS_CACHE_DIR``, else
    ``$NUMBA_CACHE_DIR``, else ``$XDG_CACHE_HOME/draughts-bot/numba`` (absolute only, as the XDG
    rule says), else ``%LOCALAPPDATA%\\draughts-bot\\numba`` on Windows, else
    ``~/.cache/draughts-bot/numba``; None without a home folder."""
    for name in ("DRAUGHTS_CACHE_DIR", "NUMBA_CACHE_DIR"):
        given = _text(environ, name)
        if given:
            return Path(given).expanduser()
    xdg = _text(environ, "XDG_CACHE_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "draughts-bot" / "numba"
    local = _text(environ, "LOCALAPPDATA")
    if sys.platform == "win32" and local:
        return Path(local) / "draughts-bot" / "numba"
    try:
        return Path.home() / ".cache" / "draughts-bot" / "numba"
    except RuntimeError:                        # no home folder at all (a bare service account)
        return None


def engine_settings(environ: Mapping[str, str]) -> EngineSettings:
    """The engine's settings in ``environ`` (ConfigError for a switch that is neither on nor off)."""
    tables = _text(environ, "DRAUGHTS_EGTB_DIR")
    return EngineSettings(jit=_switch(environ, "DRAUGHTS_JIT"), egtb=_switch(environ, "DRAUGHTS_EGTB"),
                          cache_dir=cache_folder(environ), cache_dir_given=bool(_text(environ, "DRAUGHTS_CACHE_DIR")),
                          egtb_dir=Path(tables) if tables else None)


_ENGINE_VARIABLES = ("DRAUGHTS_JIT", "DRAUGHTS_EGTB", "DRAUGHTS_EGTB_DIR", "DRAUGHTS_CACHE_DIR", "NUMBA_CACHE_DIR",
                     "XDG_CACHE_HOME", "LOCALAPPDATA")
_engine: tuple[tuple[str | None, ...], EngineSettings] | None = None


def engine() -> EngineSettings:
    """This process's engine settings (see the module's docstring for why the engine asks here).
    Parsed again only when one of its variables changed (a test's monkeypatch.setenv)."""
    global _engine
    raw = tuple(os.environ.get(name) for name in _ENGINE_VARIABLES)
    if _engine is None or _engine[0] != raw:
        _engine = (raw, engine_settings(os.environ))
    return _engine[1]


def set_numba_cache_dir(folder: Path) -> None:
    """Tell numba (which reads its own variable when imported) and the processes started from here
    where the compiled search is kept."""
    os.environ["NUMBA_CACHE_DIR"] = str(folder)


def _check_writable(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder):
        pass


# -- the web board ---------------------------------------------------------------------------------

# BotFather's rule for a Mini App's short name.
WEBAPP_NAME = re.compile(r"[A-Za-z0-9_]{3,30}")
# A public address links are made of: http(s), a host and maybe a path; no query, no fragment.
PUBLIC_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")


def _links(environ: Mapping[str, str]) -> None:
    """ConfigError for a public address or Mini App name that no link could be made of."""
    for name in ("WEB_URL", "WEB_BASE_URL"):
        text = _text(environ, name).rstrip("/")
        if text and not PUBLIC_URL.fullmatch(text):
            raise ConfigError(f"{name}={text!r} is not an http(s) URL without query or fragment")
    app = _text(environ, "TELEGRAM_WEBAPP_NAME")
    if app and not WEBAPP_NAME.fullmatch(app):
        raise ConfigError(f"TELEGRAM_WEBAPP_NAME={app!r} is not a Mini App short name (3-30 letters, digits or _)")


@dataclass(frozen=True)
class WebSettings:
    """Where and how the board is served.  ``host`` None: the caller's default (127.0.0.1 for the
    console, 0.0.0.0 on a platform); ``port_variable``: where the port came from."""

    port: int = WEB_PORT
    port_variable: str = "PORT"
    port_given: bool = False
    host: str | None = None
    url: str | None = None
    trusted_proxies: frozenset[str] = frozenset()
    max_streams: int = MAX_STREAMS
    streams_per_game: int = STREAMS_PER_GAME
    streams_per_client: int = STREAMS_PER_CLIENT


def web(environ: Mapping[str, str]) -> WebSettings:
    """``$PORT`` (``$WEB_PORT`` instead where ``$PORT`` is another server's, such as Telegram's
    webhook), ``$WEB_HOST``, ``$WEB_URL`` (the public address, for links), the trusted proxies and
    the stream limits."""
    variable = "WEB_PORT" if _text(environ, "WEB_PORT") else "PORT"
    given = _text(environ, variable)
    text = given or str(WEB_PORT)
    # ASCII digits only: '²' is a digit to str.isdigit, and int() refuses it.
    if not (text.isascii() and text.isdigit()) or not 0 <= int(text) <= 65535:
        raise ConfigError(f"{variable}={text!r} is not a port number (0-65535)")
    proxies = frozenset(p.strip() for p in environ.get("WEB_TRUSTED_PROXIES", "").split(",") if p.strip())
    return WebSettings(port=int(text), port_variable=variable, port_given=bool(given),
                       host=_text(environ, "WEB_HOST") or None, url=_text(environ, "WEB_URL").rstrip("/") or None,
                       trusted_proxies=proxies,
                       max_streams=_count(environ, "WEB_MAX_STREAMS", MAX_STREAMS),
                       streams_per_game=_count(environ, "WEB_STREAMS_PER_GAME", STREAMS_PER_GAME),
                       streams_per_client=_count(environ, "WEB_STREAMS_PER_CLIENT", STREAMS_PER_CLIENT))


def _count(environ: Mapping[str, str], variable: str, default: int) -> int:
    text = _text(environ, variable)
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ConfigError(f"{variable}={text!r} is not a whole number of at least 1")
    return int(text)


def web_beside_webhook(environ: Mapping[str, str], webhook: bool) -> None:
    """ConfigError when the web board's settings cannot work: with ``WEB_URL`` set, its port must be
    a port, and in webhook mode it must be ``WEB_PORT`` (``PORT`` is the webhook's)."""
    if not _text(environ, "WEB_URL"):
        return
    if webhook and not _text(environ, "WEB_PORT"):
        raise ConfigError("WEB_URL is set in webhook mode: set WEB_PORT for the web board "
                          "(PORT is the webhook server's)")
    web(environ)


# -- Telegram's webhook ----------------------------------------------------------------------------

# What setWebhook accepts as secret_token.
WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")


@dataclass(frozen=True)
class WebhookSettings:
    url: str                    # what Telegram calls (https)
    url_path: str               # the path our server answers on
    listen: str
    port: int
    secret: str | None = field(default=None, repr=False)    # None: derived from the bot token


def webhook(environ: Mapping[str, str]) -> WebhookSettings | None:
    """Webhook mode's settings, or None for polling (no TELEGRAM_WEBHOOK_URL).  What the Bot API
    refuses in ``setWebhook`` is refused here first, so a typo is not a start retried against
    Telegram."""
    name = "TELEGRAM_WEBHOOK_URL"
    url = _text(environ, name)
    if not url:
        return None
    try:
        parts = urlsplit(url)
        url_port = parts.port
    except ValueError:
        raise ConfigError(f"{name} is not a URL") from None
    if parts.scheme != "https" or not parts.hostname:
        raise ConfigError(f"{name} must be an https:// URL with a host (Telegram calls only https)")
    if parts.fragment:
        raise ConfigError(f"{name} may not have a #fragment")
    if url_port is not None and url_port not in TELEGRAM_PORTS:
        raise ConfigError(f"{name} has port {url_port}; Telegram calls only ports "
                          f"{', '.join(map(str, TELEGRAM_PORTS))}")
    secret = _text(environ, "TELEGRAM_WEBHOOK_SECRET")
    if secret and not WEBHOOK_SECRET.fullmatch(secret):
        # The value is a secret: the line says what is wrong, never what it is.
        raise ConfigError("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
    raw_port = _text(environ, "PORT")
    if not raw_port:
        port = WEBHOOK_PORT
    elif re.fullmatch(r"[0-9]+", raw_port) and 1 <= int(raw_port) <= 65535:
        port = int(raw_port)
    else:
        raise ConfigError(f"PORT={raw_port!r} is not a port number (1-65535)")
    return WebhookSettings(url=url, url_path=parts.path or "/", listen=_text(environ, "TELEGRAM_WEBHOOK_LISTEN")
                           or WEBHOOK_LISTEN, port=port, secret=secret or None)


def shared_budget(environ: Mapping[str, str]) -> bool:
    """Whether Telegram's send budget is shared through the database: TELEGRAM_SHARED_BUDGET (0 or
    1), else in webhook mode (any number of workers behind the URL, on one database)."""
    chosen = _text(environ, "TELEGRAM_SHARED_BUDGET")
    if chosen in ("0", "1"):
        return chosen == "1"
    if chosen:
        raise ConfigError(f"TELEGRAM_SHARED_BUDGET={chosen!r} is neither 0 nor 1")
    return bool(_text(environ, "TELEGRAM_WEBHOOK_URL"))


# -- Discord's shards ------------------------------------------------------------------------------

_RANGE = re.compile(r"([0-9]+)(?:\s*-\s*([0-9]+))?")


@dataclass(frozen=True)
class ShardSettings:
    """``count`` None: discord.py's automatic sharding.  ``ids`` None: every shard of ``count``."""

    count: int | None = None
    ids: tuple[int, ...] | None = None


def shard_ids(text: str, count: int) -> tuple[int, ...]:
    """``0,1`` or ``0-3`` or ``0-1,4``: the ids, sorted; ConfigError if one is outside
    0..count-1, listed twice, or not a number."""
    ids: list[int] = []
    for item in text.split(","):
        match = _RANGE.fullmatch(item.strip())
        if match is None:
            raise ConfigError(f"DISCORD_SHARD_IDS must be shard ids like 0,1 or ranges like 0-3; "
                              f"{item.strip()!r} is neither")
        first = int(match[1])
        last = int(match[2]) if match[2] is not None else first
        if last < first:
            raise ConfigError(f"DISCORD_SHARD_IDS has the range {first}-{last}, which is empty")
        if last >= count:
            raise ConfigError(f"DISCORD_SHARD_IDS names shard {last}, but with DISCORD_SHARD_COUNT={count} "
                              f"the shards are 0 to {count - 1}")
        for shard in range(first, last + 1):
            if shard in ids:
                raise ConfigError(f"DISCORD_SHARD_IDS names shard {shard} twice")
            ids.append(shard)
    return tuple(sorted(ids))


def shards(environ: Mapping[str, str]) -> ShardSettings:
    """The shards this process runs."""
    raw_count = _text(environ, "DISCORD_SHARD_COUNT")
    raw_ids = _text(environ, "DISCORD_SHARD_IDS")
    if not raw_count:
        if raw_ids:
            raise ConfigError("DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT, the number of shards of the whole bot")
        return ShardSettings()
    if not re.fullmatch(r"[0-9]+", raw_count) or not 1 <= int(raw_count) <= MAX_SHARDS:
        raise ConfigError(f"DISCORD_SHARD_COUNT={raw_count!r} is not a number of shards (1 to {MAX_SHARDS})")
    count = int(raw_count)
    return ShardSettings(count=count, ids=shard_ids(raw_ids, count) if raw_ids else None)


# -- everything ------------------------------------------------------------------------------------


def log_level(value: str | None) -> int | None:
    """The level LOG_LEVEL names (a name like INFO, or a number), None if it names none."""
    text = (value or "WARNING").strip().upper()
    if text.isdigit():
        return int(text)
    level = logging.getLevelNamesMapping().get(text)
    return level if isinstance(level, int) else None


def _guild(environ: Mapping[str, str]) -> int | None:
    # A wrong one would otherwise register the commands in every server instead of one.
    text = _text(environ, "DISCORD_GUILD_ID")
    if not text:
        return None
    if text.isascii() and text.isdigit() and 0 < int(text) < 2**64:
        return int(text)
    raise ConfigError(f"DISCORD_GUILD_ID={text!r} is not a Discord server id (a number like 123456789012345678)")


def _workers(environ: Mapping[str, str]) -> int | None:
    text = _text(environ, "DRAUGHTS_AI_WORKERS")
    if not text:
        return None
    if text.isascii() and text.isdigit() and 1 <= int(text) <= MOST_WORKERS:
        return int(text)
    raise ConfigError(f"DRAUGHTS_AI_WORKERS={text!r} is not a number of engine processes from 1 to {MOST_WORKERS}")


def _busy_timeout(environ: Mapping[str, str]) -> float | None:
    raw = environ.get("DRAUGHTS_BUSY_TIMEOUT")
    text = (raw or "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= MOST_BUSY_SECONDS:      # NaN fails too
        raise ConfigError(f"DRAUGHTS_BUSY_TIMEOUT={raw!r} is not a number of seconds between 0 and "
                          f"{MOST_BUSY_SECONDS:g}")
    return seconds


def _log_level(environ: Mapping[str, str]) -> int:
    raw = environ.get("LOG_LEVEL")
    level = log_level(raw)
    if level is None:
        names = ", ".join(logging.getLevelName(n) for n in (10, 20, 30, 40, 50))
        raise ConfigError(f"LOG_LEVEL={raw!r} is not a log level; use one of {names}")
    return level


def _hidden(value: str | None) -> str:
    return "None" if value is None else "'***'"


class Settings(Mapping[str, str]):
    """The known variables' text as the environment gave it, read-only; ``repr`` hides the secrets'."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values = dict(values or {})

    def __getitem__(self, name: str) -> str:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name!r}: {_hidden(value) if name in SECRETS else repr(value)}"
                          for name, value in self._values.items())
        return f"Settings({{{shown}}})"


@dataclass(frozen=True)
class Config:
    """Every setting of the environment, checked.  ``repr`` shows no token, webhook secret or
    database password; ``environ`` holds the known variables' text (only those) for the platform
    adapters' own sections."""

    telegram_token: str | None = field(default=None, repr=False)
    discord_token: str | None = field(default=None, repr=False)
    discord_guild_id: int | None = None
    database_url: str | None = field(default=None, repr=False)
    db: str | None = None
    busy_timeout: float | None = None
    log_level: int = logging.WARNING
    lang: str = "en"
    images: str = DEFAULT_IMAGES
    ai_workers: int | None = None
    web: WebSettings = WebSettings()
    webhook: WebhookSettings | None = None
    shared_budget: bool = False
    shards: ShardSettings = ShardSettings()
    engine: EngineSettings = EngineSettings()
    environ: Settings = field(default_factory=Settings, repr=False, compare=False)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in (
            "discord_guild_id", "db", "busy_timeout", "log_level", "lang", "images", "ai_workers", "web", "webhook",
            "shared_budget", "shards", "engine"))
        return (f"Config(telegram_token={_hidden(self.telegram_token)}, discord_token={_hidden(self.discord_token)}, "
                f"database_url={_hidden_password(self.database_url)}, {shown})")

    def database(self, explicit: str | None = None) -> str:
        """The database: ``explicit`` (--db), else $DATABASE_URL (a server several processes share),
        else the SQLite file $DRAUGHTS_DB, else draughts.db in the current folder."""
        return explicit or self.database_url or self.db or DEFAULT_DB

    def token(self, platform: str) -> str | None:
        return {"telegram": self.telegram_token, "discord": self.discord_token}.get(platform)


def _hidden_password(url: str | None) -> str:
    if url is None:
        return "None"
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return repr(url)
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        return repr(parts._replace(netloc=netloc).geturl())
    except ValueError:
        return "'***'"


def from_env(environ: Mapping[str, str]) -> Config:
    """Every setting in ``environ``, checked (ConfigError names the first variable that is wrong).
    A given DRAUGHTS_CACHE_DIR is made if missing and must take files."""
    engine = engine_settings(environ)
    if engine.cache_dir_given and engine.cache_dir is not None:
        try:
            _check_writable(engine.cache_dir)
        except OSError as err:
            raise ConfigError(f"DRAUGHTS_CACHE_DIR={_text(environ, 'DRAUGHTS_CACHE_DIR')!r} cannot hold the engine's "
                              f"compiled search: {err.strerror or err}") from None
    hook = webhook(environ)
    web_beside_webhook(environ, hook is not None)
    _links(environ)
    return Config(
        telegram_token=_text(environ, "TELEGRAM_BOT_TOKEN") or None,
        discord_token=_text(environ, "DISCORD_BOT_TOKEN") or None,
        discord_guild_id=_guild(environ),
        database_url=_text(environ, "DATABASE_URL") or None,
        db=environ.get("DRAUGHTS_DB") or None,
        busy_timeout=_busy_timeout(environ),
        log_level=_log_level(environ),
        lang=environ.get("LANG", "en"),
        images=environ.get("DRAUGHTS_IMAGES") or DEFAULT_IMAGES,
        ai_workers=_workers(environ),
        web=web(environ),
        webhook=hook,
        shared_budget=shared_budget(environ),
        shards=shards(environ),
        engine=engine,
        environ=Settings({k: v for k, v in environ.items() if k in NAMES}),
    )


def problem(environ: Mapping[str, str]) -> str | None:
    """Why the settings in ``environ`` cannot be used, in one line; None when they can."""
    try:
        from_env(environ)
    except ConfigError as err:
        return str(err)
    return None


def load() -> Config:
    """The process's settings: the one place the bot reads its environment (ConfigError)."""
    return from_env(os.environ)


def markdown_table() -> str:
    """The README's table of variables."""
    rows = ["| variable | meaning | default | allowed |", "|---|---|---|---|"]
    rows += [f"| `{v.name}` | {v.meaning} | {v.default} | {v.allowed} |" for v in VARIABLES]
    return "\n".join(rows)
