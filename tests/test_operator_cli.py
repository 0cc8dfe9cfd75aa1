"""The operator's view (issue 7's contract) and the ratings rebuild (issue 10), as an operator runs
them: ``python -m bot games list [--platform P] [--chat C] [--json]``, ``python -m bot games show
ID [--json]`` and ``python -m bot ratings rebuild``, on a database the real service filled
in-process (typed commands, a fixed clock): each command once in a subprocess, the other cases
through the same ``bot.cli.main`` in this process (see ``run``).

The venv holds a stale non-editable install of ``bot``: PYTHONPATH points the subprocess at the
working tree.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bot import cli
from bot.rules import Game
from bot.service import ChatEvent, GameService
from bot.service.thinking import Thinker
from bot.storage import BOT_ID, SQLiteStore

REPO = Path(__file__).resolve().parents[1]
T0 = 1_700_000_000.0
# A line whose last move is a double capture typed short ("23x5"): stored in full, "23x14x5".
CAPTURE_LINE = ["21-17", "9-13", "22-19", "5-9", "19-15", "12x19", "23x5"]
CAPTURE_FULL = ["21-17", "9-13", "22-19", "5-9", "19-15", "12x19", "23x14x5"]


class Builder:
    def __init__(self, path: Path) -> None:
        self.now = [T0]
        self.storage = SQLiteStore(path)
        self.executor = ThreadPoolExecutor(1)
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(1),
                                   thinker=Thinker(self.executor), bot_seconds=0.2)

    def say(self, user: str, text: str, chat: str = "group-1", platform: str = "test") -> str:
        self.now[0] += 30
        replies = self.service.handle(ChatEvent(platform=platform, chat_id=chat, user_id=user,
                                                user_name=user.capitalize(), chat_kind="group", username=user,
                                                text=text))
        return "\n".join(r.text for r in replies)

    def start(self, white: str, black: str, chat: str = "group-1", platform: str = "test") -> int:
        before = {g.id for g in self.storage.find_games()}
        self.say(white, "/new italian white", chat, platform)
        self.say(black, "/accept", chat, platform)
        (game_id,) = [g.id for g in self.storage.find_games() if g.id not in before]
        return game_id

    def moves(self, game_id: int, white: str, black: str, moves: list[str], chat: str = "group-1",
              platform: str = "test") -> None:
        for i, move in enumerate(moves):
            count = len(self.storage.moves(game_id))
            answer = self.say(white if i % 2 == 0 else black, f"/m #{game_id} {move}", chat, platform)
            assert len(self.storage.moves(game_id)) == count + 1, answer

    def close(self) -> None:
        assert self.service.settle(20)
        self.service.close()
        self.executor.shutdown(wait=True)
        self.storage.close()


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> dict:
    """A database with: #1 ana-bob (a double capture, bob resigns), #2 cid-dan draw in group-2,
    #3 eve-fay on platform 'other' still going, #4 ana against the bot (resigned after two plies),
    #5 unrated (ana resigns before a move); then ana and bob play 4 more rated games."""
    path = tmp_path_factory.mktemp("cli") / "operator.db"
    b = Builder(path)
    info: dict = {"path": path}
    g1 = b.start("ana", "bob")
    b.moves(g1, "ana", "bob", CAPTURE_LINE)
    b.say("bob", f"/resign #{g1}")
    b.say("bob", f"/resign #{g1}")
    g2 = b.start("cid", "dan", chat="group-2")
    b.moves(g2, "cid", "dan", ["22-18", "11-15"], chat="group-2")
    b.say("cid", f"/draw #{g2}", chat="group-2")
    b.say("dan", f"/draw #{g2}", chat="group-2")
    g3 = b.start("eve", "fay", platform="other")
    b.moves(g3, "eve", "fay", ["22-18"], platform="other")
    b.say("ana", "/play italian level 1 white")
    g4 = b.storage.find_games()[0].id
    b.say("ana", f"/m #{g4} 22-18")
    assert b.service.settle(20)
    assert b.storage.game(g4).ply == 2
    b.say("ana", f"/resign #{g4}")
    b.say("ana", f"/resign #{g4}")
    g5 = b.start("ana", "bob")
    b.say("ana", f"/resign #{g5}")
    b.say("ana", f"/resign #{g5}")
    for i in range(4):
        g = b.start("ana", "bob")
        b.moves(g, "ana", "bob", ["22-18", "11-15"])
        loser = "bob" if i % 2 == 0 else "ana"
        b.say(loser, f"/resign #{g}")
        b.say(loser, f"/resign #{g}")
    info["ids"] = {"capture": g1, "draw": g2, "active": g3, "bot": g4, "unrated": g5}
    info["games"] = {g.id: g for g in b.storage.find_games()}
    info["moves"] = {gid: b.storage.moves(gid) for gid in info["games"]}
    dump = b.storage.dump()
    info["ratings"] = sorted(dump["ratings"])
    info["history"] = sorted(dump["rating_history"])
    assert all(g.status == "finished" for gid, g in info["games"].items() if gid != g3)
    b.close()
    return info


def run(*args: str, db: Path | None = None, env_db: Path | None = None,
        process: bool = False) -> subprocess.CompletedProcess:
    """``python -m bot ARGS``: in a subprocess with ``process`` (one test per command does, so the
    entry point itself is run), else through the same ``bot.cli.main`` in this process (the same
    argv, environment, output streams and exit status, without a new interpreter's half second)."""
    argv = [*args] if db is None else [*args, "--db", str(db)]
    if process:
        env = {k: v for k, v in os.environ.items() if k != "DRAUGHTS_DB"}
        env["PYTHONPATH"] = str(REPO)
        if env_db is not None:
            env["DRAUGHTS_DB"] = str(env_db)
        return subprocess.run([sys.executable, "-m", "bot", *argv], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=60)
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("DRAUGHTS_DB", raising=False)
        if env_db is not None:
            patch.setenv("DRAUGHTS_DB", str(env_db))
        patch.chdir(REPO)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main(argv)
            except SystemExit as exit_:
                status = exit_.code if isinstance(exit_.code, int) else 1
    return subprocess.CompletedProcess([sys.executable, "-m", "bot", *argv], status, out.getvalue(), err.getvalue())


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def listed_ids(text: str) -> list[int]:
    ids = []
    for line in text.splitlines():
        assert line.startswith("#"), line
        ids.append(int(line.split("\t")[0][1:]))
    return ids


# -- games list -----------------------------------------------------------------------------------------


def test_games_list_shows_every_game_newest_first(database):
    out = ok(run("games", "list", env_db=database["path"], process=True))
    games = database["games"]
    assert listed_ids(out) == sorted(games, reverse=True)
    lines = {int(line.split("\t")[0][1:]): line.split("\t") for line in out.splitlines()}
    ids = database["ids"]
    g1 = lines[ids["capture"]]
    assert g1 == [f"#{ids['capture']}", "test", "group-1", "italian", "Ana - Bob", "finished", "ply 7",
                  "1-0 (resign)"]
    assert lines[ids["draw"]][1:3] == ["test", "group-2"]
    assert lines[ids["draw"]][3:] == ["italian", "Cid - Dan", "finished", "ply 2", "1/2-1/2 (agreement)"]
    assert lines[ids["active"]][1] == "other" and lines[ids["active"]][5:] == ["active", "ply 1", "*"]
    assert "[bot level 1]" in lines[ids["bot"]][4]


def test_games_list_by_platform_and_chat(database):
    games = database["games"]
    ids = database["ids"]
    out = ok(run("games", "list", "--platform", "other", env_db=database["path"]))
    assert listed_ids(out) == [ids["active"]]
    out = ok(run("games", "list", "--platform", "test", env_db=database["path"]))
    assert listed_ids(out) == sorted((gid for gid, g in games.items() if g.platform == "test"), reverse=True)
    out = ok(run("games", "list", "--chat", "group-2", env_db=database["path"]))
    assert listed_ids(out) == [ids["draw"]]
    out = ok(run("games", "list", "--platform", "test", "--chat", "group-1", env_db=database["path"]))
    expected = sorted((gid for gid, g in games.items() if (g.platform, g.chat_id) == ("test", "group-1")),
                      reverse=True)
    assert listed_ids(out) == expected and ids["active"] not in expected
    # Nothing matches: no lines, still a success.
    assert ok(run("games", "list", "--platform", "nowhere", env_db=database["path"])) == ""


def test_games_list_json(database):
    out = ok(run("games", "list", "--json", env_db=database["path"]))
    data = json.loads(out)
    games = database["games"]
    assert [g["id"] for g in data] == sorted(games, reverse=True)
    for item in data:
        stored = games[item["id"]]
        assert item["platform"] == stored.platform and item["chat"] == stored.chat_id
        assert item["variant"] == "italian"
        assert item["white"] == {"id": stored.white_id, "name": stored.white_name}
        assert item["black"] == {"id": stored.black_id, "name": stored.black_name}
        assert (item["status"], item["ply"], item["fen"]) == (stored.status, stored.ply, stored.fen)
        assert (item["result"], item["reason"]) == (stored.result_score, stored.result_reason)
    filtered = json.loads(ok(run("games", "list", "--json", "--platform", "test", "--chat", "group-2",
                                 env_db=database["path"])))
    assert [g["id"] for g in filtered] == [database["ids"]["draw"]]
    assert json.loads(ok(run("games", "list", "--json", "--chat", "nowhere", env_db=database["path"]))) == []


def test_db_option_wins_over_the_environment(database, tmp_path):
    elsewhere = tmp_path / "elsewhere.db"
    out = ok(run("games", "list", db=database["path"], env_db=elsewhere))
    assert listed_ids(out) == sorted(database["games"], reverse=True)
    assert not elsewhere.exists()


# -- games show -------------------------------------------------------------------------------------------


def replayed_fen(moves: list[str]) -> str:
    game = Game("italian")
    for move in moves:
        game.play(move)
    return game.position.fen()


def test_games_show_json_has_the_whole_game(database):
    gid = database["ids"]["capture"]
    data = json.loads(ok(run("games", "show", str(gid), "--json", env_db=database["path"])))
    stored = database["games"][gid]
    assert data["id"] == gid
    assert (data["platform"], data["chat"], data["variant"]) == ("test", "group-1", "italian")
    assert data["white"] == {"id": "ana", "name": "Ana"} and data["black"] == {"id": "bob", "name": "Bob"}
    assert (data["status"], data["result"], data["reason"]) == ("finished", "1-0", "resign")
    assert data["ply"] == len(CAPTURE_FULL) == 7
    # The moves in full notation: the double capture typed "23x5" is written with every square.
    assert [m["move"] for m in data["moves"]] == CAPTURE_FULL
    assert [m["ply"] for m in data["moves"]] == list(range(1, 8))
    assert [m["by"] for m in data["moves"]] == ["ana", "bob"] * 3 + ["ana"]
    # The FEN is the position those moves lead to (replayed with the rules here).
    assert data["fen"] == stored.fen == replayed_fen(CAPTURE_FULL)
    assert data["start_fen"] is None


def test_games_show_text(database):
    gid = database["ids"]["capture"]
    out = ok(run("games", "show", str(gid), db=database["path"], process=True))
    lines = out.splitlines()
    assert lines[0] == f"game #{gid}: italian on test, chat group-1"
    assert "white: Ana (ana)" in lines and "black: Bob (bob)" in lines
    assert "status: finished: 1-0 (resign)" in lines
    assert "ply: 7" in lines
    assert f"fen: {replayed_fen(CAPTURE_FULL)}" in lines
    assert "moves: 1. 21-17 9-13 2. 22-19 5-9 3. 19-15 12x19 4. 23x14x5" in lines


def test_games_show_a_bot_game_and_an_active_one(database):
    bot = json.loads(ok(run("games", "show", str(database["ids"]["bot"]), "--json", env_db=database["path"])))
    assert bot["bot_level"] == 1 and bot["black"]["id"] == BOT_ID
    assert [m["by"] for m in bot["moves"]] == ["ana", "bot"]
    assert bot["fen"] == replayed_fen([m["move"] for m in bot["moves"]])
    assert "(the bot at level 1)" in ok(run("games", "show", str(database["ids"]["bot"]), env_db=database["path"]))
    active = json.loads(ok(run("games", "show", str(database["ids"]["active"]), "--json",
                               env_db=database["path"])))
    assert (active["status"], active["result"], active["reason"], active["ply"]) == ("active", None, None, 1)
    assert active["platform"] == "other" and [m["move"] for m in active["moves"]] == ["22-18"]
    text = ok(run("games", "show", str(database["ids"]["unrated"]), env_db=database["path"]))
    assert "moves: (none)" in text.splitlines()


def test_games_show_a_missing_id_fails_on_stderr(database):
    proc = run("games", "show", "9999", env_db=database["path"], process=True)
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert "9999" in proc.stderr and "no game" in proc.stderr
    proc = run("games", "show", "9999", "--json", db=database["path"])
    assert proc.returncode != 0 and proc.stdout == "" and "9999" in proc.stderr


def test_games_list_on_a_missing_database_fails(tmp_path):
    missing = tmp_path / "typo.db"
    proc = run("games", "list", db=missing)
    assert not missing.exists()
    assert proc.returncode != 0 and proc.stderr


# -- ratings rebuild -----------------------------------------------------------------------------------------


def test_ratings_rebuild_prints_counts_and_keeps_the_numbers(database, tmp_path):
    # On a copy, so the other tests keep their database as it was built (closed: no WAL left).
    copy = tmp_path / "copy.db"
    shutil.copyfile(database["path"], copy)
    for suffix in ("-wal", "-shm"):
        if Path(f"{database['path']}{suffix}").exists():
            shutil.copyfile(f"{database['path']}{suffix}", f"{copy}{suffix}")
    # Forget every rating first, so the numbers below can only come from the rebuild.
    store = SQLiteStore(copy)
    try:
        assert sorted(store.dump()["ratings"]) == database["ratings"] != []
        store.clear_ratings()
        assert store.dump()["ratings"] == [] and store.dump()["rating_history"] == []
    finally:
        store.close()
    out = ok(run("ratings", "rebuild", env_db=copy, process=True))
    # 1 capture game + 1 draw + 1 bot game + 4 more; the active one and the unrated one left out.
    assert out.strip() == "ratings rebuilt from 7 rated games and 0 rated puzzle attempts"
    store = SQLiteStore(copy)
    try:
        after = store.dump()
        assert sorted(after["ratings"]) == database["ratings"]
        assert sorted(after["rating_history"]) == database["history"]
        assert store.rating("test", "ana", "italian").games == 5
        assert store.rating("test", "ana", "italian:bot").games == 1
        assert store.rating("other", "eve", "italian") is None
    finally:
        store.close()
    # --db works too, and a second rebuild is as good as the first.
    assert ok(run("ratings", "rebuild", db=copy)).strip() == out.strip()
    store = SQLiteStore(copy)
    try:
        assert sorted(store.dump()["ratings"]) == database["ratings"]
        assert sorted(store.dump()["rating_history"]) == database["history"]
    finally:
        store.close()
