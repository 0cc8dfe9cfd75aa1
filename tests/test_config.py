"""One validated configuration (issue 31, item 7): bot/config.py is the only module that reads the
environment; every variable the code asks for is documented there and in the README; a wrong value
is one ConfigError naming the variable; secrets stay out of ``repr``."""

from __future__ import annotations

import ast
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from bot import config
from bot.config import ConfigError, from_env

REPO = Path(__file__).resolve().parents[1]
TOKEN = "123456:AbCdEfSecretTokenOfTheConfig"

# Every variable set to a value that works, so the reads that depend on another variable happen too.
FULL = {
    "TELEGRAM_BOT_TOKEN": TOKEN, "DISCORD_BOT_TOKEN": "discord-secret-token-value", "DISCORD_GUILD_ID": "123456789",
    "DATABASE_URL": "postgresql://bot:pg-secret-pass@db.example:5432/draughts", "DRAUGHTS_DB": "/data/bot.db",
    "DRAUGHTS_BUSY_TIMEOUT": "7.5", "LOG_LEVEL": "info", "LANG": "es_ES.UTF-8", "DRAUGHTS_IMAGES": "/tmp/boards",
    "TELEGRAM_WEBHOOK_URL": "https://bot.example.org/tg", "TELEGRAM_WEBHOOK_SECRET": "hook-secret_value",
    "TELEGRAM_WEBHOOK_LISTEN": "::", "PORT": "8443", "TELEGRAM_SHARED_BUDGET": "1", "TELEGRAM_WEBAPP_NAME": "board",
    "WEB_URL": "https://board.example.org/", "WEB_BASE_URL": "https://old.example.org", "WEB_PORT": "8081",
    "WEB_HOST": "10.0.0.2", "WEB_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.3", "WEB_MAX_STREAMS": "50",
    "WEB_STREAMS_PER_GAME": "7", "WEB_STREAMS_PER_CLIENT": "3", "DISCORD_SHARD_COUNT": "4",
    "DISCORD_SHARD_IDS": "0-1,3", "DRAUGHTS_AI_WORKERS": "3", "NUMBA_CACHE_DIR": "/n",
    "XDG_CACHE_HOME": "/xdg", "LOCALAPPDATA": "C:/local", "DRAUGHTS_EGTB_DIR": "/tables", "DRAUGHTS_EGTB": "off",
    "DRAUGHTS_JIT": "no",
}


class Recording(Mapping[str, str]):
    """An environment that remembers every variable asked for (iterating it asks for none)."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = dict(values)
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return self.values[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.asked.add(key)
        return key in self.values

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def asked_by_the_code(values: Mapping[str, str]) -> set[str]:
    """The variables the configuration and the platforms' own sections ask an environment for."""
    from bot.platforms.discord import shard_config
    from bot.platforms.telegram import webhook_config, webhook_secrets
    from bot.platforms.telegram.adapter import web_board_problem
    from bot.platforms.telegram.inline import board_link
    from bot.platforms.web import WebConfig

    env = Recording(values)
    from_env(env)
    webhook_config(TOKEN, env)
    webhook_secrets(TOKEN, env)
    web_board_problem(env, webhook=True)
    WebConfig.from_env("0.0.0.0", env)
    shard_config(env)
    board_link(1, "draughts_bot", env)
    board_link(1, None, env)
    return env.asked


def test_every_variable_the_code_asks_for_is_documented(tmp_path: Path) -> None:
    asked = (asked_by_the_code({}) | asked_by_the_code(FULL)
             | asked_by_the_code({**FULL, "DRAUGHTS_CACHE_DIR": str(tmp_path / "cache")}))
    assert asked - config.NAMES == set(), "read but not in bot.config.VARIABLES"
    assert config.NAMES - asked == set(), "documented but never read"
    assert set(FULL) | {"DRAUGHTS_CACHE_DIR"} == set(config.NAMES)


def test_every_documented_variable_has_each_column() -> None:
    for variable in config.VARIABLES:
        assert variable.name and variable.meaning and variable.default and variable.allowed, variable
        assert "|" not in variable.meaning + variable.default + variable.allowed, variable


def test_the_readme_lists_the_variables_from_the_one_place() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert config.markdown_table() in readme, "README's table is not bot.config.markdown_table(): paste it again"


def test_no_module_but_the_configuration_reads_the_environment() -> None:
    readers = []
    for path in sorted((REPO / "bot").rglob("*.py")) + sorted((REPO / "renderers").rglob("*.py")):
        if path == REPO / "bot" / "config.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            name = None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
                if node.attr in ("environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"):
                    name = f"os.{node.attr}"
            elif isinstance(node, ast.ImportFrom) and node.module == "os":
                found = [a.name for a in node.names if a.name in ("environ", "environb", "getenv", "getenvb")]
                name = f"from os import {', '.join(found)}" if found else None
            if name is not None:
                readers.append(f"{path.relative_to(REPO)}:{node.lineno}: {name}")
    assert readers == [], "read the environment through bot.config:\n" + "\n".join(readers)


def test_the_whole_environment_read_once() -> None:
    settings = from_env(FULL)
    assert (settings.telegram_token, settings.discord_token, settings.discord_guild_id) == (
        TOKEN, "discord-secret-token-value", 123456789)
    assert settings.database() == FULL["DATABASE_URL"] and settings.database("other.db") == "other.db"
    assert (settings.busy_timeout, settings.log_level, settings.lang, settings.images, settings.ai_workers) == (
        7.5, logging.INFO, "es_ES.UTF-8", "/tmp/boards", 3)
    assert settings.webhook is not None and (settings.webhook.url_path, settings.webhook.port,
                                             settings.webhook.listen) == ("/tg", 8443, "::")
    assert settings.shared_budget is True
    assert (settings.web.port, settings.web.port_variable, settings.web.url, settings.web.host) == (
        8081, "WEB_PORT", "https://board.example.org", "10.0.0.2")
    assert settings.web.trusted_proxies == {"10.0.0.1", "10.0.0.3"}
    assert (settings.web.max_streams, settings.web.streams_per_game, settings.web.streams_per_client) == (50, 7, 3)
    assert (settings.shards.count, settings.shards.ids) == (4, (0, 1, 3))
    assert settings.engine == config.EngineSettings(jit=False, egtb=False, cache_dir=Path("/n"), cache_dir_given=False,
                                                    egtb_dir=Path("/tables"))
    assert settings.environ == FULL                       # the known variables' text, for the adapters
    assert from_env({**FULL, "UNRELATED": "x"}).environ == FULL


def test_the_defaults() -> None:
    settings = from_env({})
    assert settings.database() == "draughts.db" and settings.busy_timeout is None and settings.ai_workers is None
    assert (settings.log_level, settings.lang, settings.images) == (logging.WARNING, "en", "boards")
    assert settings.telegram_token is None and settings.webhook is None and settings.shared_budget is False
    assert settings.web == config.WebSettings() and settings.shards == config.ShardSettings()
    assert settings.engine.jit and settings.engine.egtb and settings.engine.egtb_dir is None
    # The web board's defaults are the server's own.
    from bot.platforms.web import WebConfig
    assert WebConfig.from_env() == WebConfig()


def test_repr_shows_no_secret() -> None:
    settings = from_env(FULL)
    text = repr(settings)
    for secret in (TOKEN, "discord-secret-token-value", "pg-secret-pass", "hook-secret_value"):
        assert secret not in text and secret not in repr(settings.environ)
    assert "'WEB_URL': 'https://board.example.org/'" in repr(settings.environ)
    assert "telegram_token='***'" in text and "bot:***@db.example" in text and "guild_id=123456789" in text


@pytest.mark.parametrize(("values", "fragment"), [
    ({"DRAUGHTS_AI_WORKERS": "abc"}, "DRAUGHTS_AI_WORKERS='abc' is not a number of engine processes"),
    ({"DRAUGHTS_AI_WORKERS": "65"}, "DRAUGHTS_AI_WORKERS='65'"),
    ({"DRAUGHTS_BUSY_TIMEOUT": "soon"}, "DRAUGHTS_BUSY_TIMEOUT='soon' is not a number of seconds"),
    ({"DRAUGHTS_BUSY_TIMEOUT": "nan"}, "DRAUGHTS_BUSY_TIMEOUT='nan'"),
    ({"DRAUGHTS_BUSY_TIMEOUT": "3601"}, "DRAUGHTS_BUSY_TIMEOUT='3601'"),
    ({"LOG_LEVEL": "loud"}, "LOG_LEVEL='loud' is not a log level"),
    ({"DRAUGHTS_JIT": "maybe"}, "DRAUGHTS_JIT='maybe' is neither on nor off"),
    ({"DRAUGHTS_EGTB": "2"}, "DRAUGHTS_EGTB='2' is neither on nor off"),
    ({"DISCORD_GUILD_ID": "my server"}, "DISCORD_GUILD_ID='my server' is not a Discord server id"),
    ({"DISCORD_SHARD_IDS": "0"}, "DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT"),
    ({"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "0,2"}, "DISCORD_SHARD_IDS names shard 2"),
    ({"TELEGRAM_WEBHOOK_URL": "http://bot.example.org"}, "TELEGRAM_WEBHOOK_URL must be an https:// URL"),
    ({"TELEGRAM_WEBHOOK_URL": "https://bot.example.org", "PORT": "0"}, "PORT='0' is not a port number (1-65535)"),
    ({"TELEGRAM_SHARED_BUDGET": "yes"}, "TELEGRAM_SHARED_BUDGET='yes' is neither 0 nor 1"),
    ({"PORT": "http"}, "PORT='http' is not a port number (0-65535)"),
    ({"WEB_PORT": "99999"}, "WEB_PORT='99999' is not a port number"),
    ({"WEB_MAX_STREAMS": "0"}, "WEB_MAX_STREAMS='0' is not a whole number of at least 1"),
    ({"TELEGRAM_WEBHOOK_URL": "https://bot.example.org", "WEB_URL": "https://board.example.org"}, "set WEB_PORT"),
    ({"WEB_URL": "board.example.org"}, "WEB_URL='board.example.org' is not an http(s) URL"),
    ({"WEB_BASE_URL": "https://damas.example.org/?x=1"}, "WEB_BASE_URL='https://damas.example.org/?x=1'"),
    ({"TELEGRAM_WEBAPP_NAME": "my board"}, "TELEGRAM_WEBAPP_NAME='my board' is not a Mini App short name"),
])
def test_a_wrong_value_is_one_line_naming_the_variable(values: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        from_env(values)
    message = str(err.value)
    assert fragment in message and "\n" not in message
    assert config.problem(values) == message
    assert isinstance(err.value, ValueError)


def test_a_wrong_secret_is_not_repeated() -> None:
    with pytest.raises(ConfigError) as err:
        from_env({"TELEGRAM_WEBHOOK_URL": "https://bot.example.org", "TELEGRAM_WEBHOOK_SECRET": "sëcret value"})
    assert "sëcret" not in str(err.value) and "TELEGRAM_WEBHOOK_SECRET" in str(err.value)


def test_a_cache_folder_that_cannot_hold_files_is_refused(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(ConfigError, match="DRAUGHTS_CACHE_DIR"):
        from_env({"DRAUGHTS_CACHE_DIR": str(a_file / "cache")})
    made = tmp_path / "new" / "cache"
    assert from_env({"DRAUGHTS_CACHE_DIR": str(made)}).engine.cache_dir == made and made.is_dir()


def test_the_engine_follows_its_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The engine's processes (fork server, workers, command-line pools) inherit the environment and
    # ask bot.config for their settings: a change is seen at once, an unchanged one is not parsed again.
    monkeypatch.setenv("DRAUGHTS_EGTB", "off")
    first = config.engine()
    assert first.egtb is False and config.engine() is first
    monkeypatch.setenv("DRAUGHTS_EGTB", "on")
    assert config.engine().egtb is True


def test_the_readmes_layout_names_every_package_and_module() -> None:
    # Issue 31: the "For developers" block had left out storage/postgres.py and platforms/web.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## For developers", 1)[1].split("```", 2)[1]
    bot = REPO / "bot"
    names = [f"bot/{p.name}/" for p in sorted(bot.iterdir()) if (p / "__init__.py").exists()]
    names += [p.name for p in sorted(bot.glob("*.py")) if p.name not in ("__init__.py", "__main__.py")]
    names += [p.name for p in sorted((bot / "storage").glob("*.py")) if p.name != "__init__.py"]
    names += [p.name for p in sorted((bot / "platforms").iterdir()) if (p / "__init__.py").exists()]
    missing = [name for name in names if name not in block]
    assert missing == [], f"README's For developers block does not name: {missing}"


@pytest.mark.parametrize(("variable", "value"), [("WEB_PORT", "http"), ("DISCORD_SHARD_COUNT", "many"),
                                                 ("TELEGRAM_SHARED_BUDGET", "maybe"), ("LOG_LEVEL", "loud")])
def test_the_command_line_refuses_a_wrong_setting_before_anything_starts(
        variable: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from bot import cli

    monkeypatch.setenv(variable, value)
    monkeypatch.setenv("DRAUGHTS_DB", str(tmp_path / "bot.db"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert cli.main(["console"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and f"{variable}={value!r}" in err, err
    assert not (tmp_path / "bot.db").exists()


def test_the_web_board_settings_show_no_token() -> None:
    from bot.platforms.web.server import WebConfig

    token = "123456:ABCDEFsecretsecretsecret"
    config_ = WebConfig(telegram_token=token)
    assert config_.telegram_token == token
    assert token not in repr(config_)
