"""Issue 32: tournaments played to the end in the console by script: an 8-player, 5-round Swiss
and a 5-player round robin, each with one player who never shows up (their games are lost by
forfeit once their clock or the round's deadline passes, moved on with /clock).  Every other game
is typed by its players: both move, then one resigns or they agree a draw.  The standings the bot
shows at the end equal an independent recomputation (bot.tournaments.standings over the pairings
the bot posted and the results this script chose), and `python -m bot tournaments show --json`
agrees with both.  Texts are read by their catalog keys, not their English words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from catalog_text import pattern

from bot.rules import Position
from bot.tournaments import Format, Pairing, Player, Round, Settings, Tournament, standings
from bot.tournaments.model import Result

REPO = Path(__file__).resolve().parents[2]
ABSENT = "Hugo"


def _body(line: str) -> str:
    """A console line without its "[n] bot: " prefix (the first line of a message has it)."""
    return line.split(": ", 1)[1] if line.startswith("[") and ": " in line else line


def _points(value: float) -> str:
    whole = int(value)
    half = abs(value - whole) >= 0.25
    if half:
        return "½" if whole == 0 else f"{whole}½"
    return str(whole)


def _number(value: float) -> str:
    return _points(value) if abs(value * 2 - round(value * 2)) < 1e-9 else f"{value:.2f}"


class Script:
    """Drives the console as each player in turn, and keeps what the script decided."""

    def __init__(self, console) -> None:
        self.console = console
        self.out: list[str] = []
        self.results: dict[int, Result] = {}       # game id -> result chosen by the script

    def feed(self, *lines: str) -> str:
        text = self.console.feed(*lines)
        self.out.append(text)
        return text

    def as_(self, name: str, *lines: str) -> str:
        return self.feed(f"/as {name}", *lines)

    def pairings(self) -> tuple[int, list[tuple[str, str, int]], list[str]] | None:
        """The current round as /tournament pairings shows it: its number, its games (white,
        black, game id), its byes; None once the tournament is over (the chat has none running:
        /tournament pairings then shows the finished one's last round)."""
        if pattern("en", "tournament.none_history").search(self.as_("Admin", "/tournament")) is not None:
            return None
        text = self.as_("Admin", "/tournament pairings")
        title = pattern("en", "tournament.round_title", "tournament.round_title_open").search(text)
        assert title is not None, text
        games, byes = [], []
        for line in text.splitlines():
            line = _body(line)
            if (m := pattern("en", "tournament.board_game").fullmatch(line)) is not None:
                games.append((m["white"], m["black"], int(m["game"])))
            elif (m := pattern("en", "tournament.board_bye").fullmatch(line)) is not None:
                byes.append(m["name"])
        return int(title["round"]), games, byes

    def move(self, name: str, game: int) -> None:
        row = self.console.storage.game(game)
        move = Position.from_fen(row.variant, row.fen).legal_moves()[0]
        before = len(self.console.storage.moves(game))
        out = self.as_(name, f"/m #{game} {move}")
        assert len(self.console.storage.moves(game)) == before + 1, out

    def play(self, white: str, black: str, game: int, how: int) -> None:
        """Both players move, then: 0 black resigns, 1 white resigns, 2 a draw agreed."""
        self.move(white, game)
        self.move(black, game)
        if how == 0:
            self.as_(black, f"/resign #{game}", f"/resign #{game}")
            self.results[game] = "1-0"
        elif how == 1:
            self.as_(white, f"/resign #{game}", f"/resign #{game}")
            self.results[game] = "0-1"
        else:
            self.as_(white, f"/draw #{game}")
            self.as_(black, f"/draw #{game}")
            self.results[game] = "1/2-1/2"
        assert self.console.storage.game(game).status == "finished"


def play_tournament(console, create: str, players: list[str]) -> tuple[Script, list[Round], str]:
    """Creates, joins, starts and plays every round; the rounds as the bot paired them, with the
    results the script chose (the absent player's games: a forfeit against them), and all output."""
    s = Script(console)
    out = s.as_("Admin", create)
    assert pattern("en", "tournament.created").search(out) is not None, out
    for name in players:
        s.as_(name, "/tournament join")
    s.as_("Admin", "/tournament start")
    rounds: list[Round] = []
    while True:
        shown = s.pairings()
        if shown is None:
            break                                       # the tournament is over
        number, games, byes = shown
        assert not rounds or number == rounds[-1].number + 1
        pairings = []
        for board, (white, black, game) in enumerate(games):
            if ABSENT in (white, black):
                # The one who came moves; the absent one never does.
                if black == ABSENT:
                    s.move(white, game)
                s.results[game] = "+-" if black == ABSENT else "-+"
            else:
                s.play(white, black, game, (number + board) % 3)
            pairings.append(Pairing(white, black, s.results[game]))
        pairings += [Pairing(name, None) for name in byes]
        rounds.append(Round(number, tuple(pairings)))
        if any(ABSENT in (w, b) for w, b, _g in games):
            # The absent player's clock runs out (and the round's deadline passes), and the round ends.
            s.feed("/clock +1d2h")
        for _w, _b, game in games:
            assert console.storage.game(game).status == "finished", game
        assert len(rounds) <= 10
    # The bot recorded every result the script played (the absent player's as forfeits).
    stored = {b.game_id: b.result for r in console.service.app.tournaments.rounds(1) for b in r.pairings
              if b.game_id is not None}
    assert stored == s.results
    return s, rounds, "".join(s.out)


def recomputed(fmt: Format, rounds_total: int | None, players: list[str], rounds: list[Round]) -> list[tuple]:
    """The standings from this script's results alone: (name, points, tie-break values) in rank order."""
    settings = Settings(fmt, rounds=rounds_total)
    # The starting order does not change points or tie-breaks; only the last resort of equal ones,
    # which the comparison below leaves to the bot (players equal on everything may come in either order).
    t = Tournament(settings, tuple(Player(p, p) for p in players), tuple(rounds), started=True)
    return [(row.player, _points(row.points), tuple(_number(v) for _tb, v in row.tiebreaks)) for row in standings(t)]


def shown_standings(text: str) -> list[tuple]:
    """The last final standings the bot posted: (name, points, tie-break values) in rank order."""
    final = text.rfind(pattern("en", "tournament.standings_final").search(text)[0])  # type: ignore[index]
    rows = []
    for line in text[final:].splitlines()[1:]:
        m = pattern("en", "tournament.standings_line").fullmatch(line)
        if m is None:
            break
        values = tuple(part for i, part in enumerate(m["tiebreaks"].split()) if i % 2 == 1)
        rows.append((m["name"], m["points"], values))
    return rows


def _same_ranking(bot: list[tuple], ours: list[tuple]) -> None:
    assert len(bot) == len(ours)
    # Points and tie-breaks row by row; names row by row except among players equal on everything.
    assert [(p, tb) for _n, p, tb in bot] == [(p, tb) for _n, p, tb in ours]
    key = {name: (p, tb) for name, p, tb in ours}
    assert all(key[name] == (p, tb) for name, p, tb in bot)


SWISS_PLAYERS = ["Ana", "Bob", "Carla", "Dario", "Elena", "Fabio", "Gina", ABSENT]
ROBIN_PLAYERS = ["Ana", "Bob", "Carla", "Dario", ABSENT]


def test_an_eight_player_swiss_of_five_rounds_to_the_end(console):
    s, rounds, out = play_tournament(console, "/tournament new swiss spanish 5 1h deadline 1d", SWISS_PLAYERS)
    assert [r.number for r in rounds] == [1, 2, 3, 4, 5]
    # No pair met twice, everyone played every round (eight players: no bye).
    met = [frozenset(p.players()) for r in rounds for p in r.pairings]
    assert len(met) == len(set(met)) == 20
    # The absent player lost every game by forfeit.
    hugo = [p for r in rounds for p in r.pairings if ABSENT in p.players()]
    assert len(hugo) == 5 and all(p.result in ("+-", "-+") for p in hugo)
    assert pattern("en", "tournament.winner", id=1).search(out) is not None
    ours = recomputed(Format.SWISS, 5, SWISS_PLAYERS, rounds)
    _same_ranking(shown_standings(out), ours)
    assert shown_standings(out)[-1][0] == ABSENT
    # Asked afterwards, the same standings.
    _same_ranking(shown_standings(s.as_("Ana", "/tournament standings")), ours)


def test_a_five_player_round_robin_to_the_end(console):
    s, rounds, out = play_tournament(console, "/tournament new roundrobin italian 1h deadline 1d", ROBIN_PLAYERS)
    # Five players: five rounds, one bye each round, each pair once.
    assert [r.number for r in rounds] == [1, 2, 3, 4, 5]
    byes = [p.white for r in rounds for p in r.pairings if p.is_bye]
    assert sorted(byes) == sorted(ROBIN_PLAYERS)
    met = [frozenset(p.players()) for r in rounds for p in r.pairings if not p.is_bye]
    assert len(met) == len(set(met)) == 10
    ours = recomputed(Format.ROUND_ROBIN, None, ROBIN_PLAYERS, rounds)
    _same_ranking(shown_standings(out), ours)
    # The history keeps it.
    assert pattern("en", "tournament.history_line", id=1).search(s.as_("Ana", "/tournament history")) is not None


def test_python_m_bot_plays_it_and_the_cli_shows_the_same(tmp_path):
    """A Swiss typed into `python -m bot` over three runs (SQLite), then read back by the operators'
    CLI: its players in rank order with the points and tie-breaks the chat showed."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(DRAUGHTS_DB=str(tmp_path / "cli.db"), DRAUGHTS_IMAGES=str(tmp_path / "boards"),
               PYTHONPATH=str(REPO), LANG="en_US.UTF-8", LOG_LEVEL="WARNING")
    # Four players, two rounds; each round: the first board's black resigns, the other's white.
    lines = ["/as Admin", "/tournament new swiss spanish 2 1h"]
    lines += [x for name in ("Ana", "Bob", "Carla", "Dario") for x in (f"/as {name}", "/tournament join")]
    lines += ["/as Admin", "/tournament start", "/tournament pairings"]
    proc = subprocess.run([sys.executable, "-m", "bot"], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for _round in range(2):
        games = [(m["white"], m["black"], int(m["game"])) for line in proc.stdout.splitlines()
                 if (m := pattern("en", "tournament.board_game").fullmatch(_body(line))) is not None]
        script = []
        for white, black, game in games[-2:]:
            loser = black if game % 2 else white
            script += [f"/as {loser}", f"/resign #{game}", f"/resign #{game}"]
        proc = subprocess.run([sys.executable, "-m", "bot"], input="\n".join([*script, "/as Admin",
                              "/tournament pairings", "/tournament standings"]) + "\n",
                              capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
    shown = [(m["name"], m["points"], tuple(m["tiebreaks"].split()[1::2])) for line in proc.stdout.splitlines()
             if (m := pattern("en", "tournament.standings_line").fullmatch(_body(line))) is not None]
    cli = subprocess.run([sys.executable, "-m", "bot", "tournaments", "show", "1", "--json"], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=60)
    assert cli.returncode == 0, cli.stderr
    data = json.loads(cli.stdout)
    assert data["status"] == "finished", proc.stdout
    cli_rows = [(p["name"], _points(p["points"]), tuple(_number(v) for v in p["tiebreaks"].values()))
                for p in data["standings"]]
    assert cli_rows == shown[-4:]
