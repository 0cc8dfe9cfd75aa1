"""/analysis: the engine's view of a finished game, sent later through the outbox as a report, a
picture of the mistakes and an annotated PDN; one analysis per chat at a time.

Real parts throughout (SQLite file, rules, engine, Pillow); the engine runs in threads, or in
``HeldExecutor`` when a test needs an analysis to stay running.
"""

from __future__ import annotations

import re

import pytest
from catalog_text import Phrase, pattern, regex
from executors import HeldExecutor

import bot.ai.search
from bot.i18n import t
from bot.rules import Position, read_pdn
from bot.service.features import analysis as analysis_feature
from bot.service.thinking import Thinker

PNG = b"\x89PNG\r\n\x1a\n"
SETTLE = 30.0
# White's third move, 22-19, leaves a man to 15x24 (about two men by the engine's count).
BLUNDER_LINE = ["24-20", "12-15", "22-19", "15x24"]


# Small search budgets (a position, a cost confirmed): these tests are about the service, not the
# engine's depth (bench/analysis_accuracy.py measures the production budgets).
TEST_NODES = (6_000, 30_000)


@pytest.fixture(autouse=True)
def small_budgets(monkeypatch):
    monkeypatch.setattr(analysis_feature, "ANALYSIS_NODES", TEST_NODES)


@pytest.fixture
def an(chat, pool):
    chat.use_thinker(Thinker(pool))
    yield chat
    assert chat.service.settle(SETTLE)


def finished_game(chat, moves: list[str] = BLUNDER_LINE, resigner: str = "ana", chat_id: str | None = None) -> int:
    """Ana (white) and Bob play ``moves``; then ``resigner`` resigns, confirming with a second /resign."""
    kw = {"chat": chat_id} if chat_id else {}
    cid_before = {c.id for c in chat.rows("challenges")}
    chat.say("ana", "/new italian white", **kw)
    cid = next(c.id for c in chat.rows("challenges") if c.id not in cid_before)
    chat.say("bob", f"/accept #{cid}", **kw)
    game = chat.storage.challenge(cid).game_id
    for move in moves:
        user = chat.to_move(game)
        chat.say(user, f"/m #{game} {move}", **kw)
    assert [m.notation for m in chat.moves(game)] == moves
    chat.say(resigner, f"/resign #{game}", **kw)
    chat.say(resigner, f"/resign #{game}", **kw)
    assert chat.game(game).status == "finished"
    return game


def outbox(chat) -> list:
    return [item.reply for item in chat.service.pending_messages(chat.platform, limit=1000)]


def reports(chat, game: int) -> list:
    title = pattern("en", "analysis.title", id=game)
    return [r for r in outbox(chat) if title.match(r.text)]


def analysing(game: int) -> Phrase:
    """The answer to /analysis that starts one (its time estimate left open)."""
    return pattern("en", "analysis.started", id=game)


def test_analysis_of_a_game_still_being_played_is_refused(an):
    game = an.new_game()
    text = an.text("ana", f"/analysis #{game}")
    assert text == t("en", "analysis.active", id=game)
    assert an.service.thinker.running() == [] and outbox(an) == []


def test_analysis_without_a_finished_game_says_so(an):
    assert an.text("ana", "/analysis") == t("en", "analysis.none")
    an.new_game()                            # an active game is nothing to analyse either
    assert an.text("ana", "/analysis") == t("en", "analysis.none")
    assert an.service.thinker.running() == [] and outbox(an) == []


def test_analysis_of_a_game_of_another_chat_is_unknown_here(an):
    game = finished_game(an, chat_id="group-2")
    assert an.text("ana", f"/analysis #{game}") == t("en", "game.unknown", id=game)
    assert an.text("ana", f"/analysis #{game} please") == t("en", "error.ref_only", command="analysis")


def test_analysis_of_a_game_resigned_before_any_move_has_nothing_to_look_at(an):
    game = finished_game(an, moves=[])
    assert an.text("bob", "/analysis") == t("en", "analysis.no_moves", id=game)
    assert an.service.thinker.running() == []


def test_analysis_reports_the_blunder_with_a_picture_and_an_annotated_pdn(an):
    game = finished_game(an)
    text = an.text("bob", "/analysis")
    assert analysing(game).match(text), text
    assert an.service.settle(SETTLE)
    [report] = reports(an, game)
    lines = report.text.splitlines()
    assert lines[0] == t("en", "analysis.title", id=game, white="Ana", black="Bob")
    # White's side names the move that lost the man, with the engine's better move and the cost.
    white_at = lines.index(t("en", "analysis.side", name="Ana"))
    white_lines = []
    for line in lines[white_at + 1:]:
        if not line.startswith("• "):
            break
        white_lines.append(line)
    assert 1 <= len(white_lines) <= 3                     # at most three per side
    [blunder] = [line for line in white_lines if line.startswith("• 2. 22-19")]
    mistake = regex("en", "analysis.mistake", number=r"2\.", move=r"22-19\?{0,2}", best=r"\d+-\d+",
                    loss=r"(?P<loss>\d+\.\d)")
    found = re.fullmatch("• " + mistake, blunder)
    assert found, blunder
    assert float(found["loss"]) >= 1.0
    # Black has a line of its own: its mistakes, or that it made none.
    assert (t("en", "analysis.side", name="Bob") in lines) or (t("en", "analysis.clean", name="Bob") in lines)
    assert lines[-1] == t("en", "analysis.legend_arrow")
    # The picture of the mistakes.
    assert report.image is not None and report.image.startswith(PNG)
    # The PDN: the same moves and result, a comment after every move that was searched.
    name, data = report.document
    assert name == f"game-{game}-analysis.pdn"
    pdn = data.decode("utf-8")
    [parsed] = read_pdn(pdn)
    assert [str(m) for m in parsed.moves] == BLUNDER_LINE
    assert parsed.result.score == "0-1"
    assert parsed.tags["White"] == "Ana" and parsed.tags["Black"] == "Bob"
    assert parsed.tags["Annotator"] == "draughts-bot"
    comments = re.findall(r"\{([^}]*)\}", pdn)
    searched = 0                              # a move that was the only one is not commented
    pos = Position.start("italian")
    for move in BLUNDER_LINE:
        searched += len(pos.legal_moves()) > 1
        pos = pos.play(pos.parse_move(move))
    assert len(comments) == searched
    assert all(re.match(r"[+-]\d+\.\d\d|win|loss", c) for c in comments), comments
    assert re.search(r"22-19\?{1,2} \{[^}]*better \d+-\d+", pdn), pdn
    # Delivered once.
    out = an.service.tick(platform=an.platform)
    assert [o.reply.text for o in out] == [report.text] and reports(an, game) == []


def test_analysis_takes_the_game_named_or_the_board_replied_to(an):
    older = finished_game(an)
    newer = finished_game(an, resigner="bob")
    assert analysing(older).match(an.text("ana", f"/analysis #{older}"))
    assert an.service.settle(SETTLE)
    assert len(reports(an, older)) == 1 and reports(an, newer) == []
    an.service.tick(platform=an.platform)
    an.service.remember_board(an.platform, an.chat_id, "m-7", older)
    assert analysing(older).match(an.text("bob", "/analysis", reply_to="m-7"))
    assert an.service.settle(SETTLE)
    assert len(reports(an, older)) == 1 and reports(an, newer) == []
    # Without either, the asker's last finished game.
    an.service.tick(platform=an.platform)
    assert analysing(newer).match(an.text("bob", "/analysis"))


def test_a_second_analysis_in_the_same_chat_waits_for_the_first(held):
    chat, executor = held
    first = finished_game(chat)
    second = finished_game(chat, resigner="bob")
    assert analysing(first).match(chat.text("ana", f"/analysis #{first}"))
    assert chat.text("bob", f"/analysis #{second}") == t("en", "analysis.busy", id=first)
    assert chat.text("ana", f"/analysis #{first}") == t("en", "analysis.busy", id=first)
    assert len(executor.jobs) == 1 and not chat.service.settle(0.05)
    assert executor.run_all() == 1
    assert chat.service.settle(1.0)
    assert len(reports(chat, first)) == 1 and reports(chat, second) == []
    # Once it is done, the chat may ask again.
    assert analysing(second).match(chat.text("bob", f"/analysis #{second}"))
    executor.run_all()
    assert len(reports(chat, second)) == 1


@pytest.mark.parametrize("workers, at_once", [(1, 1), (2, 1), (3, 2), (8, 2)])
def test_analyses_leave_the_bot_a_worker_on_a_small_machine(chat, workers, at_once):
    executor = HeldExecutor()
    chat.use_thinker(Thinker(executor, workers=workers))
    rooms = [f"room-{n}" for n in range(at_once + 1)]
    for room in rooms:
        finished_game(chat, chat_id=room)
    for room in rooms[:at_once]:
        assert pattern("en", "analysis.started").match(chat.text("ana", "/analysis", chat=room))
    assert chat.text("ana", "/analysis", chat=rooms[-1]) == t("en", "analysis.pool_busy")
    assert executor.run_all() == at_once


def test_the_pool_takes_at_most_two_analyses_at_once(held):
    chat, executor = held
    games = {room: finished_game(chat, chat_id=room) for room in ("room-a", "room-b", "room-c")}
    assert analysing(games["room-a"]).match(chat.text("ana", "/analysis", chat="room-a"))
    assert analysing(games["room-b"]).match(chat.text("ana", "/analysis", chat="room-b"))
    assert chat.text("ana", "/analysis", chat="room-c") == t("en", "analysis.pool_busy")
    assert executor.run_all() == 2
    assert analysing(games["room-c"]).match(chat.text("ana", "/analysis", chat="room-c"))
    executor.run_all()
    texts = [item.reply.text for item in chat.service.pending_messages(chat.platform)]
    assert sorted(pattern("en", "analysis.title").match(x)["id"] for x in texts) == \
        sorted(str(g) for g in games.values())


def test_analysis_of_a_finished_game_against_the_bot(an):
    an.say("ana", "/play italian white level 1")
    an.say("ana", "/m 22-18")
    assert an.service.settle(SETTLE)
    an.resign("ana")
    game = an.rows("games")[-1].id
    assert an.game(game).status == "finished" and len(an.moves(game)) == 2
    assert analysing(game).match(an.text("ana", "/analysis"))
    assert an.service.settle(SETTLE)
    [report] = reports(an, game)
    bot_name = t("en", "bot.name", level=1)
    assert report.text.splitlines()[0] == t("en", "analysis.title", id=game, white="Ana", black=bot_name)
    [parsed] = read_pdn(report.document[1].decode("utf-8"))
    assert [str(m) for m in parsed.moves] == [m.notation for m in an.moves(game)]
    # The annotated PDN says who the bot was, as /pdn does.
    assert (parsed.tags.get("WhiteType"), parsed.tags.get("BlackType"), parsed.tags.get("BotLevel")) == \
        ("human", "program", "1")
    assert parsed.tags.get("Annotator") == "draughts-bot"


def test_costs_are_written_with_the_languages_decimal_comma(an):
    an.say("ana", "/lang it", admin=True)
    game = finished_game(an)
    an.say("bob", "/analysis")
    assert an.service.settle(SETTLE)
    [report] = [r for r in outbox(an) if r.text.startswith(t("it", "analysis.title", id=game, white="Ana",
                                                                 black="Bob"))]
    [blunder] = [line for line in report.text.splitlines() if line.startswith("• 2. 22-19")]
    assert re.fullmatch(r"• 2\. 22-19\?{0,2}, meglio \d+-\d+ \(perde \d+,\d pedine\)", blunder), blunder
    assert report.text.splitlines()[-1] == t("it", "analysis.legend_arrow")


def test_forced_wins_are_told_in_words_and_a_kept_win_is_no_mistake(an):
    game = finished_game(an)
    row = an.game(game)
    pos = Position.start("italian")
    raw = []
    # The engine's notes as the pool returns them: White's 22-19 lets Black force a win (the
    # search's score, about -1000 men); Black's 12-15 keeps a forced win (five men up after).
    scores = {0: (10, 10), 1: (99_990, 500), 2: (120, -99_950), 3: (99_960, 99_960)}
    for ply, move in enumerate(BLUNDER_LINE):
        played = pos.parse_move(move)
        other = next(m for m in pos.legal_moves() if m != played) if len(pos.legal_moves()) > 1 else played
        best = played if ply in (0, 3) else other
        best_score, played_score = scores[ply]
        raw.append({"ply": ply, "move": move, "best": str(best), "best_score": best_score,
                    "played_score": played_score, "forced": len(pos.legal_moves()) == 1})
        pos = pos.play(played)
    an.service.app.analysis._analysed(row, "en", raw)
    [report] = reports(an, game)
    lines = report.text.splitlines()
    [blunder] = [line for line in lines if line.startswith("• 2. 22-19")]
    assert blunder.endswith(f"({t('en', 'analysis.cost_allows_win')})"), blunder
    assert "??" in blunder and "1000" not in report.text and "men)" not in blunder
    assert t("en", "analysis.clean", name="Bob") in lines
    # The picture has the evaluation graph even with one board.
    assert report.image is not None and report.image.startswith(PNG)


def test_a_game_without_mistakes_still_gets_its_evaluation_graph(an):
    game = finished_game(an)
    pos = Position.start("italian")
    raw = []
    for ply, move in enumerate(BLUNDER_LINE):
        raw.append({"ply": ply, "move": move, "best": move, "best_score": 10, "played_score": 10,
                    "forced": len(pos.legal_moves()) == 1})
        pos = pos.play(pos.parse_move(move))
    an.service.app.analysis._analysed(an.game(game), "es", raw)
    [report] = [r for r in outbox(an) if r.text.startswith(t("es", "analysis.title", id=game, white="Ana",
                                                                 black="Bob"))]
    assert report.text.splitlines()[-1] == t("es", "analysis.legend_graph")
    assert report.image is not None and report.image.startswith(PNG)


def test_the_report_names_the_bot_in_the_chats_language(an):
    # The bot's name is stored neutral ("Bot (level 1)") and rendered per language (issue 16).
    an.say("ana", "/lang it", admin=True)
    an.say("ana", "/play italian white level 1")
    an.say("ana", "/m 22-18")
    assert an.service.settle(SETTLE)
    an.resign("ana")
    game = an.rows("games")[-1].id
    an.say("ana", "/analysis")
    assert an.service.settle(SETTLE)
    title = t("it", "analysis.title", id=game, white="Ana", black=t("it", "bot.name", level=1))
    [report] = [r for r in outbox(an) if r.text.startswith(title)]
    assert "Bot (level 1)" not in report.text


def test_a_known_ending_is_named_and_the_move_that_let_the_win_go_is_told(an):
    # Spanish, three kings against one: White wins while the lone king is kept off the long
    # diagonal; 4-11 lets it get there (2-5), and the endgame tables say that is a draw.
    an.say("ana", "/new spanish white")
    cid = an.rows("challenges")[-1].id
    an.say("bob", f"/accept #{cid}")
    game = an.storage.challenge(cid).game_id
    fen = "W:WK3,K4,K6:BK2"
    row = an.game(game)
    an.storage.update_game(game, row.version, {"fen": fen, "start_fen": fen})
    an.say("ana", f"/m #{game} 4-11")
    an.say("bob", f"/m #{game} 2-5")
    an.say("ana", f"/resign #{game}")
    an.say("ana", f"/resign #{game}")
    an.say("ana", f"/analysis #{game}")
    assert an.service.settle(SETTLE)
    [report] = reports(an, game)
    lines = report.text.splitlines()
    header = lines.index(t("en", "analysis.endings"))
    win = t("en", "ending.win", name="Ana", plies=21)
    material = t("en", "ending.material", mine=t("en", "ending.kings_many", n=3), mover="Ana",
                 theirs=t("en", "ending.kings_one"), other="Bob")
    draw = t("en", "ending.because", result=t("en", "ending.draw"),
             why=t("en", "ending.why_reaches_long_diagonal"))
    # One line for the first move: where the game entered the tables, and what 4-11 did there.
    assert lines[header + 1] == "• " + " ".join((
        t("en", "analysis.ending_entered", number="1.", material=material, result=win),
        t("en", "analysis.ending_changed", number="1.", move="4-11??", before=win, after=draw)))
    # Bob's 2-5 kept the draw: nothing more to tell.
    assert not lines[header + 2].startswith("• 1...")
    # The annotated PDN says it too, from White's side.
    assert "tables: draw" in report.document[1].decode()


def test_the_same_game_gets_the_same_analysis_however_busy_the_machine(an, monkeypatch):
    """Issue 28: the analysis searches by nodes, so a machine so loaded that a second passes
    between two looks at the clock gives the same notes as an idle one."""
    game = finished_game(an)
    an.say("bob", f"/analysis #{game}")
    assert an.service.settle(SETTLE)
    idle = an.storage.analysis(game, an.game(game).ply).notes
    ticks = [0.0]

    def busy() -> float:
        ticks[0] += 1.0
        return ticks[0]

    monkeypatch.setattr(bot.ai.search, "clock", busy)
    an.say("bob", f"/analysis #{game}")
    assert an.service.settle(SETTLE)
    assert ticks[0] > 0                                      # the engine did read that clock
    loaded = an.storage.analysis(game, an.game(game).ply).notes
    assert list(loaded) == list(idle)
    assert any(n["move"] == "22-19" and n["best_score"] - n["played_score"] >= 90 for n in loaded)

