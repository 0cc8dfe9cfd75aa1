"""Ratings, history, analysis and settings as use cases that know no chat (issue 18): they take
typed requests and return typed results, which ``bot.service.chat.present_stats`` words and draws.

The source check reads the modules with ``ast``; the behaviour checks run a real service on a
SQLite file (tmp_path) with the rules and Glicko-2, only the clock fixed."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from test_service_ratings import GROUP, PLATFORM, Room

from bot.service import ChatEvent
from bot.service.chat.layer import Ctx, notify_request
from bot.service.features.results_stats import (
    AnalysisRefused,
    AnalysisRequest,
    ChatSettings,
    FinishedGames,
    HeadToHead,
    HistoryRequest,
    LanguageSet,
    NotifySet,
    NotifyShown,
    PlayerStats,
    PuzzleRanking,
    RulesOf,
    SettingsRequest,
    StatsRequest,
    TopRequest,
    UnknownPlayer,
    VariantRanking,
    VariantSet,
)

REPO = Path(__file__).resolve().parents[2]
MODULES = ["bot/service/features/ratings.py", "bot/service/features/analysis.py",
           "bot/service/features/history.py", "bot/service/features/settings.py"]
# What only a chat's answer needs: the catalogs, the renderers and the boards drawn for a chat.
CHAT_ONLY = ("bot.i18n", "renderers", "bot.service.chat.boards", "bot.service.chat.wording",
             "bot.service.chat.presenters", "bot.service.chat.present_stats")
# Built only by presenters: a use case returns results, not finished messages.
CHAT_TYPES = ("Reply", "Button")


def chat_knowledge(path: Path) -> list[str]:
    """Where a module words or draws an answer: imports of what only a chat needs, replies or
    buttons built, catalog lookups (t, tn), the chat's language read (``ctx.lang``: a request
    names the language of a report that comes later)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom | ast.Import):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if isinstance(node, ast.ImportFrom) and node.module in ("bot.service", "bot.service.chat",
                                                                    "bot.service.chat.layer"):
                names += [f"{node.module}.{a.name}" for a in node.names]
            found += [f"{path.name}:{node.lineno}: imports {n}" for n in names
                      if any(n == m or n.startswith(m + ".") for m in CHAT_ONLY)]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in (*CHAT_TYPES, "t", "tn")):
            found.append(f"{path.name}:{node.lineno}: calls {node.func.id}()")
        elif (isinstance(node, ast.Attribute) and node.attr == "lang" and isinstance(node.value, ast.Name)
              and node.value.id == "ctx"):
            found.append(f"{path.name}:{node.lineno}: reads ctx.lang")
    return found


def test_the_stats_history_analysis_and_settings_use_cases_know_no_chat():
    found = [line for module in MODULES for line in chat_knowledge(REPO / module)]
    assert not found, "use cases that word or draw their answers:\n" + "\n".join(found)


def test_the_check_sees_a_use_case_that_words_its_answer(tmp_path: Path):
    """The scan is no empty check: each way of wording an answer is caught."""
    source = tmp_path / "wordy.py"
    source.write_text("from bot.i18n import t\nfrom bot.service.chat import boards\nfrom renderers.panels import x\n"
                      "def f(ctx):\n    return [Reply(t(ctx.lang, 'k'))]\n", encoding="utf-8")
    assert len(chat_knowledge(source)) == 6


@pytest.fixture
def room(tmp_path: Path, now: list[float]):
    r = Room(tmp_path / "stats.db", now)
    yield r
    r.close()


def ctx_of(room: Room, user: str, lang: str, chat: str = GROUP, chat_kind: str = "group", **kw: object) -> Ctx:
    event = ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(),
                      chat_kind=chat_kind, username=user, text="", **kw)
    record = room.storage.ensure_chat(PLATFORM, chat, chat_kind, room.now[0])
    return Ctx(event, lang, record, room.now[0])


def test_stats_and_top_are_data_the_same_in_every_language(room: Room):
    for _ in range(5):
        room.game("ana", "bob", "white")
    app = room.service.app
    results = {}
    for lang in ("en", "es", "it"):
        ctx = ctx_of(room, "ana", lang)
        by = ctx.caller
        results[lang] = (app.ratings.stats(by, StatsRequest()), app.ratings.stats(by, StatsRequest(("@ana", "@bob"))),
                         app.ratings.top(by, TopRequest(), lang), app.ratings.top(by, TopRequest("puzzles"), lang),
                         app.ratings.stats(by, StatsRequest(("@nobody",))))
    assert results["en"] == results["es"] == results["it"]
    mine, together, top, puzzles, unknown = results["en"]
    assert isinstance(mine, PlayerStats) and mine.name == "Ana"
    [italian] = mine.pools
    assert (italian.variant, italian.vs_bot, italian.record.games, italian.record.wins) == ("italian", False, 5, 5)
    assert italian.rating == room.service.app.ratings._shown(room.rating("ana"))
    [(variant, points)] = mine.series
    assert variant == "italian" and len(points) == 5 and points[-1][1] == room.rating("ana").rating
    assert together == HeadToHead("Ana", "Bob", [("italian", italian.record)])
    [board] = top
    assert isinstance(board, VariantRanking) and not board.everywhere
    assert [(e.name, e.games) for e in board.entries] == [("Ana", 5), ("Bob", 5)]
    assert puzzles == PuzzleRanking([])
    assert unknown == UnknownPlayer("@nobody")


def test_history_settings_and_analysis_return_results(room: Room):
    game = room.game("ana", "bob", "draw")
    app = room.service.app
    ctx = ctx_of(room, "ana", "es")
    assert app.history.history(ctx.caller, HistoryRequest()) == FinishedGames([room.storage.game(game)])
    assert app.history.history(ctx.caller, HistoryRequest("@zed")) == UnknownPlayer("@zed")
    assert app.settings.rules(ctx.caller, None, "es") == RulesOf("italian")
    assert app.settings.settings(ctx.caller, SettingsRequest(variant="spanish"), "es") == VariantSet("spanish")
    # The next command's context reads the chat as stored now.
    ctx = ctx_of(room, "ana", "es")
    assert app.settings.settings(ctx.caller, SettingsRequest(), "es") == ChatSettings("spanish")
    assert app.settings.settings(ctx.caller, SettingsRequest(lang="it"), "es") == LanguageSet("it")
    assert room.storage.chat(PLATFORM, GROUP).language == "it"
    assert app.settings.notify(ctx.caller, None) == NotifyShown(False)
    linked = replace(ctx, event=replace(ctx.event, private_link="https://t.me/bot?start={payload}"))
    assert notify_request(app, linked, True) == NotifySet(True, "https://t.me/bot?start=notify")
    assert app.settings.notify(ctx.caller, None) == NotifyShown(True)
    assert app.analysis.analyse(ctx.caller, AnalysisRequest(game + 1, "es")) == AnalysisRefused("unknown", game + 1)
