"""The tournaments use case (issue 32) on the real service (a SQLite file, the rules, the bus):
a Swiss and a round robin played to the end through the normal Play use case with a clock, one
absent player who never moves (forfeits, unrated), a round deadline that forfeits and adjudicates,
withdrawals, and bad input that changes nothing.  Standings are checked against a recomputation
from the stored games and against the TRF read back by caissify-pairings' checker."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from caissify_pairings.fpc import check_trf
from caissify_pairings.trf import parse_trf
from fresh_db import fresh_database
from harness import GROUP, PLATFORM, ChatHarness, internal_error_texts

from bot.rules import Position
from bot.service import GameService
from bot.service.features.identity import Caller, Mention, Player, Where
from bot.service.features.results import MoveRequest
from bot.service.features.results_games import GameRef
from bot.service.features.results_tournaments import (
    Joined,
    Left,
    NewTournamentArgs,
    NoTournament,
    PairingsShown,
    StandingsView,
    Started,
    TournamentCreated,
    TournamentHistory,
    TournamentRefused,
    TournamentShown,
)
from bot.service.features.tournaments import game_result
from bot.service.notifications import TournamentBye, from_json

HOUR = 3600
DAY = 24 * HOUR
WHERE = Where(PLATFORM, GROUP)


class PgHarness(ChatHarness):
    """The chat harness on a PostgreSQL database of the test's own (tests/pg_server.py)."""

    def __init__(self, url: str, now: list[float]) -> None:
        from bot.storage.postgres import PostgresStore

        self.db_path = Path(url)
        self.now = now
        self.storage = PostgresStore(url)  # type: ignore[assignment]
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(1))
        self.actions = []
        self.noted = {"players": [], "chats": []}
        self._internal = internal_error_texts()


@pytest.fixture(params=["sqlite", "postgres"])
def chat(request, tmp_path: Path, now: list[float]):
    """Each test on a SQLite file and on PostgreSQL (skipped where no server can run)."""
    if request.param == "sqlite":
        harness = ChatHarness(fresh_database(tmp_path / "t.db"), now)
    else:
        harness = PgHarness(request.getfixturevalue("pg_url"), now)
    yield harness
    harness.storage.close()


def caller(chat, user: str) -> Caller:
    now = chat.now[0]
    record = chat.storage.ensure_chat(PLATFORM, GROUP, "group", now)
    return Caller(Player(PLATFORM, user, user.capitalize(), user), WHERE, now, now, record)


def tournaments(chat):
    return chat.service.app.tournaments


def notices(chat) -> list[dict]:
    out = []
    for row in chat.storage.outbox.find(PLATFORM):
        data = json.loads(row.payload)
        if isinstance(data, dict) and str(data.get("notice", "")).startswith("tournament_"):
            out.append(data)
    return out


def open_tournament(chat, fmt: str, players: list[str], **kw) -> int:
    created = tournaments(chat).create(caller(chat, "admin"), NewTournamentArgs(fmt, "italian", **kw), "en")
    assert isinstance(created, TournamentCreated), created
    for p in players:
        assert isinstance(tournaments(chat).join(caller(chat, p)), Joined)
    return created.tournament.id


def play_round(chat, tid: int, absent: set[str], rng: random.Random, adjourn: int = 0) -> None:
    """Every game of the current round: both players move once (the absent one never), then a
    resignation or an agreed draw; ``adjourn`` games are left running with moves played."""
    uc = tournaments(chat)
    rnd = uc.pairings(WHERE, tournament_id=tid)
    assert isinstance(rnd, PairingsShown)
    for board in rnd.round.pairings:
        if board.game_id is None or board.result is not None:
            continue
        gid = board.game_id
        white, black = board.white_id, board.black_id
        assert black is not None
        if white in absent:
            continue
        for user in (white, black):
            if user in absent:
                break
            move = str(Position.from_fen("italian", chat.game(gid).fen).legal_moves()[0])
            chat.service.app.play.move(caller(chat, user), MoveRequest(move, game=gid))
        if white in absent or black in absent:
            continue
        if adjourn > 0:
            adjourn -= 1
            for user in (white, black):      # a few more moves, then left for the deadline
                move = str(Position.from_fen("italian", chat.game(gid).fen).legal_moves()[0])
                chat.service.app.play.move(caller(chat, user), MoveRequest(move, game=gid))
            continue
        if rng.random() < 0.3:
            chat.service.app.play.draw(caller(chat, white), GameRef(gid))
            chat.service.app.play.draw(caller(chat, black), GameRef(gid))
        else:
            loser = rng.choice([white, black])
            chat.service.app.play.resign(caller(chat, loser), GameRef(gid))
            chat.service.app.play.resign(caller(chat, loser), GameRef(gid))     # confirmed
        assert chat.game(gid).status == "finished"


def recomputed_points(chat, tid: int) -> dict[str, float]:
    """Each player's points from the stored games alone (a forfeit scores as the game's winner),
    plus byes and withdrawn players' forfeits without a game, read from the rounds."""
    uc = tournaments(chat)
    info = uc.view(tid)
    assert info is not None
    points = {p.player_id: 0.0 for p in info.players}
    for rnd in uc.rounds(tid):
        for board in rnd.pairings:
            if board.black_id is None:
                points[board.white_id] += info.bye_points
                continue
            if board.game_id is None:
                w, b = {"+-": (1.0, 0.0), "-+": (0.0, 1.0)}[board.result or ""]
            else:
                game = chat.game(board.game_id)
                assert game.status == "finished"
                assert game_result(game) == board.result
                w = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[game.result_score or ""]
                b = 1.0 - w
            points[board.white_id] += w
            points[board.black_id] += b
    return points


def check_finished(chat, tid: int) -> StandingsView:
    uc = tournaments(chat)
    table = uc.standings(WHERE, tid)
    assert isinstance(table, StandingsView) and table.final
    recomputed = recomputed_points(chat, tid)
    assert {r.player_id: r.points for r in table.rows} == recomputed
    assert [r.rank for r in table.rows] == sorted(r.rank for r in table.rows)
    trf = uc.trf(tid)
    assert trf is not None
    # The TRF read back: each player's points as the standings have them; a Swiss's every round
    # is the one the library's checker pairs from the rounds before it.
    parsed = parse_trf(trf)
    info = uc.view(tid)
    assert info is not None
    seeds = [p.player_id for p in info.players]
    assert {seeds[p["starting_number"] - 1]: float(p["score"]) for p in parsed["players"]} == recomputed
    if info.format == "swiss":
        report = check_trf(trf)
        assert report["summary"]["rounds_mismatched"] == 0
        assert report["summary"]["rounds_matched"] == len(uc.rounds(tid))
    info = uc.view(tid)
    assert info is not None and info.status == "finished" and info.winner_id == table.rows[0].player_id
    kinds = [n["notice"] for n in notices(chat) if n["tournament_id"] == tid]
    assert kinds.count("tournament_finished") == 1
    assert kinds.count("tournament_round_paired") == len(uc.rounds(tid))
    assert kinds.count("tournament_round_ended") == len(uc.rounds(tid))
    # Every notice reads back as its typed notification.
    for n in notices(chat):
        from_json(n)
    return table


def test_an_8_player_5_round_swiss_to_the_end_with_an_absent_player(chat):
    players = [f"p{i}" for i in range(1, 9)]
    tid = open_tournament(chat, "swiss", players, rounds=5, move_seconds=HOUR)
    started = tournaments(chat).start(caller(chat, "admin"))
    assert isinstance(started, Started) and len(started.round.pairings) == 4
    rng = random.Random(5)
    absent = {"p8"}
    for number in range(1, 6):
        play_round(chat, tid, absent, rng)
        chat.now[0] += 2 * HOUR               # the absent player's clock runs out: a forfeit
        chat.service.run_due(PLATFORM)
        info = tournaments(chat).view(tid)
        assert info is not None
        assert info.round == min(number + 1, 5) or info.status == "finished"
    table = check_finished(chat, tid)
    assert len(table.rows) == 8
    # p8 never moved: each of their games is a forfeit ("+-" or "-+"), and none is rated.
    for rnd in tournaments(chat).rounds(tid):
        for board in rnd.pairings:
            if "p8" in (board.white_id, board.black_id) and board.black_id is not None:
                assert board.result == ("-+" if board.white_id == "p8" else "+-")
                assert board.game_id is not None
                assert chat.storage.ratings.history(PLATFORM, "p8", "italian") == []
    # No pair played each other twice (a forfeit is no game played: FIDE C.04.1 lets that pair meet
    # again), a bye at most once each.
    rounds = tournaments(chat).rounds(tid)
    met = [frozenset((b.white_id, b.black_id)) for r in rounds for b in r.pairings
           if b.black_id is not None and b.result in ("1-0", "0-1", "1/2-1/2")]
    assert len(met) == len(set(met))
    byes = [b.white_id for r in rounds for b in r.pairings if b.black_id is None]
    assert len(byes) == len(set(byes))


def test_a_5_player_round_robin_with_a_round_deadline_that_forfeits_and_adjudicates(chat):
    players = ["ana", "bob", "cid", "dan", "eve"]
    tid = open_tournament(chat, "roundrobin", players, move_seconds=7 * DAY, round_seconds=DAY)
    assert isinstance(tournaments(chat).start(caller(chat, "admin")), Started)
    rng = random.Random(2)
    adjudicated_once = False
    for _ in range(5):
        # The first round leaves one game running with moves: the deadline adjudicates it.
        play_round(chat, tid, {"eve"}, rng, adjourn=0 if adjudicated_once else 1)
        adjudicated_once = True
        chat.now[0] += DAY + 1
        chat.service.run_due(PLATFORM)
    table = check_finished(chat, tid)
    assert table.cross is not None and len(table.cross) == 5
    assert all(table.cross[i][i] == "x" for i in range(5))
    assert all(cell is not None for i, line in enumerate(table.cross) for j, cell in enumerate(line) if i != j)
    reasons = [chat.game(b.game_id).result_reason for r in tournaments(chat).rounds(tid) for b in r.pairings
               if b.game_id is not None]
    assert "adjudicated" in reasons
    ended = [n for n in notices(chat) if n["notice"] == "tournament_round_ended"]
    assert any(n.get("adjudicated") for n in ended) and any(n.get("forfeited") for n in ended)
    # A forfeit at the deadline shows its final board as any loss on time does.
    lost = {json.loads(r.payload).get("game_id") for r in chat.storage.outbox.find(PLATFORM)
            if json.loads(r.payload).get("notice") == "lost_on_time"}
    assert {gid for n in ended for gid in n.get("forfeited", ())} <= lost
    # Each pair met exactly once (Berger tables), each player had one bye (5 players).
    rounds = tournaments(chat).rounds(tid)
    met = [frozenset((b.white_id, b.black_id)) for r in rounds for b in r.pairings if b.black_id is not None]
    assert len(met) == len(set(met)) == 10
    byes = [b.white_id for r in rounds for b in r.pairings if b.black_id is None]
    assert sorted(byes) == sorted(players)
    assert isinstance(tournaments(chat).history(WHERE), TournamentHistory)


def test_bad_input_changes_nothing(chat):
    uc = tournaments(chat)
    assert isinstance(uc.join(caller(chat, "ana")), NoTournament)
    assert isinstance(uc.start(caller(chat, "ana")), NoTournament)
    assert uc.create(caller(chat, "a"), NewTournamentArgs("knockout"), "en") == TournamentRefused(
        "bad_format", (("format", "knockout"),))
    assert uc.create(caller(chat, "a"), NewTournamentArgs("swiss", "italian", rounds=0), "en").code == "bad_rounds"
    assert uc.create(caller(chat, "a"), NewTournamentArgs("swiss", "chess", rounds=3), "en").code == "unknown_variant"
    assert chat.storage.tournaments.find() == []
    tid = open_tournament(chat, "swiss", ["ana", "bob"], rounds=3)
    before = chat.snapshot()
    assert uc.create(caller(chat, "a"), NewTournamentArgs("swiss", rounds=3), "en").code == "already_running"
    assert uc.join(caller(chat, "ana")) == TournamentRefused("already_joined")
    assert uc.leave(caller(chat, "zed")) == TournamentRefused("not_in")
    # A refusal carries the numbers its sentence names (the chat layer adds nothing).
    assert uc.start(caller(chat, "admin")) == TournamentRefused("too_few", (("least", 3), ("count", 2)))
    assert uc.pairings(WHERE) == TournamentRefused("no_round")
    assert chat.snapshot() == before
    # Leaving before the start removes; joining again works.
    left = uc.leave(caller(chat, "bob"))
    assert isinstance(left, Left) and left.removed and [p.player_id for p in left.tournament.players] == ["ana"]
    for p in ("bob", "cid", "dan"):
        uc.join(caller(chat, p))
    assert isinstance(uc.start(caller(chat, "admin")), Started)
    before = chat.snapshot()
    assert uc.join(caller(chat, "eve")) == TournamentRefused("already_started")
    # Starting again has its own code (its sentence is not the closed registration's).
    assert uc.start(caller(chat, "admin")) == TournamentRefused("running", (("round", 1),))
    assert uc.pairings(WHERE, 7) == TournamentRefused("no_such_round", (("round", 7), ("count", 1)))
    assert chat.snapshot() == before
    shown = uc.current(WHERE)
    assert isinstance(shown, TournamentShown) and shown.tournament.id == tid and shown.round is not None


def test_a_withdrawal_forfeits_the_running_game_and_past_results_stand(chat):
    tid = open_tournament(chat, "swiss", ["ana", "bob", "cid", "dan"], rounds=3, move_seconds=HOUR)
    tournaments(chat).start(caller(chat, "admin"))
    play_round(chat, tid, set(), random.Random(1))
    rnd = tournaments(chat).pairings(WHERE, tournament_id=tid)
    assert isinstance(rnd, PairingsShown) and rnd.round.number == 2
    board = next(b for b in rnd.round.pairings if "ana" in (b.white_id, b.black_id))
    left = tournaments(chat).leave(caller(chat, "ana"))
    assert isinstance(left, Left) and not left.removed and left.forfeited == (board.game_id,)
    assert board.game_id is not None and chat.game(board.game_id).status == "finished"
    assert tournaments(chat).leave(caller(chat, "ana")) == TournamentRefused("already_left")
    after = tournaments(chat).rounds(tid)
    mine = next(b for b in after[1].pairings if "ana" in (b.white_id, b.black_id))
    assert mine.result == ("-+" if mine.white_id == "ana" else "+-")
    assert after[0] == tournaments(chat).rounds(tid)[0]


def test_a_result_recorded_twice_or_a_round_paired_twice_cannot_happen(chat):
    """The tournament row is saved by compare-and-set: a second save from the same version is a
    contention and changes nothing (the facade runs the command again on the new state)."""
    from bot.storage import StorageContention
    from bot.storage.repositories import TournamentChange

    tid = open_tournament(chat, "swiss", ["ana", "bob", "cid"], rounds=2)
    row = chat.storage.tournaments.get(tid)
    assert row is not None
    tournaments(chat).start(caller(chat, "admin"))
    with pytest.raises(StorageContention):
        chat.storage.tournaments.save(tid, row.version, TournamentChange(row.state, "running", None))
    assert len(tournaments(chat).rounds(tid)) == 1
    assert len(chat.storage.tournaments.games(tid)) == 1


def test_a_crash_while_pairing_the_next_round_keeps_neither_the_result_nor_a_half_round(chat, monkeypatch):
    """The round's last result, the next round's pairing and its games are one transaction: a
    failure part way through the games (a process killed there) leaves the game running and the
    round unpaired; the result given again pairs the next round once."""
    tid = open_tournament(chat, "swiss", ["ana", "bob", "cid", "dan"], rounds=3, move_seconds=HOUR)
    tournaments(chat).start(caller(chat, "admin"))
    first = tournaments(chat).rounds(tid)[0]
    *others, last = [b for b in first.pairings if b.game_id is not None]
    for board in others:
        chat.service.app.play.resign(caller(chat, board.white_id), GameRef(board.game_id))
        chat.service.app.play.resign(caller(chat, board.white_id), GameRef(board.game_id))
    games_before = len(chat.storage.games.find(PLATFORM))
    outbox_before = len(chat.storage.outbox.find(PLATFORM))
    real = chat.service.app.games.start_game
    made: list[int] = []

    def dies_on_the_second(*args, **kw):
        if made:
            raise RuntimeError("killed")
        made.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(chat.service.app.games, "start_game", dies_on_the_second)
    assert last.game_id is not None
    chat.service.app.play.resign(caller(chat, last.black_id), GameRef(last.game_id))
    with pytest.raises(RuntimeError):
        chat.service.app.play.resign(caller(chat, last.black_id), GameRef(last.game_id))
    assert chat.game(last.game_id).status == "active"
    assert len(tournaments(chat).rounds(tid)) == 1 and not tournaments(chat).rounds(tid)[0].complete
    assert len(chat.storage.games.find(PLATFORM)) == games_before
    assert len(chat.storage.outbox.find(PLATFORM)) == outbox_before
    monkeypatch.setattr(chat.service.app.games, "start_game", real)
    for _ in range(2):
        if chat.game(last.game_id).status == "active":
            chat.service.app.play.resign(caller(chat, last.black_id), GameRef(last.game_id))
    rounds = tournaments(chat).rounds(tid)
    assert len(rounds) == 2 and rounds[0].complete
    assert len(chat.storage.tournaments.games(tid)) == 4
    assert [n["round"] for n in notices(chat) if n["notice"] == "tournament_round_paired"] == [1, 2]


def test_a_deadline_records_a_finished_game_the_tournament_missed(chat):
    """A game that ended without its GameFinished (a row changed outside the service) is not left
    open for ever: the round's deadline records its stored result and pairs the next round."""
    from bot.storage.repositories import GameChange

    tid = open_tournament(chat, "swiss", ["ana", "bob", "cid"], rounds=2, move_seconds=7 * DAY, round_seconds=DAY)
    tournaments(chat).start(caller(chat, "admin"))
    (board,) = [b for b in tournaments(chat).rounds(tid)[0].pairings if b.game_id is not None]
    assert board.game_id is not None
    game = chat.game(board.game_id)
    chat.storage.games.update(game.id, game.version, GameChange(status="finished", result_score="0-1",
                                                                 result_reason="resign", winner="B",
                                                                 finished_at=chat.now[0], deadline_at=None))
    chat.now[0] += DAY + 1
    chat.service.run_due(PLATFORM)
    rounds = tournaments(chat).rounds(tid)
    # White resigned before its first move: a forfeit.
    assert rounds[0].pairings[0].result == "-+" and len(rounds) == 2


def test_the_adjudication_rule():
    """The stated rule: the endgame tables where they reach, else the engine's fixed-depth search
    (1.5 men or more wins, less draws)."""
    from bot.ai.egtb import verdict
    from bot.service.features.tournaments import adjudicate

    start = Position.start("italian").fen()
    assert adjudicate("italian", start).score == "1/2-1/2"
    up_three = "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9"
    for side in "WB":
        result = adjudicate("italian", side + up_three[1:])
        assert (result.score, result.reason, result.winner) == ("1-0", "adjudicated", "W")
    ending = "W:WK29,K30:BK4"
    said = verdict(Position.from_fen("italian", ending))
    assert said is not None and said.result == "win"
    assert adjudicate("italian", ending).score == "1-0"
    assert adjudicate("italian", "B:WK29,K30:BK4").score == {"win": "0-1", "loss": "1-0", "draw": "1/2-1/2"}[
        verdict(Position.from_fen("italian", "B:WK29,K30:BK4")).result]  # type: ignore[union-attr]


def test_two_processes_ending_a_round_s_last_two_games_at_once_pair_the_next_round_once(pg_url, now):
    """On PostgreSQL, two services (two processes' connections) end the round's two games at the
    same moment: the tournament's compare-and-set (and serializable transactions) let one pair the
    next round; the other's command runs again on the new state and records its result in it."""
    import threading

    from bot.storage.postgres import PostgresStore

    stores = [PostgresStore(pg_url), PostgresStore(pg_url)]
    services = [GameService(s, clock=lambda: now[0], rng=random.Random(1)) for s in stores]
    try:
        uc = services[0].app.tournaments

        def who(user: str) -> Caller:
            record = stores[0].players.ensure_chat(PLATFORM, GROUP, "group", now[0])
            return Caller(Player(PLATFORM, user, user.capitalize(), user), WHERE, now[0], now[0], record)

        for attempt in range(3):
            created = uc.create(who("admin"), NewTournamentArgs("swiss", "italian", rounds=2), "en")
            assert isinstance(created, TournamentCreated)
            tid = created.tournament.id
            names = [f"a{attempt}", f"b{attempt}", f"c{attempt}", f"d{attempt}"]
            for p in names:
                uc.join(who(p))
            uc.start(who("admin"))
            boards = [b for b in uc.rounds(tid)[0].pairings if b.game_id is not None]
            assert len(boards) == 2
            for b in boards:
                for user in (b.white_id, b.black_id):
                    assert user is not None and b.game_id is not None
                    move = str(Position.from_fen("italian", stores[0].games.get(b.game_id).fen).legal_moves()[0])
                    services[0].app.play.move(who(user), MoveRequest(move, game=b.game_id))
                # The first /resign asks; the one at once below confirms.
                services[0].app.play.resign(who(b.white_id), GameRef(b.game_id))
            barrier = threading.Barrier(2)
            errors: list[BaseException] = []
            said: list[str] = []

            threads = [threading.Thread(target=_resign_at_once, args=(s, b.white_id, b.game_id, barrier, errors, said))
                       for s, b in zip(services, boards, strict=True)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors
            rounds = uc.rounds(tid)
            assert all(" resigned." in text for text in said), said
            assert [stores[0].games.get(b.game_id).status for b in boards] == ["finished", "finished"]  # type: ignore[union-attr]
            assert len(rounds) == 2 and rounds[0].complete
            assert all(b.result == "0-1" for b in rounds[0].pairings)
            assert len(stores[0].tournaments.games(tid)) == 4
            paired = [json.loads(r.payload)["round"] for r in stores[0].outbox.find(PLATFORM)
                      if json.loads(r.payload).get("notice") == "tournament_round_paired"
                      and json.loads(r.payload)["tournament_id"] == tid]
            assert paired == [1, 2]
            # Finish the tournament so the chat may hold the next one.
            for b in rounds[1].pairings:
                if b.game_id is not None:
                    services[0].app.play.resign(who(b.white_id), GameRef(b.game_id))
                    services[0].app.play.resign(who(b.white_id), GameRef(b.game_id))
            info = uc.view(tid)
            assert info is not None and info.status == "finished"
    finally:
        for service in services:
            service.close()
        for s in stores:
            s.close()


def _resign_at_once(service, user: str, game: int, barrier, errors: list, said: list) -> None:
    """/resign #game (the confirmation) through the facade, as soon as the other thread is ready."""
    from bot.service import ChatEvent

    try:
        barrier.wait()
        replies = service.handle(ChatEvent(platform=PLATFORM, chat_id=GROUP, user_id=user, user_name=user.capitalize(),
                                           username=user, text=f"/resign #{game}"))
        said.append(" | ".join(r.text for r in replies))
    except BaseException as err:  # noqa: BLE001 - the test reports it
        errors.append(err)


def test_a_leave_that_races_a_move_changes_nothing_and_runs_again(chat, monkeypatch):
    """The leaver's game moved between reading it and ending it: the leave is a contention (the
    facade runs it again), with nothing of it kept."""
    from bot.storage import StorageContention

    tid = open_tournament(chat, "swiss", ["ana", "bob", "cid"], rounds=2, move_seconds=HOUR)
    tournaments(chat).start(caller(chat, "admin"))
    (board,) = [b for b in tournaments(chat).rounds(tid)[0].pairings if b.game_id is not None]
    assert board.game_id is not None
    stale = chat.game(board.game_id)
    move = str(Position.from_fen("italian", stale.fen).legal_moves()[0])
    chat.service.app.play.move(caller(chat, board.white_id), MoveRequest(move, game=board.game_id))
    real = tournaments(chat)._running_games
    monkeypatch.setattr(tournaments(chat), "_running_games", lambda *a, **kw: [stale])
    before = chat.snapshot()
    with pytest.raises(StorageContention):
        tournaments(chat).leave(caller(chat, board.white_id))
    assert chat.snapshot() == before
    monkeypatch.setattr(tournaments(chat), "_running_games", real)
    left = tournaments(chat).leave(caller(chat, board.white_id))
    assert isinstance(left, Left) and left.forfeited == (board.game_id,)


def test_a_loss_on_time_that_ends_a_round_shows_its_board_before_the_round(chat):
    tid = open_tournament(chat, "swiss", ["ana", "bob", "cid", "dan"], rounds=2, move_seconds=HOUR)
    tournaments(chat).start(caller(chat, "admin"))
    play_round(chat, tid, {"dan"}, random.Random(3))
    chat.now[0] += 2 * HOUR
    chat.service.run_due(PLATFORM)
    kinds = []
    for row in chat.storage.outbox.find(PLATFORM):
        data = json.loads(row.payload)
        if isinstance(data, dict) and data.get("notice") in ("lost_on_time", "tournament_round_ended",
                                                             "tournament_round_paired"):
            kinds.append((row.id, data["notice"], data.get("round")))
    ordered = [kind for _, kind, _ in sorted(kinds)]
    assert ordered == ["tournament_round_paired", "lost_on_time", "tournament_round_ended",
                       "tournament_round_paired"], ordered


def test_too_many_rounds_and_a_full_round_robin_say_their_numbers(chat):
    uc = tournaments(chat)
    open_tournament(chat, "swiss", ["ana", "bob", "cid"], rounds=3)
    before = chat.snapshot()
    assert uc.start(caller(chat, "admin")) == TournamentRefused("too_many_rounds", (("count", 3), ("most", 2)))
    assert uc.create(caller(chat, "a"), NewTournamentArgs("swiss", "italian", rounds=51), "en") == TournamentRefused(
        "bad_rounds", (("most", 50),))
    assert chat.snapshot() == before


def test_a_running_round_s_deadline_is_when_the_service_next_wakes(chat):
    """Adapters sleep until ``next_wakeup`` (at most a minute): the running round's deadline is in
    it, so its forfeits and adjudications come when it passes, not up to a minute later."""
    tid = open_tournament(chat, "swiss", ["ana", "bob", "cid", "dan"], rounds=2, move_seconds=7 * DAY,
                          round_seconds=DAY)
    tournaments(chat).start(caller(chat, "admin"))
    chat.service.tick()                   # the round's posts delivered: nothing else is due soon
    # The games' first reminders come after 6.3 days; the round ends after one.
    assert chat.service.next_wakeup(PLATFORM) == pytest.approx(chat.now[0] + DAY)
    assert chat.service.next_wakeup(None) == pytest.approx(chat.now[0] + DAY)
    assert chat.service.next_wakeup("elsewhere") is None
    info = tournaments(chat).view(tid)
    assert info is not None and info.status == "running"


def test_the_player_with_the_bye_is_pinged(chat):
    tid = open_tournament(chat, "swiss", ["ana", "bob", "cid"], rounds=2)
    started = tournaments(chat).start(caller(chat, "admin"))
    assert isinstance(started, Started)
    [bye] = [b for b in started.round.pairings if b.is_bye]
    said = [n for n in notices(chat) if n["notice"] == "tournament_bye"]
    assert len(said) == 1
    notice = from_json(said[0])
    # (No chat event told the bot the player's username here.)
    assert notice == TournamentBye(tid, "en", 1, 1.0, Mention(bye.white_id, bye.white_name, None))
    # After the round's pairings post, with the games' pings.
    kinds = [n["notice"] for n in notices(chat)]
    assert kinds.index("tournament_round_paired") < kinds.index("tournament_bye")
