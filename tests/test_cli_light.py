"""``python -m bot`` parses the commands it declares itself (console, web, telegram, discord, rules)
without importing the modules that add the others (issue 31, item 8): their imports load the engine,
the storage and the service, about 0.4 s of CPU that every ``python -m bot rules`` paid."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from bot import cli

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("numba", "bot.ai", "bot.storage", "bot.service", "bot.puzzles.cli", "bot.operator_cli",
         "bot.tournaments_cli")


def test_a_rules_command_loads_neither_the_engine_nor_the_storage():
    probe = ("import sys; from bot.cli import main; code = main(['rules', 'moves', '--variant', 'italian']); "
             f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 []"
    assert len(done.stdout.splitlines()) > 1                # the moves themselves are still printed


@pytest.mark.parametrize("argv", [
    [], ["console"], ["console", "--db", "x.db", "--images", "boards"], ["web", "--db", "x.db"], ["telegram"],
    ["discord"], ["discord", "sync"], ["rules", "moves", "--variant", "italian", "--json"],
    ["rules", "perft", "--variant", "spanish", "--depth", "3", "--time"],
    ["rules", "check", "--variant", "triestina", "--fen", "start", "22-18"],
])
def test_the_own_commands_parse_the_same_without_the_added_ones(argv):
    whole = vars(cli.build_parser().parse_args(argv))
    light = vars(cli.build_parser(argv[0] if argv else "console").parse_args(argv))
    assert light == whole


@pytest.mark.parametrize("argv", [
    ["ai", "move", "--variant", "italian", "--level", "2"], ["ai", "egtb", "build", "--pieces", "3", "--jobs", "0"],
    ["puzzles", "check", "--jobs", "2"], ["games", "list", "--db", "x.db"], ["ratings", "rebuild", "--db", "x.db"],
    ["db", "copy", "--to", "postgresql://u@h/d", "--from", "a.db"], ["tournaments", "list", "--json"],
])
def test_the_added_commands_parse_the_same_with_only_their_module(argv):
    whole = cli.build_parser()
    try:
        expected = vars(whole.parse_args(argv))
    except SystemExit:
        pytest.fail(f"not a command line of the whole parser: {argv}")
    assert vars(cli.build_parser(argv[0]).parse_args(argv)) == expected


def test_every_command_is_own_or_added_by_the_module_named():
    whole = cli.build_parser()
    [commands] = [a for a in whole._actions if isinstance(a, argparse._SubParsersAction)]
    for name in commands.choices:
        assert name in cli.OWN_COMMANDS or name in cli.ADDED_BY, name
    for name in cli.ADDED_BY:
        [light] = [a for a in cli.build_parser(name)._actions if isinstance(a, argparse._SubParsersAction)]
        assert name in light.choices


def test_an_engine_command_loads_neither_the_storage_nor_the_other_commands():
    probe = ("import sys; from bot.cli import build_parser; build_parser('ai').parse_args(['ai', 'move', "
             "'--variant', 'italian']); print(sorted(m for m in ('bot.storage', 'bot.service', 'bot.puzzles.cli', "
             "'bot.operator_cli', 'bot.tournaments_cli') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def test_help_and_the_other_commands_still_have_everything(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--help"])
    assert stop.value.code == 0
    listed = capsys.readouterr().out
    for command in ("console", "rules", "ai", "puzzles", "games", "ratings", "db", "tournaments"):
        assert command in listed
    for argv in (["puzzles", "check", "--jobs", "2"], ["ai", "egtb", "build", "--pieces", "3"]):
        assert cli.build_parser(argv[0]).parse_args(argv).command == argv[0]
