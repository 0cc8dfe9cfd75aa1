"""Webhook mode as production runs it: ``run_telegram`` with TELEGRAM_WEBHOOK_URL starts
python-telegram-bot's own webhook server (a real tornado server on 127.0.0.1, on a free port),
our service on a real SQLite file, and the strict fake Bot API as the HTTP layer towards Telegram.

Real update JSON is POSTed to the server as Telegram would: with the right
``X-Telegram-Bot-Api-Secret-Token`` the bot answers through the fake; without it, or with a wrong
one, the server answers 403 and nothing happens.  Every worker calls setWebhook at start, never
drops pending updates, and leaves the webhook in place at stop (other workers serve it).  The
settings are checked before anything is sent: a bad one is one line on stderr and exit status 2."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest
from telegram_fake_api import GROUP, USERS, FakeBotAPI

from bot.platforms.telegram import WebhookConfigError, run_telegram, webhook_config, webhook_secrets
from bot.platforms.telegram.webhook import DEFAULT_PORT, derived_secret
from bot.service import GameService
from bot.storage import Storage

TOKEN = "123456:AbCdEfSecretTokenForTheHook"
SECRET = "Webhook_Secret-0123456789"
URL = "https://bot.example.org/tg/hook"
# A run that does not stop on its own is stopped by SIGINT after this long, so that a failing test
# fails instead of hanging (not a timed assertion: nothing is expected to take long).
WATCHDOG_SECONDS = 60.0


@pytest.fixture
def service(tmp_path):
    storage = Storage(tmp_path / "hook.db")
    service = GameService(storage)
    yield service
    service.close()
    storage.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def environment(port: int, secret: str | None = SECRET, url: str = URL) -> dict[str, str]:
    env = {"TELEGRAM_WEBHOOK_URL": url, "TELEGRAM_WEBHOOK_LISTEN": "127.0.0.1", "PORT": str(port)}
    if secret is not None:
        env["TELEGRAM_WEBHOOK_SECRET"] = secret
    return env


class Telegram:
    """What Telegram does towards the webhook server, from a thread of its own (the bot's event
    loop runs in the test's main thread, where stop signals are handled): wait until the server
    listens, run ``script``, then stop the bot with SIGINT as an operator would."""

    def __init__(self, api: FakeBotAPI, port: int, path: str = "/tg/hook") -> None:
        self.api, self.port, self.path = api, port, path
        self.errors: list[BaseException] = []
        self.finished = threading.Event()      # the run returned: nothing left to stop
        self.started = time.monotonic()
        self._ids = iter(range(1, 1000))

    def overdue(self) -> bool:
        return time.monotonic() - self.started > WATCHDOG_SECONDS

    def wait_until(self, condition: Callable[[], bool], what: str) -> None:
        while not condition():
            if self.overdue() or self.finished.is_set():
                raise AssertionError(f"watchdog: {what}")
            time.sleep(0.02)

    def listening(self) -> bool:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
            return True
        return False

    def post(self, user: str, text: str, secret: str | None, path: str | None = None) -> int:
        """A message update as Telegram POSTs it; the HTTP status the server answered."""
        update = {"update_id": next(self._ids), "message": self.api.incoming(GROUP, USERS[user], text)}
        headers = {"Content-Type": "application/json"}
        if secret is not None:
            headers["X-Telegram-Bot-Api-Secret-Token"] = secret
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path or self.path}",
                                         data=json.dumps(update).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as err:
            return int(err.code)

    def run(self, script: Callable[[Telegram], None]) -> threading.Thread:
        def drive() -> None:
            try:
                self.wait_until(self.listening, "the webhook server never listened")
                script(self)
            except BaseException as exc:
                self.errors.append(exc)
            finally:
                if not self.finished.is_set():
                    os.kill(os.getpid(), signal.SIGINT)

        thread = threading.Thread(target=drive, name="telegram-side")
        thread.start()
        return thread


def answers(api: FakeBotAPI) -> list[str]:
    return [c.params["text"] for c in api.named("sendMessage", ok_only=True) if c.params["chat_id"] == GROUP["id"]]


@pytest.mark.parametrize("given", [True, False], ids=["secret given", "secret derived"])
def test_an_update_with_the_secret_is_answered_and_one_without_is_refused_with_403(service, caplog, bot_errors,
                                                                                   given):
    caplog.set_level(logging.INFO)
    api = FakeBotAPI()
    api.add_chat(GROUP)
    port = free_port()
    secret = SECRET if given else derived_secret(TOKEN)
    statuses: dict[str, int] = {}

    def script(tg: Telegram) -> None:
        # A challenge would be stored if either of these got through.
        statuses["missing"] = tg.post("bob", "/new italian", None)
        statuses["wrong"] = tg.post("bob", "/new italian", "not-the-secret")
        statuses["other path"] = tg.post("bob", "/new italian", secret, path="/elsewhere")
        statuses["right"] = tg.post("ana", "/help", secret)
        tg.wait_until(lambda: bool(answers(api)), "the bot did not answer /help")

    telegram = Telegram(api, port)
    thread = telegram.run(script)
    status = run_telegram(TOKEN, service, request=api, sleep=lambda s: None,
                          env=environment(port, SECRET if given else None))
    telegram.finished.set()
    thread.join()
    assert telegram.errors == []
    assert status == 0
    assert statuses == {"missing": 403, "wrong": 403, "other path": 404, "right": 200}
    assert answers(api) and service.storage.find_challenges() == []
    # setWebhook as every worker calls it: our URL and secret, all update types, nothing dropped.
    # (Before the server starts, and once more by python-telegram-bot as it starts it.)
    hooks = api.named("setWebhook", ok_only=True)
    assert hooks
    for hook in hooks:
        assert hook.wire["url"] == URL and hook.wire["secret_token"] == secret
        assert hook.wire.get("drop_pending_updates") in (None, "false")
        assert "callback_query" in json.loads(hook.wire["allowed_updates"])
    # Stopped without removing the webhook the other workers still serve.
    assert api.named("deleteWebhook") == [] and api.webhook is not None and api.webhook["url"] == URL
    assert api.named("getUpdates") == []
    assert secret.lower() not in caplog.text.lower() and TOKEN.lower() not in caplog.text.lower()
    assert bot_errors == []


def test_setwebhook_failing_at_start_is_tried_again_with_backoff(service, caplog, bot_errors):
    api = FakeBotAPI()
    api.add_chat(GROUP)
    api.fail("setWebhook", 502, "Bad Gateway", times=2)
    port = free_port()
    sleeps: list[float] = []
    telegram = Telegram(api, port)
    thread = telegram.run(lambda tg: None)
    assert run_telegram(TOKEN, service, request=api, sleep=sleeps.append, env=environment(port)) == 0
    telegram.finished.set()
    thread.join()
    assert telegram.errors == []
    assert sleeps == [1.0, 2.0] and len(api.named("setWebhook", ok_only=True)) >= 1
    lines = [r for r in caplog.records if r.name.startswith("bot") and r.levelno >= logging.WARNING]
    assert len(lines) == 2 and all("could not be reached" in r.getMessage() for r in lines)
    assert not any(r.exc_info for r in caplog.records) and bot_errors == []


def test_a_refused_token_in_webhook_mode_is_one_line_and_exit_1(service, caplog, bot_errors):
    api = FakeBotAPI()
    api.fail("getMe", 401, "Unauthorized")
    assert run_telegram(TOKEN, service, request=api, sleep=lambda s: None, env=environment(free_port())) == 1
    assert [r.getMessage() for r in bot_errors] == ["Telegram refused TELEGRAM_BOT_TOKEN; check it with @BotFather"]
    assert api.named("setWebhook") == [] and not any(r.exc_info for r in caplog.records)
    bot_errors.clear()


def test_a_webhook_telegram_refuses_is_one_line_and_exit_1(service, caplog, bot_errors):
    api = FakeBotAPI()
    api.fail("setWebhook", 400, "Bad Request: bad webhook: Failed to resolve host: Name or service not known")
    sleeps: list[float] = []
    assert run_telegram(TOKEN, service, request=api, sleep=sleeps.append, env=environment(free_port())) == 1
    assert sleeps == [] and len(bot_errors) == 1
    line = bot_errors[0].getMessage()
    assert "refused the webhook" in line and "failed to resolve host" in line.lower() and "TELEGRAM_WEBHOOK_URL" in line
    assert SECRET not in caplog.text and not any(r.exc_info for r in caplog.records)
    bot_errors.clear()


def test_a_port_already_taken_is_one_line_and_exit_1(service, caplog, bot_errors):
    api = FakeBotAPI()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        assert run_telegram(TOKEN, service, request=api, sleep=lambda s: None, env=environment(port)) == 1
    assert len(bot_errors) == 1 and f"cannot listen on 127.0.0.1:{port}" in bot_errors[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)
    bot_errors.clear()


@pytest.mark.parametrize(("env", "fragment"), [
    ({"TELEGRAM_WEBHOOK_URL": "http://bot.example.org/tg"}, "must be an https:// URL"),
    ({"TELEGRAM_WEBHOOK_URL": "bot.example.org/tg"}, "must be an https:// URL"),
    ({"TELEGRAM_WEBHOOK_URL": "https://bot.example.org:8080/tg"}, "port 8080; Telegram calls only ports 443, 80"),
    ({"TELEGRAM_WEBHOOK_URL": "https://bot.example.org:http/tg"}, "is not a URL"),
    ({"TELEGRAM_WEBHOOK_URL": URL, "TELEGRAM_WEBHOOK_SECRET": "has spaces in it"}, "1-256 characters of A-Z"),
    ({"TELEGRAM_WEBHOOK_URL": URL, "TELEGRAM_WEBHOOK_SECRET": "x" * 257}, "1-256 characters of A-Z"),
    ({"TELEGRAM_WEBHOOK_URL": URL, "PORT": "eighty"}, "PORT='eighty' is not a port number"),
    ({"TELEGRAM_WEBHOOK_URL": URL, "PORT": "70000"}, "PORT='70000' is not a port number"),
    ({"TELEGRAM_WEBHOOK_URL": URL, "PORT": "²"}, "is not a port number"),
    ({"TELEGRAM_WEBHOOK_URL": URL, "PORT": "0"}, "PORT='0' is not a port number"),
    ({"TELEGRAM_WEBHOOK_URL": "https://bot.example.org/tg#part"}, "may not have a #fragment"),
    # The web board beside a webhook worker needs a port of its own: PORT is the webhook server's.
    ({"TELEGRAM_WEBHOOK_URL": URL, "PORT": "8000", "WEB_URL": "https://board.example.org"}, "set WEB_PORT"),
    ({"TELEGRAM_WEBHOOK_URL": URL, "WEB_URL": "https://board.example.org", "WEB_PORT": "http"},
     "WEB_PORT='http' is not a port number"),
    ({"WEB_URL": "https://board.example.org", "PORT": "99999"}, "PORT='99999' is not a port number"),
])
def test_an_unusable_webhook_setting_is_one_line_and_exit_2_before_anything_is_sent(service, capsys, env, fragment):
    api = FakeBotAPI()
    assert run_telegram(TOKEN, service, request=api, env=env) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and fragment in err, err
    assert api.calls == []
    assert TOKEN not in err and (env.get("TELEGRAM_WEBHOOK_SECRET") or TOKEN) not in err


def test_the_settings_read_from_the_environment():
    assert webhook_config(TOKEN, {}) is None and webhook_config(TOKEN, {"TELEGRAM_WEBHOOK_URL": "  "}) is None
    config = webhook_config(TOKEN, {"TELEGRAM_WEBHOOK_URL": "https://h.example:8443/a/b?x=1"})
    assert config is not None
    assert (config.url, config.url_path, config.listen, config.port) == (
        "https://h.example:8443/a/b?x=1", "/a/b", "0.0.0.0", DEFAULT_PORT)
    assert config.secret == derived_secret(TOKEN) and SECRET not in repr(config) and config.secret not in repr(config)
    root = webhook_config(TOKEN, {"TELEGRAM_WEBHOOK_URL": "https://h.example", "PORT": "10000",
                                  "TELEGRAM_WEBHOOK_LISTEN": "::", "TELEGRAM_WEBHOOK_SECRET": SECRET})
    assert root is not None and (root.url_path, root.port, root.listen, root.secret) == ("/", 10000, "::", SECRET)


def test_the_derived_secret_is_the_same_in_every_worker_and_fits_telegram():
    one, other = derived_secret(TOKEN), derived_secret(TOKEN)
    assert one == other and len(one) == 64 and one.isalnum()
    assert derived_secret(TOKEN + "x") != one and TOKEN.split(":")[1].lower() not in one.lower()


def test_the_secret_to_keep_out_of_the_logs():
    assert webhook_secrets(TOKEN, {}) == []
    assert webhook_secrets(TOKEN, {"TELEGRAM_WEBHOOK_URL": URL}) == [derived_secret(TOKEN)]
    # Even one the settings refuse is a secret.
    assert webhook_secrets(TOKEN, {"TELEGRAM_WEBHOOK_URL": "http://x", "TELEGRAM_WEBHOOK_SECRET": "a b"}) == ["a b"]


def test_a_config_error_names_no_secret() -> None:
    with pytest.raises(WebhookConfigError) as err:
        webhook_config(TOKEN, {"TELEGRAM_WEBHOOK_URL": URL, "TELEGRAM_WEBHOOK_SECRET": "sëcret-value"})
    assert "sëcret-value" not in str(err.value)




@pytest.mark.parametrize("given", [True, False], ids=["secret given", "secret derived"])
def test_the_app_blanks_the_webhook_secret_out_of_its_logs_with_the_token(tmp_path, monkeypatch, given):
    from argparse import Namespace

    import bot.app as app

    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("DRAUGHTS_DB", str(tmp_path / "app.db"))
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", URL)
    if given:
        monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", SECRET)
    else:
        monkeypatch.delenv("TELEGRAM_WEBHOOK_SECRET", raising=False)
    redacted: list[list[str]] = []
    monkeypatch.setattr(app, "redact_logs", lambda secrets: redacted.append(list(secrets)))
    monkeypatch.setattr(app, "_run_platform", lambda *args: 0)       # the run itself is tested above
    assert app.run(Namespace(command="telegram")) == 0
    assert redacted == [[TOKEN, SECRET if given else derived_secret(TOKEN)]]
