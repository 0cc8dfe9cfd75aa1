"""Starting the bot: the console chat by default, or a platform when asked."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bot.config import Config, load
from bot.redact import pattern_for, redact_with, register

if TYPE_CHECKING:
    from bot.platforms.web import WebThread
    from bot.service import GameService
    from bot.storage import Store

class RedactSecrets(logging.Filter):
    """Blank out secrets in every record a handler writes: libraries quote tokens in their own
    messages and URLs (python-telegram-bot's InvalidToken, request URLs at DEBUG), lower-cased
    (PTB capitalises API errors) or URL-encoded: every form is matched (bot.redact)."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]
        self._pattern = pattern_for(self.secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        # Never raises: a filter's exception escapes into the code that logged (any library),
        # where logging itself would only have reported a bad call.
        if self._pattern is None:
            return True
        try:
            text = self._message(record)
            if record.exc_info:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
                record.exc_info = None
            record.exc_text = self._redact(record.exc_text) if record.exc_text else record.exc_text
            record.stack_info = self._redact(record.stack_info) if record.stack_info else record.stack_info
        except Exception:
            # Nothing unredacted may pass: without a safe text, the record says only that.
            text, record.exc_info, record.exc_text, record.stack_info = (
                "[log record that could not be redacted]", None, None, None)
        record.msg, record.args = text, None
        return True

    def _redact(self, text: str) -> str:
        return redact_with(self._pattern, text)

    def _message(self, record: logging.LogRecord) -> str:
        try:
            text = record.getMessage()
        except Exception:
            # A badly formatted call ("%s %s" with one argument): keep both parts, as logging would.
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            text = f"{record.msg!s} (arguments: {', '.join(_safe_repr(a) for a in args)})"
        return self._redact(text)


def _safe_repr(value: object) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def redact_logs(secrets: list[str]) -> None:
    """Install the secret filter on every handler of the root logger, and blank the secrets out
    of what is stored too (errors in the database: bot.redact)."""
    register(secrets)
    redactor = RedactSecrets(secrets)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redactor)


def database_path(explicit: str | None = None, settings: Config | None = None) -> str:
    """The database: --db, else $DATABASE_URL (``postgresql://...``: a server several processes
    share), else the SQLite file $DRAUGHTS_DB, else draughts.db in the current folder
    (``settings``: the entry point's; None: read now)."""
    return (settings or load()).database(explicit)


def settings_of(args: argparse.Namespace) -> Config:
    """The settings ``bot.cli.main`` read for this run (read now when it was called otherwise)."""
    given = getattr(args, "settings", None)
    return given if isinstance(given, Config) else load()


def database_secrets(database: str) -> list[str]:
    """What of a database URL must never reach a log line: its password (``user:password@``)."""
    from urllib.parse import unquote, urlsplit

    if "://" not in database:
        return []
    try:
        password = urlsplit(database).password
    except ValueError:
        return []
    return [p for p in {password, unquote(password or "")} if p]


def open_store(database: str, timeout: float | None = None) -> Store:
    """The store for a database path (or a ``sqlite:///path`` URL), opened and checked; StorageError
    with a one-line reason when it cannot be used (``bot.storage.opening.open_store``)."""
    from bot.storage.opening import open_store as opening

    return opening(database, timeout)


def build_service(database: str, settings: Config | None = None) -> GameService:
    """The production wiring: the store for ``database`` (a path, or a ``sqlite:///`` URL) and the
    game service on it, with the wall clock, the lock wait and the engine pool ``settings`` give
    (None: read now).  StorageError when the database cannot be used."""
    from bot.service.compose import ServiceConfig
    from bot.service.service import build
    from bot.service.thinking import Thinker

    settings = settings or load()
    return build(ServiceConfig(database=database, busy_timeout=settings.busy_timeout,
                               thinker=Thinker(workers=settings.ai_workers)))


def open_storage(path: str, timeout: float | None = None) -> Store | None:
    """The database, checked; None after one line on stderr saying why it cannot be used.
    ``timeout``: $DRAUGHTS_BUSY_TIMEOUT (None: the store's default)."""
    from bot.storage import StorageError

    try:
        return open_store(path, timeout)
    except StorageError as err:
        print(f"error: {err}", file=sys.stderr)
        return None


def start_service(storage: Store, platform: str, workers: int | None = None) -> GameService | None:
    """The game service, after extending deadlines for the time the bot was down; None (and one
    line on stderr) when the database stays locked.  ``workers``: $DRAUGHTS_AI_WORKERS (None: sized
    for the machine)."""
    from bot.service import GameService
    from bot.service.thinking import Thinker
    from bot.storage import StorageBusy

    service = GameService(storage, thinker=Thinker(workers=workers))
    try:
        service.resume_after_downtime(platform)
    except StorageBusy as err:
        service.close()
        print(f"error: {err}; stop the other process or try again", file=sys.stderr)
        return None
    return service


def run(args: argparse.Namespace) -> int:
    """Run what the command line asked for; the console chat when nothing was."""
    from bot.config import ConfigError

    try:
        settings = settings_of(args)
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    command = args.command or "console"

    if command in ("telegram", "discord"):
        variable = f"{command.upper()}_BOT_TOKEN"
        token = settings.token(command)
        if not token:
            print(f"error: {variable} is not set. Without a token, run `python -m bot` for the local "
                  "console chat.", file=sys.stderr)
            return 2
        database = settings.database()
        secrets = [token, *database_secrets(database)]
        if command == "telegram":
            # The webhook's secret token (given, or derived from the bot token) is one too.
            from bot.platforms.telegram import webhook_secrets
            secrets += webhook_secrets(token, settings.environ)
        redact_logs(secrets)
        storage = open_storage(database, settings.busy_timeout)
        if storage is None:
            return 2
        service = None
        try:
            service = start_service(storage, command, settings.ai_workers)
            if service is None:
                return 2
            return _run_platform(command, token, service, args, settings)
        except Exception:
            # Through logging, so the traceback is redacted like everything else.
            logging.getLogger(__name__).exception("the %s bot stopped", command)
            return 1
        finally:
            if service is not None:
                service.close()
            storage.close()
    from bot.platforms.console import PLATFORM, ConsoleChat
    from bot.storage import StorageDamaged, StorageGone

    database = settings.database(getattr(args, "db", None))
    redact_logs(database_secrets(database))
    storage = open_storage(database, settings.busy_timeout)
    if storage is None:
        return 2
    service = start_service(storage, PLATFORM, settings.ai_workers)
    if service is None:
        storage.close()
        return 2
    service.warm_up()
    images = Path(getattr(args, "images", None) or settings.images)
    web = _start_web(service, settings) if command == "web" else None
    if command == "web" and web is None:
        service.close()
        storage.close()
        return 2
    started: list[WebThread] = []

    def start_on_demand() -> str | None:
        # The plain console has the board too: `/web` starts it the first time it is asked for
        # (on $PORT, or on any free port when that one is taken).
        thread = _start_web(service, settings, any_port=True)
        if thread is None:
            return None
        started.append(thread)
        return thread.url

    chat = ConsoleChat(service, sys.stdout, images, language=settings.lang, web_url=web.url if web else None,
                       start_web=None if web else start_on_demand)
    try:
        chat.run(sys.stdin, interactive=sys.stdin.isatty())
    except KeyboardInterrupt:
        pass
    except (StorageGone, StorageDamaged) as err:
        # Answering on would write into a file nobody reads again: one line, and stop.
        print(f"error: {err}; stopping", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (e.g. piped into `head`): stop quietly, without a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        for thread in [web, *started]:
            if thread is not None:
                thread.stop()
        service.close()
        storage.close()
    return 0


def _start_web(service: GameService, settings: Config, any_port: bool = False) -> WebThread | None:
    """``python -m bot web``: the board in a thread of its own; None (after one line on stderr)
    when it cannot be served (a bad $PORT, the port taken, unless ``any_port``: then a free one)."""
    import dataclasses

    from bot.platforms.web import WebConfig, WebThread
    from bot.platforms.web.server import ConfigProblem

    try:
        config = WebConfig.from_env("127.0.0.1", settings.environ)
        try:
            thread = WebThread(service, config)
            url = thread.start()
        except OSError:
            if not any_port:
                raise
            thread = WebThread(service, dataclasses.replace(config, port=0))
            url = thread.start()
    except (ConfigProblem, OSError) as err:
        print(f"error: the web board cannot start: {err}", file=sys.stderr)
        return None
    print(f"web board: {url} (/web in the chat gives your game's link)", file=sys.stderr)
    return thread


def _run_platform(command: str, token: str, service: GameService, args: argparse.Namespace,
                  settings: Config) -> int:
    if command == "telegram":
        from bot.platforms.telegram import run_telegram
        service.warm_up()
        return run_telegram(token, service, env=settings.environ)
    from bot.platforms.discord import run_discord, sync_commands
    if getattr(args, "action", "run") == "sync":
        return sync_commands(token, service, settings.discord_guild_id)     # a one-off: no engine needed
    service.warm_up()
    return run_discord(token, service, env=settings.environ)
