"""The puzzle use cases know no chat (issue 18): they take typed requests and return typed results
that ``bot.service.chat.present_puzzles`` words; no catalog, no drawing, no reply is made in them.

Real parts: a SQLite file, the puzzle bank, the rules; only the clock is fixed."""

from __future__ import annotations

import ast
from pathlib import Path

from harness import GROUP, PLATFORM
from source_checks import imports_of

from bot.i18n import t
from bot.rules import Position
from bot.service.chat import present_puzzles
from bot.service.chat.layer import Ctx
from bot.service.features.identity import Caller
from bot.service.features.results_puzzles import (
    Acted,
    AnswerRight,
    AnswerWrong,
    DailyOn,
    DailyRequest,
    DailySetting,
    PuzzleGiven,
    PuzzleHistory,
    PuzzleRequest,
    Refusal,
    Refused,
    Solved,
)

FEATURES = Path(__file__).resolve().parents[2] / "bot" / "service" / "features"
MODULES = ("puzzles.py", "results_puzzles.py")
# What words, draws or builds a chat message: the catalogs, the boards and renderers, the wording helpers.
CHAT_MODULES = ("bot.i18n", "bot.service.chat.boards", "bot.service.chat.wording", "renderers",
                "bot.service.chat.present")
# Made by the chat layer only.  (A Reply may be named in a type: the outbox notices' protocol.)
CHAT_CALLS = ("Reply", "Button", "t", "tn")


def test_puzzle_use_cases_import_no_catalog_or_drawing_and_build_no_reply():
    for name in MODULES:
        tree = ast.parse((FEATURES / name).read_text())
        bad = sorted(m for m in imports_of(tree) if m.startswith(CHAT_MODULES))
        assert not bad, (name, bad)
        calls = sorted({node.func.id for node in ast.walk(tree)
                        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in CHAT_CALLS})
        assert not calls, (name, calls)
        # The user's language is the presenter's business.
        langs = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "lang"
                 and isinstance(node.value, ast.Name) and node.value.id == "ctx"]
        assert not langs, (name, langs)


def test_the_puzzle_use_cases_answer_no_reply():
    tree = ast.parse((FEATURES / "puzzles.py").read_text())
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")):
            returns = ast.unparse(fn.returns) if fn.returns is not None else ""
            assert "Reply" not in returns, (cls.name, fn.name, returns)


def ctx_of(room, user: str, **kw) -> Caller:
    event = room.event(user, **kw)
    record = room.storage.ensure_chat(PLATFORM, event.chat_id, event.chat_kind, room.now[0])
    return Ctx(event, "en", record, room.now[0]).caller


def test_daily_and_personal_puzzles_come_back_as_typed_results(chat):
    puzzles = chat.service.app.puzzles
    assert puzzles.daily(ctx_of(chat, "ana", admin=True), DailyRequest("show")) == DailySetting(None)
    on = puzzles.daily(ctx_of(chat, "ana", admin=True), DailyRequest("on", "08:30", "Europe/Rome"))
    assert isinstance(on, DailyOn) and (on.time, on.zone) == ("08:30", "Europe/Rome")
    shown = puzzles.daily(ctx_of(chat, "ana"), DailyRequest("show"))
    assert isinstance(shown, DailySetting) and shown.subscription is not None
    assert shown.subscription.time == "08:30" and shown.subscription.chat_id == GROUP

    given = puzzles.puzzle(ctx_of(chat, "bob"), PuzzleRequest("new", "italian"), "en")
    assert isinstance(given, PuzzleGiven)
    post = given.board.post
    assert post.kind == "personal" and post.user_id == "bob" and given.board.step == 0
    assert given.board.private and given.board.personal and given.board.picture is None
    puzzle = chat.storage.puzzle_post(post.id)
    assert puzzle is not None

    from bot.service.features.puzzles import puzzle_by_id

    record = puzzle_by_id(post.variant, post.puzzle_id)
    assert record is not None
    pos = Position.from_fen(record["variant"], record["fen"])
    wrong = next(str(m) for m in pos.legal_moves() if str(m) not in record["tree"])
    acted = puzzles.answer_puzzle(ctx_of(chat, "bob"), post, wrong)
    assert isinstance(acted, Acted) and isinstance(acted.step, AnswerWrong)
    assert acted.step.wrong == wrong and acted.step.rating is not None and acted.step.board.step == 0
    # Typed, the miss is answered in words: the board to go on from is drawn only after a press.
    [typed] = present_puzzles.present("en", acted)
    assert typed.image is None and not typed.buttons

    # Someone else's personal puzzle is refused, typed; nothing is stored for them.
    other = puzzles.answer_puzzle(ctx_of(chat, "cid"), post, wrong)
    assert isinstance(other.step, Refused) and other.step.reason is Refusal.NOT_YOURS
    assert chat.storage.attempt(post.id, "cid") is None

    history = puzzles.puzzle(ctx_of(chat, "bob"), PuzzleRequest("history"), "en")
    assert isinstance(history, PuzzleHistory) and [e.outcome for e in history.entries] == ["failed"]
    assert puzzles.hint(ctx_of(chat, "dan")) == Refused(Refusal.NO_PUZZLE)


def test_a_solve_is_typed_and_the_chat_layer_words_it(chat):
    puzzles = chat.service.app.puzzles
    given = puzzles.puzzle(ctx_of(chat, "bob", kind="private", chat="bob"), PuzzleRequest("new", "italian"), "en")
    assert isinstance(given, PuzzleGiven)
    post = given.board.post
    from bot.service.features.puzzles import puzzle_by_id

    record = puzzle_by_id(post.variant, post.puzzle_id)
    assert record is not None
    solution = record["solution"]
    acts = [puzzles.answer_puzzle(ctx_of(chat, "bob", kind="private", chat="bob"), post, move)
            for move in solution[::2]]
    assert all(isinstance(acted.step, AnswerRight) for acted in acts[:-1]), acts
    solved = acts[-1].step
    assert isinstance(solved, Solved) and solved.how == "personal" and list(solved.line) == solution
    assert solved.rating is not None and solved.rating.delta > 0
    # The words and buttons come from the presenter.
    [reply] = present_puzzles.present("en", acts[-1])
    assert reply.text.startswith(t("en", "puzzle.solved_personal", line=" ".join(solution)))
    assert t("en", "puzzle.rating_change", rating=solved.rating.rating,
             delta=f"{round(solved.rating.delta):+d}") in reply.text
    assert [b.action for row in reply.buttons for b in row] == [f"zn:{post.id}"]
