"""The web board: one game's page served by the bot itself (docs/web.md).

``start_web(service, config)`` serves it in the running event loop and returns the server
(``await server.stop()`` ends it); ``WebConfig.from_env(host, settings.environ)`` takes ``$PORT``,
``$WEB_HOST``, ``$WEB_URL`` and the stream limits from the settings the entry point read
(``bot.config``).  ``verify_init_data`` checks a Telegram Mini App's initData."""

from .auth import InitDataRefused, TelegramUser, verify_init_data
from .server import WebConfig, WebServer, WebThread, make_app, start_web, stop_web

__all__ = ["InitDataRefused", "TelegramUser", "WebConfig", "WebServer", "WebThread", "make_app", "start_web",
           "stop_web", "verify_init_data"]
