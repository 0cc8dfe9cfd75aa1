"""One command table: a command declared in the registry alone is routed, listed in /help in
every language, and offered by the platforms."""

from __future__ import annotations

import dataclasses

import pytest

from bot.i18n import LANGUAGES, catalog
from bot.service import Reply
from bot.service.chat import layer as chat_layer
from bot.service.chat.registry import REGISTRY, Arg, ArgKind, ButtonKind, CommandSpec, Permission, action, command


@pytest.fixture
def throwaway(monkeypatch):
    """/coin (es /moneda, it /moneta): a command that exists only for this test."""
    @command("coin", {"es": ("moneda",), "it": ("moneta",)}, (Arg("side", ArgKind.TEXT),))
    def coin(app, ctx, args):
        return [Reply(f"coin for {ctx.event.user_name}: {' '.join(args) or '-'}")]

    spec = REGISTRY.lookup("coin")
    assert spec.handler is coin
    for lang, line in (("en", "[side] - toss a coin"), ("es", "[cara|cruz] - lanza una moneda"),
                       ("it", "[testa|croce] - lancia una moneta")):
        monkeypatch.setitem(catalog(lang), "help.coin", line)
    yield spec
    REGISTRY.remove("coin")


def test_a_registered_command_is_routed_by_name_and_by_alias(chat, throwaway):
    assert chat.text("ana", "/coin heads") == "coin for Ana: heads"
    assert chat.text("ana", "/moneda cara") == "coin for Ana: cara"
    assert chat.text("ana", "/moneta") == "coin for Ana: -"


@pytest.mark.parametrize("lang, line, alias", [
    ("en", "/coin [side] - toss a coin", None),
    ("es", "/coin [cara|cruz] - lanza una moneda", "/moneda"),
    ("it", "/coin [testa|croce] - lancia una moneta", "/moneta"),
])
def test_a_registered_command_is_in_help_in_every_language(chat, throwaway, lang, line, alias):
    chat.say("ana", f"/lang {lang}", admin=True)
    text = chat.text("ana", "/help")
    assert line in text.split("\n")
    if alias:
        assert alias in text.split("\n")[-1]


def test_every_declared_command_has_a_help_line_in_every_language():
    for spec in REGISTRY:
        if spec.listed:
            for lang in LANGUAGES:
                assert f"help.{spec.name}" in catalog(lang), (lang, spec.name)
        assert callable(spec.handler)


def test_admin_only_commands_are_refused_to_others(chat, monkeypatch):
    spec = CommandSpec("purge", chat_layer.help_, {}, permission=Permission.ADMINS, listed=False)
    REGISTRY.add(spec)
    try:
        refused = chat.text("ana", "/purge")
        assert "/purge" in refused and "admin" in refused.lower()
        allowed = chat.service.handle(dataclasses.replace(chat.event("ana", "/purge"), is_admin=True))
        assert "/new" in allowed[0].text
    finally:
        REGISTRY.remove("purge")


def test_a_name_cannot_mean_two_commands():
    with pytest.raises(ValueError):
        REGISTRY.add(CommandSpec("tablas2", chat_layer.draw, {"es": ("tablas",)}))
    assert REGISTRY.lookup("tablas").name == "draw"


def test_button_actions_come_from_the_table():
    assert action(ButtonKind.SELECT, 7, 12, 22) == "s:7:12:22"
    assert REGISTRY.button("s").numbers == 3
    assert REGISTRY.button("zz") is None


async def test_a_registered_command_is_in_the_discord_command_tree(chat, throwaway):
    from bot.platforms.discord import build_bot

    bot = build_bot(service=chat.service)        # built, never logged in: the tree is all there is
    command = bot.tree.get_command("coin")
    assert command is not None and command.description == "Toss a coin"
    assert [p.name for p in command.parameters] == ["side"]
    assert not command.parameters[0].required
    assert {c.name for c in bot.tree.get_commands()} == {spec.name for spec in REGISTRY}
