"""Starting the bot: the console chat by default, or a platform when asked."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.service import GameService

DEFAULT_DB = "draughts.db"


class RedactSecrets(logging.Filter):
    """Blank out secrets in every record a handler writes: libraries quote tokens in their own
    messages and URLs (python-telegram-bot's InvalidToken, request URLs at DEBUG)."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        text = record.getMessage()
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
            if record.exc_text:
                record.exc_text = record.exc_text.replace(secret, "[redacted]")
        record.msg, record.args = text, None
        return True


def redact_logs(secrets: list[str]) -> None:
    """Install the secret filter on every handler of the root logger."""
    redactor = RedactSecrets(secrets)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redactor)


def database_path(explicit: str | None = None) -> str:
    """The SQLite file: --db, else $DRAUGHTS_DB, else draughts.db in the current folder."""
    return explicit or os.environ.get("DRAUGHTS_DB") or DEFAULT_DB


def run(args: argparse.Namespace) -> int:
    """Run what the command line asked for; the console chat when nothing was."""
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "WARNING"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    command = args.command or "console"
    from bot.service import GameService
    from bot.storage import Storage

    if command in ("telegram", "discord"):
        variable = f"{command.upper()}_BOT_TOKEN"
        token = os.environ.get(variable, "").strip()
        if not token:
            print(f"error: {variable} is not set. Without a token, run `python -m bot` for the local "
                  "console chat.", file=sys.stderr)
            return 2
        redact_logs([token])
        storage = Storage(database_path())
        try:
            return _run_platform(command, token, GameService(storage), args)
        except Exception:
            # Through logging, so the traceback is redacted like everything else.
            logging.getLogger(__name__).exception("the %s bot stopped", command)
            return 1
        finally:
            storage.close()
    from bot.platforms.console import ConsoleChat

    storage = Storage(database_path(getattr(args, "db", None)))
    images = Path(getattr(args, "images", None) or os.environ.get("DRAUGHTS_IMAGES", "boards"))
    chat = ConsoleChat(GameService(storage), sys.stdout, images)
    try:
        chat.run(sys.stdin, interactive=sys.stdin.isatty())
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        # The reader went away (e.g. piped into `head`): stop quietly, without a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        storage.close()
    return 0


def _run_platform(command: str, token: str, service: GameService, args: argparse.Namespace) -> int:
    if command == "telegram":
        from bot.platforms.telegram import run_telegram
        return run_telegram(token, service)
    from bot.platforms.discord import run_discord, sync_commands
    if getattr(args, "action", "run") == "sync":
        return sync_commands(token, service)
    return run_discord(token, service)
