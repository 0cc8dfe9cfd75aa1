"""Puzzles from the players' own games (issue 33): a game played to the end through the service is
queued, scanned in the engine pool (never in its last free worker), and its proven golpes become
puzzles of the players who missed or allowed them; ``/puzzle mine`` serves them through the ordinary
answer flow, and they come back in Leitner boxes (1, 3, 7, 21 days while solved cleanly, then
retired; a miss brings one back the next day); reminders at most once a day; bad input changes nothing.

Real parts: a SQLite file, the rules, the prover, Pillow boards, the engine pool on threads; only
the clock is fixed (``now``)."""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from catalog_text import says, tr
from executors import HeldExecutor
from fresh_db import fresh_database
from harness import GROUP, PLATFORM, ChatHarness

from bot.puzzles import bank
from bot.puzzles.generate import GENERATE_MOVES
from bot.puzzles.prove import verify
from bot.rules import Position
from bot.service import GameService
from bot.service.chat.wording import duration
from bot.service.features.own_puzzles import INTERVAL_DAYS, SCAN_LEASE_SECONDS
from bot.service.thinking import Thinker
from bot.storage import BOT_ID, Storage
from bot.storage.repositories import NewGame

DAY = 86400.0
# An engine game's position (level 2 against bench/ai_match.py's scripted player) where White's
# 29-26 lets Black in with the shot 15-19 22x15 13x22x29 (tests/puzzles/test_from_games.py).
BEFORE_SLIP = "W:W16,17,18,20,22,24,25,29,30,31,32:B2,4,5,6,7,8,9,10,11,13,15"
SHOT = ["15-19", "13x22x29"]            # the solver's moves (the defender's 22x15 is the bot's)


@pytest.fixture
def own(chat: ChatHarness, pool: ThreadPoolExecutor) -> ChatHarness:
    """The harness on a service whose engine pool has two workers (one may scan)."""
    chat.use_thinker(Thinker(pool, workers=2))
    return chat


def game_from(chat: ChatHarness, fen: str, white: str = "ana", black: str = "bob", variant: str = "italian",
              bot_level: int | None = None) -> int:
    """A game of this chat starting from ``fen`` (the way a tournament or an import starts one)."""
    def name(user: str) -> str:
        return "Bot" if user == BOT_ID else user.capitalize()

    return chat.storage.games.create(NewGame(
        platform=PLATFORM, chat_id=GROUP, variant=variant, white_id=white, white_name=name(white), black_id=black,
        black_name=name(black), fen=fen, start_fen=fen, move_seconds=86400, created_at=chat.now[0],
        bot_level=bot_level))


def finish(chat: ChatHarness, game_id: int, moves: list[str], loser: str) -> None:
    """Play ``moves`` in the game (each by the player to move), then ``loser`` resigns; then the
    timed work runs and the pool's scans are waited for."""
    chat.play(game_id, moves)
    chat.resign(loser, f"/resign #{game_id}")
    assert chat.game(game_id).status == "finished"
    scanned(chat)


def scanned(chat: ChatHarness) -> None:
    """Run the timed work (it starts the scans) until every queued game is scanned."""
    for _ in range(20):
        chat.service.tick()
        assert chat.service.settle(120)
        pending = [g for g in chat.storage.find_games(PLATFORM)
                   if (scan := chat.storage.own_puzzles.scan(g.id)) is not None and scan.status == "pending"]
        if not pending:
            return
    raise AssertionError("scans left pending")


def solve(chat: ChatHarness, user: str = "ana", line: list[str] = SHOT) -> str:
    replies = [chat.text(user, f"/m {move}") for move in line]
    assert says(replies[-1], "en", "puzzle.solved_personal"), replies
    return replies[-1]


def wrong_move(chat: ChatHarness, user: str = "ana") -> str:
    """A legal first move of the user's due puzzle that does not win."""
    [row] = chat.storage.own_puzzles.due(PLATFORM, user, chat.now[0])
    puzzle = json.loads(row.puzzle)
    start = Position.from_fen(puzzle["variant"], puzzle["fen"])
    return next(str(m) for m in start.legal_moves() if str(m) not in puzzle["tree"])


def mine(chat: ChatHarness, user: str = "ana", **kw: object) -> str:
    return chat.text(user, "/puzzle mine", **kw)


def slip_game(chat: ChatHarness) -> int:
    game_id = game_from(chat, BEFORE_SLIP)
    finish(chat, game_id, ["29-26"], "ana")
    return game_id


def slip_game_queued(chat: ChatHarness) -> int:
    """The slip game finished and the timed work run once: its scan is queued (or handed to the
    pool), not waited for."""
    game_id = game_from(chat, BEFORE_SLIP)
    chat.play(game_id, ["29-26"])
    chat.resign("ana", f"/resign #{game_id}")
    chat.service.tick()
    return game_id


# -- the scan ------------------------------------------------------------------------------------------


def test_a_finished_game_is_scanned_once_and_its_shot_becomes_the_players_puzzle(own: ChatHarness) -> None:
    game_id = slip_game(own)
    scan = own.storage.own_puzzles.scan(game_id)
    assert scan is not None and (scan.status, scan.found, scan.attempts) == ("done", 1, 1)
    [row] = own.storage.own_puzzles.of_player(PLATFORM, "ana")
    assert (row.game_id, row.ply, row.move_number, row.opponent, row.kind, row.box) == (
        game_id, 1, 1, "Bob", "allowed", 0)
    assert row.due_at == own.now[0]
    assert own.storage.own_puzzles.of_player(PLATFORM, "bob") == []
    # The bank's standard: proven again from the record as stored.
    puzzle = json.loads(row.puzzle)
    assert puzzle["solution"] == ["15-19", "22x15", "13x22x29"]
    assert verify(puzzle) == []
    # Timed work again: nothing is scanned twice.
    own.service.tick()
    assert own.service.settle(60)
    assert len(own.storage.own_puzzles.of_player(PLATFORM, "ana", include_retired=True)) == 1


def test_the_player_gets_it_with_where_it_comes_from_and_solves_it_in_the_usual_flow(own: ChatHarness) -> None:
    game_id = slip_game(own)
    text = mine(own)
    assert says(text, "en", "own.intro.allowed", game=game_id, opponent="Bob", move=1), text
    assert says(text, "en", "puzzle.personal"), text
    # Asked again before answering: the same post, not a second one.
    posts = own.storage.puzzles.personal_posts(PLATFORM, "ana", 10)
    mine(own)
    assert own.storage.puzzles.personal_posts(PLATFORM, "ana", 10) == posts
    solve(own)
    [row] = own.storage.own_puzzles.of_player(PLATFORM, "ana")
    assert (row.box, row.reviews, row.lapses, row.due_at) == (1, 1, 0, own.now[0] + DAY)
    # A review, not a rated puzzle: the puzzle rating is untouched.
    assert own.storage.ratings.get(PLATFORM, "ana", "puzzle") is None
    assert says(mine(own), "en", "own.waiting.one", n=1, when=duration("en", DAY))


def test_solved_cleanly_it_comes_back_after_1_3_7_and_21_days_then_is_retired(own: ChatHarness) -> None:
    slip_game(own)
    mine(own)
    solve(own)
    for days in INTERVAL_DAYS:
        # A second before it is due: nothing; on the second: it is back.
        own.say("ana", "/clock")            # (not a command here: any text, to show it changes nothing)
        own.now[0] += days * DAY - 1
        assert says(mine(own), "en", "own.waiting.one", n=1, when=duration("en", 1))
        own.now[0] += 1
        text = mine(own)
        assert says(text, "en", "own.intro.allowed"), (days, text)
        solve(own)
    [row] = own.storage.own_puzzles.of_player(PLATFORM, "ana", include_retired=True)
    assert (row.retired, row.reviews, row.box, row.lapses) == (True, 5, 5, 0)
    own.now[0] += 400 * DAY
    assert says(mine(own), "en", "own.none")


@pytest.mark.parametrize("miss", ["wrong", "hint", "give_up"])
def test_a_miss_brings_it_back_the_next_day_in_the_first_box(own: ChatHarness, miss: str) -> None:
    slip_game(own)
    mine(own)
    solve(own)
    own.now[0] += DAY
    mine(own)
    if miss == "wrong":
        assert says(own.text("ana", f"/m {wrong_move(own)}"), "en", "puzzle.refuted")
        solve(own)                      # solved after the wrong move: still a miss
    elif miss == "hint":
        own.say("ana", "/hint")
        solve(own)
    else:
        assert says(own.text("ana", "/puzzle giveup"), "en", "puzzle.gave_up")
    [row] = own.storage.own_puzzles.of_player(PLATFORM, "ana")
    assert (row.box, row.lapses, row.reviews, row.due_at) == (0, 1, 2, own.now[0] + DAY)
    own.now[0] += DAY - 1
    assert says(mine(own), "en", "own.waiting.one")
    own.now[0] += 1
    assert says(mine(own), "en", "own.intro.allowed")


def test_in_a_group_where_nothing_is_private_it_waits_in_the_private_chat(own: ChatHarness) -> None:
    game_id = slip_game(own)
    replies = own.say("ana", "/puzzle mine", can_whisper=False, private_link="https://t.me/bot?start={payload}")
    assert len(replies) == 1 and says(replies[0].text, "en", "puzzle.in_private", name="Ana"), replies[0].text
    assert "Bob" not in replies[0].text                 # where it comes from is said where it is shown
    # In the private chat, /puzzle mine shows it with where it comes from.
    text = own.text("ana", "/puzzle mine", chat="ana-private", kind="private")
    assert says(text, "en", "own.intro.allowed", game=game_id, opponent="Bob", move=1)


def test_spanish_and_italian_words_ask_for_ones_own_puzzles(own: ChatHarness) -> None:
    game_id = slip_game(own)
    for words, lang in (("/problema mios", "es"), ("/problema mías", "es"), ("/problema miei", "it")):
        text = own.text("ana", words, language=lang)
        assert says(text, lang, "own.intro.allowed", game=game_id, opponent="Bob", move=1), (words, text)


def test_a_game_against_the_bot_gives_the_human_their_puzzle_and_the_bot_none(own: ChatHarness) -> None:
    game_id = game_from(own, BEFORE_SLIP, "ana", BOT_ID, bot_level=1)
    own.say("ana", f"/m #{game_id} 29-26")
    assert own.service.settle(120)               # the bot's answer (it may come before the reply)
    assert own.moves(game_id)[0].notation == "29-26"
    own.resign("ana", f"/resign #{game_id}")
    scanned(own)
    kinds = [(r.user_id, r.kind, r.opponent) for r in own.storage.own_puzzles.of_player(PLATFORM, "ana")]
    assert ("ana", "allowed", "Bot") in kinds
    assert own.storage.own_puzzles.of_player(PLATFORM, BOT_ID) == []


def test_the_share_of_finished_games_that_yield_a_puzzle(own: ChatHarness, capsys: pytest.CaptureFixture[str]) -> None:
    """The measure the issue asks for, over the games these tests finish: a slip, a missed bank
    golpe in each variant, and two short games from the start position."""
    games = [slip_game(own)]
    for variant in ("italian", "spanish", "triestina"):
        puzzle = next(p for p in bank.load(variant) if p["tags"]["moves"] <= GENERATE_MOVES)
        start = Position.from_fen(variant, puzzle["fen"])
        other = next(str(m) for m in start.legal_moves() if str(m) not in puzzle["tree"])
        white, black = ("cid", "dan") if start.white else ("dan", "cid")
        game_id = game_from(own, puzzle["fen"], white, black, variant)
        finish(own, game_id, [other], "cid")
        games.append(game_id)
        assert any(r.kind == "missed" and r.ply == 0 for r in own.storage.own_puzzles.of_player(PLATFORM, "cid")
                   if r.game_id == game_id)
    for _ in range(2):
        game_id = own.new_game("eve", "fay")
        finish(own, game_id, ["22-18" if own.position(game_id).white else "11-15"], "eve")
        games.append(game_id)
    found = {g: own.storage.own_puzzles.scan(g) for g in games}
    assert all(scan is not None and scan.status == "done" for scan in found.values())
    yielding = sum(1 for scan in found.values() if scan is not None and scan.found)
    with capsys.disabled():
        print(f"\nown puzzles: {yielding} of {len(games)} finished games yielded at least one puzzle")
    assert yielding == 4


# -- the pool and several processes ------------------------------------------------------------------


def test_scans_never_take_the_last_free_worker(held: tuple[ChatHarness, HeldExecutor]) -> None:
    chat, executor = held
    thinker = Thinker(executor, workers=2)
    chat.use_thinker(thinker)
    # Two workers, one of them searching a bot move: the other is the last free one.
    thinker.submit(("move", "bot"), sum, ([],), on_done=lambda _result: None)
    game_id = slip_game_queued(chat)
    assert len(executor.jobs) == 1                  # the bot's move only: it keeps the last worker
    scan = chat.storage.own_puzzles.scan(game_id)
    assert scan is not None and (scan.status, scan.claimed_by) == ("pending", None)
    # Asked meanwhile: nothing yet, and the game is still to be searched.
    text = mine(chat)
    assert says(text, "en", "own.none") and says(text, "en", "own.scanning.one"), text
    executor.run_all()                              # the move is found: a worker is free again
    chat.service.tick()
    assert len(executor.jobs) == 1
    executor.run_all()
    scan = chat.storage.own_puzzles.scan(game_id)
    assert scan is not None and scan.status == "done"
    assert not says(mine(chat), "en", "own.scanning.one")


def test_a_pool_of_one_worker_scans_only_while_it_is_idle(held: tuple[ChatHarness, HeldExecutor]) -> None:
    chat, executor = held
    thinker = Thinker(executor, workers=1)
    chat.use_thinker(thinker)
    thinker.submit(("move", "bot"), sum, ([],), on_done=lambda _result: None)
    game_id = slip_game_queued(chat)
    assert len(executor.jobs) == 1                  # busy with the bot's move: no scan beside it
    executor.run_all()
    chat.service.tick()
    assert len(executor.jobs) == 1                  # idle: the scan goes in
    executor.run_all()
    scan = chat.storage.own_puzzles.scan(game_id)
    assert scan is not None and scan.status == "done"


def test_two_processes_on_one_database_scan_each_game_once(tmp_path: Path, now: list[float]) -> None:
    db = fresh_database(tmp_path / "two.db")
    first = ChatHarness(db, now)
    executors = [HeldExecutor(), HeldExecutor()]
    first.use_thinker(Thinker(executors[0], workers=4))
    second = GameService(Storage(db), clock=lambda: now[0], rng=random.Random(2),
                         thinker=Thinker(executors[1], workers=4))
    try:
        games = []
        for _ in range(3):
            game_id = game_from(first, BEFORE_SLIP)
            first.play(game_id, ["29-26"])
            first.resign("ana", f"/resign #{game_id}")
            games.append(game_id)
        for _ in range(3):
            first.service.tick()
            second.tick()
        # One scan at a time in each process, each game claimed by one of them.
        assert len(executors[0].jobs) == 1 and len(executors[1].jobs) == 1
        while executors[0].jobs or executors[1].jobs:
            for executor in executors:
                executor.run_all()
            first.service.tick()
            second.tick()
        assert [first.storage.own_puzzles.scan(g).status for g in games] == ["done"] * 3   # type: ignore[union-attr]
        assert [first.storage.own_puzzles.scan(g).attempts for g in games] == [1] * 3   # type: ignore[union-attr]
        assert len(first.storage.own_puzzles.of_player(PLATFORM, "ana")) == 3
    finally:
        second.close()
        second.storage.close()
        first.storage.close()


# -- reminders -----------------------------------------------------------------------------------------


def _reminders(chat: ChatHarness) -> list[str]:
    return [o.reply.text for o in chat.service.tick() if o.chat_id == GROUP and "/puzzle mine" in o.reply.text]


def test_a_reminder_a_day_only_when_on_and_only_when_something_is_due(own: ChatHarness) -> None:
    assert says(own.text("ana", "/puzzle remind"), "en", "own.remind_is_off")
    assert says(own.text("ana", "/puzzle remind on"), "en", "own.remind_on")
    assert _reminders(own) == []                        # nothing due yet
    slip_game(own)
    own.now[0] += 61
    [text] = _reminders(own)
    assert says(text, "en", "own.reminder.one", name="Ana", n=1)
    own.now[0] += DAY - 61
    assert _reminders(own) == []                        # at most one a day
    own.now[0] += 61
    assert len(_reminders(own)) == 1
    # Solved: nothing due, no reminder the day after.
    mine(own)
    solve(own)
    own.now[0] += DAY - 10
    assert _reminders(own) == []
    assert says(own.text("ana", "/puzzle remind off"), "en", "own.remind_off")
    own.now[0] += 30 * DAY
    assert _reminders(own) == []
    assert says(own.text("bob", "/puzzle remind"), "en", "own.remind_is_off")


# -- bad input --------------------------------------------------------------------------------------------


def test_bad_input_changes_nothing(own: ChatHarness) -> None:
    slip_game(own)
    mine(own)
    post = own.storage.puzzles.personal_posts(PLATFORM, "ana", 1)[0]
    before = own.snapshot()
    # Someone else's own puzzle: by number, by its board's buttons, by answering it.
    assert says(own.text("bob", f"/hint #{post.id}"), "en", "puzzle.not_yours")
    assert says(own.text("bob", f"/puzzle giveup #{post.id}"), "en", "puzzle.not_yours")
    for action in own.actions:
        if action.startswith(("zh:", "zg:")) and f":{post.id}" in action:
            own.press("bob", action)
    # Unknown words after mine / remind.
    assert says(own.text("ana", "/puzzle mine please"), "en", "own.usage")
    assert says(own.text("ana", "/puzzle remind sometimes"), "en", "own.usage")
    assert own.snapshot() == before
    assert tr("en", "own.usage") in own.text("ana", "/puzzle remind on off")


def test_a_scan_whose_lease_ran_out_is_taken_over_and_the_late_result_is_dropped(tmp_path: Path,
                                                                                  now: list[float]) -> None:
    db = fresh_database(tmp_path / "lease.db")
    first = ChatHarness(db, now)
    executors = [HeldExecutor(), HeldExecutor()]
    first.use_thinker(Thinker(executors[0], workers=4))
    second = GameService(Storage(db), clock=lambda: now[0], rng=random.Random(2),
                         thinker=Thinker(executors[1], workers=4))
    try:
        game_id = game_from(first, BEFORE_SLIP)
        first.play(game_id, ["29-26"])
        first.resign("ana", f"/resign #{game_id}")
        first.service.tick()
        assert len(executors[0].jobs) == 1               # the first process scans it (and stalls)
        now[0] += SCAN_LEASE_SECONDS
        second.tick()
        assert len(executors[1].jobs) == 1               # its lease ran out: the second takes it over
        executors[1].run_all()
        executors[0].run_all()                           # the first one's late result
        scan = first.storage.own_puzzles.scan(game_id)
        assert scan is not None and (scan.status, scan.found, scan.attempts) == ("done", 1, 2)
        assert len(first.storage.own_puzzles.of_player(PLATFORM, "ana")) == 1
    finally:
        second.close()
        second.storage.close()
        first.storage.close()


def test_a_game_another_process_finished_is_scanned_within_a_minute_and_idle_rounds_read_nothing(
        tmp_path: Path, now: list[float]) -> None:
    db = fresh_database(tmp_path / "idle.db")
    here = ChatHarness(db, now)
    executor = HeldExecutor()
    here.use_thinker(Thinker(executor, workers=4))
    there = GameService(Storage(db), clock=lambda: now[0], rng=random.Random(2))
    try:
        here.service.tick()                              # an idle round: the queue read, empty
        game_id = game_from(here, BEFORE_SLIP)
        for text in (f"/m #{game_id} 29-26", f"/resign #{game_id}", f"/resign #{game_id}"):
            there.handle(here.event("ana", text=text))   # the game ends in the other process
        assert there.storage.own_puzzles.scan(game_id) is not None
        now[0] += 59
        here.service.tick()
        assert executor.jobs == []                       # not read again within the minute
        now[0] += 1
        here.service.tick()
        assert len(executor.jobs) == 1
        executor.run_all()
        scan = here.storage.own_puzzles.scan(game_id)
        assert scan is not None and scan.status == "done"
    finally:
        there.close()
        there.storage.close()
        here.storage.close()


def test_a_pool_the_bot_never_started_is_not_started_for_a_scan(chat: ChatHarness) -> None:
    """The harness's own service has the default pool, which nothing started (no warm-up)."""
    assert not chat.service.thinker.serving
    game_id = slip_game_queued(chat)
    assert chat.service.thinker.running() == []
    scan = chat.storage.own_puzzles.scan(game_id)
    assert scan is not None and (scan.status, scan.claimed_by) == ("pending", None)


def test_a_result_coming_after_the_database_closed_is_left_to_the_lease(
        held: tuple[ChatHarness, HeldExecutor], caplog: pytest.LogCaptureFixture) -> None:
    chat, executor = held
    game_id = slip_game_queued(chat)
    assert len(executor.jobs) == 1
    chat.storage.close()
    executor.run_all()                                  # no error logged (the suite fails on one)
    assert any("tried again after its lease" in r.getMessage() for r in caplog.records)
    chat.storage = Storage(chat.db_path)
    scan = chat.storage.own_puzzles.scan(game_id)
    assert scan is not None and scan.status == "pending" and scan.claimed_by is not None
