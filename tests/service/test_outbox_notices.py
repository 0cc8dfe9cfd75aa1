"""The outbox of notifications (issue 18): what a use case says on its own is stored as a small
typed notification and worded and drawn only when it is delivered, yet the delivered message is
the one the bot wrote before (the ``old_*`` functions below restate, from the presenters, how the
use cases built each message before notifications), and it shows the game as it stood when the
notification was written, whatever the game did since.  Real service, SQLite file, rules and
pictures; only the clock (and, where said, the engine's timing) is the test's."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from executors import HeldExecutor

from bot.i18n import t
from bot.rules import Color, Game, Move, Position
from bot.service.chat import boards, present_games
from bot.service.chat.describe import with_alt
from bot.service.chat.wording import duration, reminder
from bot.service.events import DM_PREFIX, Mention, Reply
from bot.service.features.common import _stored_result, reply_flipped
from bot.service.notifications import (
    KINDS,
    AnalysisFailed,
    AnalysisReady,
    BotMoved,
    ChallengeEdited,
    ChallengeLapsed,
    ChatRecordBeaten,
    DailyPosted,
    DaySummary,
    FirstSolver,
    GameNotice,
    LostOnTime,
    Notification,
    OwnPuzzlesDue,
    PrivateReminder,
    PrivateTurn,
    Reminder,
    StormFinished,
    TournamentBye,
    TournamentFinished,
    TournamentGameEnded,
    TournamentGameReady,
    TournamentRoundEnded,
    TournamentRoundPaired,
    TurnPing,
    WebDrawOffered,
    WebGameEnded,
    WebMoved,
    from_json,
    to_json,
)
from bot.service.thinking import Thinker
from bot.storage import BOT_ID
from bot.storage.records import GameRecord

FEATURES = Path(__file__).resolve().parents[2] / "bot" / "service" / "features"
# Use case modules whose messages to the outbox are all notifications.  (analysis.py still writes its
# report, which carries the engine's notes, as a finished reply.)
NOTIFYING = ("opponent.py", "clocks.py", "games.py", "puzzles.py", "challenges.py")
WORDING = ("bot.i18n", "bot.service.chat.boards", "bot.service.chat.wording", "renderers")
ANA, BOB = Mention("ana", "Ana", "ana"), Mention("bob", "Bob", "bob")


# -- what the use cases may no longer do -------------------------------------------------------------


@pytest.mark.parametrize("module", NOTIFYING)
def test_a_use_case_that_writes_to_the_outbox_builds_no_message(module):
    tree = ast.parse((FEATURES / module).read_text(encoding="utf-8"))
    built = [node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name) and node.func.id in ("Reply", "Button", "t", "tn")]
    said = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "say"]
    # Which language a chat speaks is not wording (``pick_language``), nor a page's length; the
    # catalog's phrases are.
    imported = {f"{node.module}.{alias.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert built == [] and said == []
    allowed = {"bot.i18n.pick_language", "bot.service.chat.wording.LISTED_PER_PAGE"}
    assert [name for name in imported if name.startswith(WORDING) and name not in allowed] == []


# -- a day's notifications, each kept with the message the bot wrote for it before ------------------


@pytest.fixture
def kept(chat):
    """Row id -> (the notification, the game as stored when it was written, the clock then)."""
    out: dict[int, tuple[Notification, GameRecord, float]] = {}
    watch(chat, out)
    return out


def watch(chat, out: dict[int, tuple[Notification, GameRecord, float]]) -> None:
    real = chat.service.outbox.notify

    def notify(platform: str, chat_id: str, notice: Notification) -> int:
        item = real(platform, chat_id, notice)
        if isinstance(notice, GameNotice):
            row = chat.storage.game(notice.game_id)
            assert row is not None
            out[item] = (notice, row, chat.now[0])
        # Small, and read back as it was written.
        assert from_json(json.loads(to_json(notice))) == notice and len(to_json(notice)) <= 1024
        return item
    chat.service.outbox.notify = notify


def delivered(chat, mark: bool = True) -> dict[int, tuple[str, Reply]]:
    """What the outbox delivers now (each marked sent unless not ``mark``), by row id."""
    items = chat.service.pending_messages(chat.platform, limit=1000)
    for item in items if mark else ():
        assert chat.service.message_sent(item.id)
    return {item.id: (item.chat_id, item.reply) for item in items}


def old_bot_moved(lang: str, after: GameRecord, before: Position, played: Move, now: float,
                  mention: Mention | None) -> Reply:
    """Opponent._bot_moved's message before notifications."""
    text = t(lang, "bot.played", bot=present_games.bot_name(lang, after), move=str(played), id=after.id)
    if after.status == "finished":
        text += "\n" + present_games.over_text(lang, after, _stored_result(after))
    else:
        text += "\n" + present_games.to_move_line(lang, after, now)
    reply = present_games.board_reply(lang, after, text)
    reply.animation = boards.capture_animation(before, played, flipped=reply_flipped(after))
    assert present_games.turn_ping(lang, after, mention, named_in=reply) == []
    return reply


def test_the_bots_moves_are_delivered_as_written_after_the_game_went_on(chat, kept):
    executor = HeldExecutor()
    chat.use_thinker(Thinker(executor, workers=2))
    watch(chat, kept)
    chat.say("ana", "/play italian white level 1")
    game_id = chat.storage.find_games(chat.platform)[0].id
    for _ in range(3):
        chat.say("ana", f"/m #{game_id} {chat.position(game_id).legal_moves()[0]}")
        assert executor.run_all() == 1
    rows = [item for item, (notice, _, _) in kept.items() if isinstance(notice, BotMoved)]
    assert len(rows) == 3 and chat.game(game_id).ply == 6
    out = delivered(chat)
    assert sorted(out) == rows
    for item in rows:
        notice, row, at = kept[item]
        before, played = last_move_at(chat, row)
        # Written as before, with the picture's position in words (issue 34).
        expected = with_alt("en", old_bot_moved("en", row, before, played, at, ANA))
        assert out[item] == (chat.chat_id, expected)
        assert out[item][1].mentions == [ANA] and f"#{game_id}" in out[item][1].text
    # Each board shows its own position: three different pictures, the first not the game's now.
    assert len({out[item][1].image for item in rows}) == 3
    assert out[rows[0]][1].image != present_games.board_reply("en", chat.game(game_id), "").image


def last_move_at(chat, row: GameRecord) -> tuple[Position, Move]:
    """The position before move ``row.ply`` of a game, and that move (the game may have gone on)."""
    moves = chat.storage.moves(row.id)[:row.ply]
    fen = moves[-2].fen_after if len(moves) > 1 else (row.start_fen or Position.start(row.variant).fen())
    before = Position.from_fen(row.variant, fen)
    return before, before.parse_move(moves[-1].notation)


def double_capture_position(variant: str = "italian") -> tuple[str, Move]:
    """A position (its FEN) where the side to move has a capture of two pieces, and that capture."""
    import random

    game, rng = Game(variant), random.Random(5)
    while True:
        moves = game.position.legal_moves()
        double = [m for m in moves if len(m.captured) >= 2]
        if double:
            return game.position.fen(), double[0]
        game.play(rng.choice(moves))
        if game.result is not None:
            game, rng = Game(variant), random.Random(rng.random())


def test_the_bots_multi_capture_keeps_its_animation(chat, kept):
    # The bot's next answer is held: nothing thinks on once the test ends.
    chat.use_thinker(Thinker(HeldExecutor(), workers=2))
    watch(chat, kept)
    fen, capture = double_capture_position()
    pos = Position.from_fen("italian", fen)
    human_white = pos.turn == Color.BLACK
    white = ("ana", "Ana") if human_white else (BOT_ID, "Bot (level 2)")
    black = (BOT_ID, "Bot (level 2)") if human_white else ("ana", "Ana")
    game_id = chat.storage.create_game({
        "platform": chat.platform, "chat_id": chat.chat_id, "variant": "italian", "start_fen": fen,
        "white_id": white[0], "white_name": white[1], "black_id": black[0], "black_name": black[1],
        "fen": fen, "move_seconds": 3600, "deadline_at": None, "created_at": chat.now[0], "bot_level": 2,
    })
    chat.service.app.opponent._bot_moved(game_id, 0, {"move": str(capture)})
    [(item, (notice, row, at))] = kept.items()
    assert isinstance(notice, BotMoved) and notice.move == str(capture)
    # The human plays on before the bot's message goes out.
    if chat.game(game_id).status == "active":
        chat.say("ana", f"/m #{game_id} {chat.position(game_id).legal_moves()[0]}")
    [(chat_id, reply)] = delivered(chat).values()
    assert reply.animation is not None
    assert reply == with_alt("en", old_bot_moved("en", row, pos, pos.parse_move(str(capture)), at,
                                                 row_mention(chat, row)))


def row_mention(chat, row: GameRecord) -> Mention | None:
    """Whom the bot's move pinged when it was written: Ana had not written yet (no @handle known)."""
    return Mention("ana", "Ana", None) if row.status == "active" else None


def test_a_loss_on_time_is_delivered_as_written(chat, kept):
    game_id = chat.new_game("ana", "bob", "italian", extra="5m")
    chat.play(game_id, ["22-18"])
    chat.now[0] += 301
    assert chat.service.run_due(chat.platform) == 1
    [(item, (notice, row, _))] = kept.items()
    assert isinstance(notice, LostOnTime) and row.result_reason == "time"
    expected = with_alt("en", present_games.board_reply("en", row, present_games.over_text("en", row,
                                                                                      _stored_result(row))))
    assert delivered(chat) == {item: (chat.chat_id, expected)}
    assert expected.buttons and expected.image is not None


def test_a_reminder_shows_the_time_left_then_after_the_player_moved(chat, kept):
    game_id = chat.new_game("ana", "bob", "italian", extra="1h")
    chat.now[0] += 0.91 * 3600
    assert chat.service.run_due(chat.platform) == 1
    chat.play(game_id, ["22-18"])                  # Ana moves before the reminder goes out
    [(item, (notice, row, at))] = kept.items()
    assert isinstance(notice, Reminder)
    expected = Reply(reminder("en", "Ana", game_id, row.deadline_at - at), game_id=game_id, mentions=[ANA])
    assert delivered(chat) == {item: (chat.chat_id, expected)}
    assert "5m" in expected.text or "5 m" in expected.text or "minute" in expected.text


def test_private_notices_and_the_group_ping_instead_are_delivered_as_written(chat, kept):
    game_id = chat.new_game("ana", "bob", "italian", extra="1h")
    chat.say("bob", "/notify on")
    chat.play(game_id, ["22-18"])
    [(turn_item, (turn, row, at))] = kept.items()
    assert isinstance(turn, PrivateTurn)
    white, black = present_games.names("en", row)
    expected_turn = Reply(t("en", "turn.private", id=game_id, white=white, black=black,
                            left=duration("en", row.deadline_at - at)), game_id=game_id)
    chat.now[0] += 0.91 * 3600
    assert chat.service.run_due(chat.platform) == 0     # the reminder went privately
    [(rem_item, (rem, row, at))] = [(i, v) for i, v in kept.items() if i != turn_item]
    assert isinstance(rem, PrivateReminder)
    expected_rem = Reply(reminder("en", "Bob", game_id, row.deadline_at - at), game_id=game_id)
    out = delivered(chat, mark=False)
    assert out == {turn_item: (DM_PREFIX + "bob", expected_turn), rem_item: (DM_PREFIX + "bob", expected_rem)}
    # Bob never started the bot: the group is pinged instead.
    chat.service.message_failed(turn_item, "Forbidden", permanent=True)
    [(ping_item, (ping, _, _))] = [(i, v) for i, v in kept.items() if i not in (turn_item, rem_item)]
    assert isinstance(ping, TurnPing)
    expected_ping = Reply(t("en", "turn.ping", name="Bob", id=game_id), mentions=[BOB])
    assert delivered(chat)[ping_item] == (chat.chat_id, expected_ping)


def test_every_kind_round_trips_through_its_json():
    mention = Mention("u1", "Ana Ñ", None)
    state_fen = Position.start("spanish").fen()
    from bot.service.notifications import GameState

    samples: list[Notification] = [
        BotMoved(1, "es", "22-18", state_fen, GameState(state_fen, 3, deadline_at=5.5, last_path=(22, 18)), 9.0,
                 mention),
        LostOnTime(2, "it", GameState(state_fen, 4, "finished", result_score="0-1", result_reason="time",
                                      winner="black")),
        Reminder(3, "en", "white", 120.0, mention), PrivateReminder(3, "en", "black", 30.0),
        PrivateTurn(4, "es", 3000.0), TurnPing(5, "it", mention), AnalysisFailed(6, "en"),
        DailyPosted(7, "es"), DaySummary(8, "it", 1.5), FirstSolver(9, "en", "Ana", 4),
        ChallengeLapsed(10, "en"), ChallengeEdited(11, "es", "accepted", "42", by="Bob", started=12),
        AnalysisReady(13, "it", 80),
        WebMoved(14, "es", "22-18", state_fen, GameState(state_fen, 3, last_path=(22, 18)), 9.0, "Ana", True,
                 mention),
        WebDrawOffered(15, "it", GameState(state_fen, 4, draw_offer="W"), "Ana", "W"),
        WebGameEnded(16, "en", GameState(state_fen, 4, "finished", result_score="1-0", result_reason="resign",
                                         winner="W")),
        TournamentRoundPaired(17, "es", 2, 99.5), TournamentGameReady(17, "it", 2, 18, "black", "Bob", mention),
        TournamentBye(17, "es", 2, 0.5, mention),
        TournamentRoundEnded(17, "en", 2, (18,), (19, 20)), TournamentFinished(17, "en", "u1", "Ana Ñ", 4.5),
        TournamentGameEnded(18, "es", GameState(state_fen, 6, "finished", result_score="1-0",
                                                result_reason="adjudicated", winner="W")),
        ChatRecordBeaten("streak", "italian", "es", 7, "Ana", "42", "Bob", 5),
        ChatRecordBeaten("storm", "spanish", "it", 3, "Eva"),
        StormFinished(7, "it", "u1", "Eva", "spanish", 12, 3),
        OwnPuzzlesDue("es", 3, mention),
    ]
    assert {type(n) for n in samples} == set(KINDS.values())
    for notice in samples:
        data: dict[str, Any] = json.loads(to_json(notice))
        assert data["notice"] == notice.kind and data.get("game_id") == getattr(notice, "game_id", None)
        assert from_json(data) == notice


def test_a_row_of_an_unknown_kind_is_dropped_not_delivered(chat, bot_errors):
    bad = chat.storage.enqueue(chat.platform, chat.chat_id, json.dumps({"notice": "from_the_future", "game_id": 1}),
                               chat.now[0])
    assert delivered(chat) == {}
    assert chat.storage.outbox_message(bad).status == "dropped"
    bot_errors.clear()


# -- the daily puzzle, challenges, analysis ------------------------------------------------------------


def notices_of(chat, kind: type[Notification]) -> list[tuple[int, Notification]]:
    """The notifications of ``kind`` waiting in the outbox, by row id (read from the rows)."""
    rows = chat.storage.find_outbox()
    out = []
    for row in rows:
        data = json.loads(row.payload)
        if data.get("notice") == kind.kind:
            out.append((row.id, from_json(data)))
    return out


def test_the_daily_post_and_the_day_before_are_delivered_as_written(chat):
    from bot.puzzles import bank
    from bot.service.chat.present_puzzles import ChatNotices, draw
    from bot.service.features.results_puzzles import Board, Solvers

    chat.say("ana", "/daily on 08:00 UTC italian", admin=True)
    chat.now[0] = chat.service.next_daily_wakeup(chat.platform)
    assert chat.service.run_due(chat.platform) == 1
    [(item, notice)] = notices_of(chat, DailyPosted)
    post = chat.storage.puzzle_post(notice.post_id)
    puzzle = bank.by_id(post.variant, post.puzzle_id)
    pos = Position.from_fen(post.variant, puzzle["fen"])
    expected = with_alt("en", ChatNotices().daily_post("en", Board(post, pos, 0, picture=draw(pos))))
    assert delivered(chat) == {item: (chat.chat_id, expected)}
    # Ana solves it; the next day's post begins with who solved the day before.
    chat.say("ana", "/m " + " ".join(puzzle["solution"]))
    chat.now[0] = chat.service.next_daily_wakeup(chat.platform)
    assert chat.service.run_due(chat.platform) == 1
    [(summary_item, summary)] = notices_of(chat, DaySummary)
    assert summary.post_id == post.id
    expected_summary = ChatNotices().yesterday("en", Solvers(post, ("Ana",), tuple(puzzle["solution"])))
    out = delivered(chat)
    assert out[summary_item] == (chat.chat_id, expected_summary)
    assert [r.post_id for _, r in out.values() if r.post_id is not None] == [chat.storage.daily_posts(
        chat.platform, chat.chat_id, 1)[0].id]


def test_the_first_solver_and_a_failed_analysis_are_delivered_as_written(chat):
    from bot.service.chat.present_puzzles import first_text

    chat.say("ana", "/daily on 08:00 UTC italian", admin=True)
    chat.now[0] = chat.service.next_daily_wakeup(chat.platform)
    chat.service.run_due(chat.platform)
    delivered(chat)
    post = chat.storage.daily_posts(chat.platform, chat.chat_id, 1)[0]
    game_id = chat.new_game("ana", "bob", "italian")
    with chat.storage.transaction():
        first = chat.service.notify(chat.platform, chat.chat_id, FirstSolver(post.id, "es", "Ana Ñ", 3))
        failed = chat.service.notify(chat.platform, chat.chat_id, AnalysisFailed(game_id, "it"))
    assert delivered(chat) == {first: (chat.chat_id, Reply(first_text("es", "Ana Ñ", post.day, 3))),
                               failed: (chat.chat_id, Reply(t("it", "analysis.failed", id=game_id)))}


def test_a_lapsed_challenge_and_its_edited_message_are_delivered_as_written(chat):
    from bot.service.chat.present_challenges import closed_edit
    from bot.service.features.challenges import CHALLENGE_LIFETIME
    from bot.service.features.results_games import ChallengeClosed

    cid = chat.challenge("ana", "italian white 5m")
    chat.service.remember_challenge(chat.platform, "other-chat", "m1", cid)
    chat.now[0] += CHALLENGE_LIFETIME + 1
    chat.service.run_due(chat.platform)
    [(edit_item, edit)] = notices_of(chat, ChallengeEdited)
    [(lapsed_item, _)] = notices_of(chat, ChallengeLapsed)
    ch = chat.storage.challenge(cid)
    assert ch.status == "expired" and edit.message_id == "m1"
    assert delivered(chat) == {
        edit_item: ("other-chat", closed_edit(ChallengeClosed(ch, "expired", "m1", "en"))),
        lapsed_item: (chat.chat_id, Reply(t("en", "challenge.expired", id=cid))),
    }


def test_a_bots_move_another_process_played_between_two_reads_is_not_played_again(chat, monkeypatch):
    """Two processes think about one game: the one that finishes second reads the game as it was
    (bot to move) and then its latest positions after the other wrote the move.  It plays
    nothing and writes nothing (it raised IllegalMove in the engine's callback before)."""
    executor = HeldExecutor()
    chat.use_thinker(Thinker(executor, workers=2))
    chat.say("ana", "/play italian white level 1")
    game_id = chat.storage.find_games(chat.platform)[0].id
    chat.say("ana", f"/m #{game_id} 22-18")
    stale = chat.game(game_id)
    assert executor.run_all() == 1                   # the other process's answer, written
    played = chat.moves(game_id)[-1].notation
    before = (chat.game(game_id), len(chat.storage.find_outbox()))
    real_game = chat.storage.game
    reads = iter([stale])
    monkeypatch.setattr(chat.storage, "game", lambda gid: next(reads, None) or real_game(gid))
    chat.service.app.opponent._bot_moved(game_id, stale.ply, {"move": played})
    assert (chat.game(game_id), len(chat.storage.find_outbox())) == before
