"""Command line: ``python -m bot [console|telegram|discord|rules|ai|puzzles|games|ratings|db|tournaments] ...``."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from typing import NoReturn

from bot.arguments import whole_number
from bot.rules import VARIANTS, IllegalMove, Position, perft

# --db on every command that opens the bot's database.
DB_HELP = "database file or postgresql:// URL (default: $DATABASE_URL, else $DRAUGHTS_DB, else draughts.db)"
# The deepest perft asked for (depth 12 already takes hours).
MAX_PERFT_DEPTH = 30
# The longest a search may be given from the command line.
MAX_SEARCH_SECONDS = 3600.0


class Parser(argparse.ArgumentParser):
    """Bad arguments are one line on stderr, saying what is wrong and where the usage is, and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def seconds(high: float) -> Callable[[str], float]:
    """An argument type: a number of seconds above 0 and at most ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            value = math.nan
        if not 0 < value <= high:           # NaN fails too
            raise argparse.ArgumentTypeError(f"expected a number of seconds above 0 and at most {high:g}, "
                                             f"got {text!r}")
        return value
    return parse


def _position(variant: str, fen: str) -> Position:
    if fen.strip().lower() == "start":
        return Position.start(variant)
    return Position.from_fen(variant, fen)


def _moves_line(pos: Position, as_json: bool) -> str:
    moves = pos.legal_moves()
    if as_json:
        return json.dumps([{"path": list(m.path), "captured": list(m.captured)} for m in moves])
    return "\n".join(str(m) for m in moves)


def rules_moves(args: argparse.Namespace) -> int:
    """Print the legal moves of one FEN, or of every FEN line on standard input."""
    if args.fen != "-":
        try:
            pos = _position(args.variant, args.fen)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        text = _moves_line(pos, args.json)
        if text:
            print(text)
        return 0
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            pos = _position(args.variant, line)
        except ValueError as err:
            out.write(json.dumps({"error": str(err)}) + "\n")
            continue
        if args.json:
            out.write(_moves_line(pos, True) + "\n")
        else:
            out.write(" ".join(str(m) for m in pos.legal_moves()) + "\n")
    return 0


def rules_perft(args: argparse.Namespace) -> int:
    """Print ``D LEAVES`` for each depth 1..N."""
    try:
        pos = _position(args.variant, args.fen)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for depth in range(1, args.depth + 1):
        started = time.perf_counter()
        leaves = perft(pos, depth)
        if args.time:
            print(f"{depth} {leaves} {time.perf_counter() - started:.3f}s", flush=True)
        else:
            print(f"{depth} {leaves}", flush=True)
    return 0


def rules_check(args: argparse.Namespace) -> int:
    """Explain whether a typed move is legal in a position."""
    try:
        pos = _position(args.variant, args.fen)
        move = pos.parse_move(args.move)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except IllegalMove as err:
        print(f"illegal: {err}")
        return 1
    print(f"legal: {move}")
    return 0


def ai_move(args: argparse.Namespace) -> int:
    """Print the engine's move in full notation on the last line."""
    from bot.ai import choose_move
    try:
        pos = _position(args.variant, args.fen)
        result = choose_move(pos.variant, pos.fen(), args.level, args.time)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    pv = " ".join(str(m) for m in result.pv)
    print(f"score {result.score} depth {result.depth} nodes {result.nodes} "
          f"time {result.seconds:.2f}s pv {pv}")
    print(result.move)
    return 0


def ai_analyse(args: argparse.Namespace) -> int:
    """Print each game of a PDN file with the engine's marks and better moves."""
    from bot.ai import analyse_game, annotate_pdn
    from bot.rules import read_pdn
    try:
        with open(args.pdn, encoding="utf-8") as f:
            games = read_pdn(f.read(), args.variant)
    except (OSError, UnicodeDecodeError, ValueError, IllegalMove) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for game in games:
        print(annotate_pdn(game, analyse_game(game, args.time)))
    return 0


# The commands this module declares itself.  A run of one of them (or of none: the console) parses
# the same without the commands other modules add, whose modules load the engine, the storage or the
# service when imported (about 0.4 s of CPU, paid by every ``python -m bot rules`` before).
OWN_COMMANDS = frozenset({"console", "web", "telegram", "discord", "rules"})
# The commands the other modules add, each with the one module a run of it needs ("ai" is ours, with
# the endgame tables' commands added under it); a command not named here gets every module.
ADDED_BY = {"puzzles": "puzzles", "games": "operator", "ratings": "operator", "db": "operator",
            "tournaments": "tournaments", "ai": "egtb"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``command`` one of OWN_COMMANDS or ADDED_BY, only the commands
    of the modules a run of it needs (``python -m bot --help`` and any other word get them all)."""
    if command in OWN_COMMANDS:
        wanted: set[str] = set()
    elif command in ADDED_BY:
        wanted = {ADDED_BY[command]}
    else:
        wanted = {"puzzles", "operator", "tournaments", "egtb"}
    parser = Parser(prog="python -m bot", description="Draughts bot for chats.")
    sub = parser.add_subparsers(dest="command")
    console = sub.add_parser("console", help="local chat on standard input (the default without tokens)")
    console.add_argument("--db", help=DB_HELP)
    console.add_argument("--images", default=None, help="folder for board images")
    web = sub.add_parser("web", help="the console chat with the web board next to it ($PORT, default 8080; "
                                     "$WEB_HOST, default 127.0.0.1)")
    web.add_argument("--db", help=DB_HELP)
    web.add_argument("--images", default=None, help="folder for board images")
    sub.add_parser("telegram", help="run the Telegram bot (needs TELEGRAM_BOT_TOKEN)")
    discord = sub.add_parser("discord", help="run the Discord bot (needs DISCORD_BOT_TOKEN)")
    discord.add_argument("action", nargs="?", choices=["run", "sync"], default="run")
    rules = sub.add_parser("rules", help="check positions with the rules engine")
    rsub = rules.add_subparsers(dest="rules_command", required=True)
    for name, func, help_text in (
        ("moves", rules_moves, "legal moves of a FEN (or of each FEN line on stdin with --fen -)"),
        ("perft", rules_perft, "perft leaf counts from a position"),
        ("check", rules_check, "is a typed move legal, and if not, why"),
    ):
        p = rsub.add_parser(name, help=help_text)
        p.add_argument("--variant", required=True, choices=sorted(VARIANTS))
        p.add_argument("--fen", default="start", help="FEN, 'start', or '-' (moves only: one FEN per stdin line)")
        p.set_defaults(func=func)
        if name == "moves":
            p.add_argument("--json", action="store_true", help='JSON list of {"path": [...], "captured": [...]}')
        if name == "perft":
            p.add_argument("--depth", type=whole_number(1, MAX_PERFT_DEPTH), required=True)
            p.add_argument("--time", action="store_true", help="also print seconds per depth")
        if name == "check":
            p.add_argument("move")
    if "puzzles" in wanted:
        from bot.puzzles.cli import add_commands as add_puzzle_commands
        add_puzzle_commands(sub)
    if "operator" in wanted:
        from bot.operator_cli import add_commands as add_operator_commands
        add_operator_commands(sub)
    if "tournaments" in wanted:
        from bot.tournaments_cli import add_commands as add_tournament_commands
        add_tournament_commands(sub)
    ai = sub.add_parser("ai", help="the draughts engine")
    asub = ai.add_subparsers(dest="ai_command", required=True)
    move = asub.add_parser("move", help="the engine's move for a FEN (printed on the last line)")
    move.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    move.add_argument("--fen", default="start", help="FEN or 'start'")
    move.add_argument("--level", type=int, default=3, choices=range(1, 6), metavar="1-5")
    move.add_argument("--time", type=seconds(MAX_SEARCH_SECONDS), default=None,
                      help="seconds at most (default: the level's own)")
    move.set_defaults(func=ai_move)
    analyse = asub.add_parser("analyse", help="annotate the games of a PDN file")
    analyse.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    analyse.add_argument("--pdn", required=True, help="PDN file")
    analyse.add_argument("--time", type=seconds(MAX_SEARCH_SECONDS), default=None,
                         help="seconds per search (default: node budgets, the same notes on any machine)")
    analyse.set_defaults(func=ai_analyse)
    if "egtb" in wanted:
        from bot.ai.egtb.cli import add_commands as add_egtb_commands
        add_egtb_commands(asub)
    # The ranges are the puzzles' and the tables' options (reading them imports the engine's tables).
    _bound_numbers(parser, ranges=None if wanted & {"puzzles", "egtb"} else {})
    return parser


def number_ranges() -> dict[tuple[str, ...], tuple[int, int]]:
    """The whole-number options the other modules' commands declare as plain ints, and their ranges."""
    from bot.ai.egtb.cli import MAX_PIECES

    return {
        ("puzzles", "generate", "count"): (1, 100_000),
        ("puzzles", "generate", "seed"): (0, 2**63 - 1),
        ("puzzles", "generate", "first_game"): (1, 10**9),
        ("puzzles", "generate", "per_puzzle"): (1, 100),
        ("puzzles", "check", "jobs"): (1, 64),
        ("ai", "egtb", "build", "pieces"): (2, MAX_PIECES),
        ("ai", "egtb", "build", "jobs"): (0, 64),           # 0: one per CPU
    }


def _bound_numbers(parser: argparse.ArgumentParser, path: tuple[str, ...] = (),
                   ranges: dict[tuple[str, ...], tuple[int, int]] | None = None) -> None:
    """Give each plain ``int`` option its range from ``number_ranges`` (a number out of it is refused
    by the parser, in one line, like a word where a number belongs)."""
    ranges = number_ranges() if ranges is None else ranges
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                _bound_numbers(sub, (*path, name), ranges)
        elif action.type is int and (*path, action.dest) in ranges:
            low, high = ranges[(*path, action.dest)]
            action.type = whole_number(low, high)


def plain_numbers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The options still typed as a bare ``int`` or ``float`` (no range): none, tests check."""
    found: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += plain_numbers(sub, (*path, name))
        elif action.type in (int, float) and action.choices is None:
            found.append((*path, action.dest))
    return found


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else "console").parse_args(argv)
    if args.command != "rules":
        # The environment, read once for the whole run (the rules commands need nothing of it): a
        # wrong setting is one line and nothing started.
        from bot.config import ConfigError, load

        try:
            args.settings = load()
        except ConfigError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    if args.command in ("rules", "puzzles", "ai", "games", "ratings", "db", "tournaments"):
        try:
            return args.func(args)
        except BrokenPipeError:
            # The reader went away (piped into `head`): stop quietly, without a traceback.
            import os
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    from bot.app import run
    return run(args)
