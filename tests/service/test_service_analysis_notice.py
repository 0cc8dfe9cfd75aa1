"""/analysis through the outbox as a small notification (issue 18): the engine's notes are kept in
storage and the row only names the game, the ply analysed and the language; the report (text,
picture, PDN) is made when the row is delivered, the same as the finished reply written before.

Real parts throughout (SQLite file, rules, Pillow); the engine's notes are made up here so the
test decides which moves are mistakes.
"""

from __future__ import annotations

import random

import pytest
from harness import GROUP, PLATFORM

from bot.rules import Position
from bot.service.chat import present_stats
from bot.service.events import Reply
from bot.service.notifications import AnalysisReady

PNG = b"\x89PNG\r\n\x1a\n"
KB = 1024


def long_game(chat, plies: int = 80, seed: int = 0) -> int:
    """A finished game of ``plies`` legal moves (chosen at random from ``seed``), resigned by Ana."""
    chat.say("ana", "/new italian white")
    cid = chat.storage.open_challenges(PLATFORM, GROUP)[-1].id
    chat.say("bob", f"/accept #{cid}")
    game = chat.storage.challenge(cid).game_id
    rng, pos = random.Random(seed), Position.start("italian")
    for ply in range(1, plies + 1):
        move = rng.choice(pos.legal_moves())
        row = chat.game(game)
        by = chat.to_move(game)
        pos = pos.play(move)
        chat.storage.update_game(game, row.version, {"fen": pos.fen(), "ply": ply, "last_path": list(move.path),
                                                     "last_captured": list(move.captured)},
                                 move={"ply": ply, "notation": str(move), "fen_after": pos.fen(), "by_user": by,
                                       "played_at": chat.now[0]})
    chat.resign("ana", f"/resign #{game}")
    assert chat.game(game).status == "finished" and chat.game(game).ply == plies
    return game


def notes_for(chat, game: int) -> list[dict]:
    """Engine notes as the pool returns them: every fifth move was worse than another by a man or so."""
    pos = Position.start("italian")
    raw = []
    for m in chat.moves(game):
        ply = m.ply - 1
        played = pos.parse_move(m.notation)
        others = [x for x in pos.legal_moves() if x != played]
        mistake = ply % 5 == 2 and others
        best = others[0] if mistake else played
        raw.append({"ply": ply, "move": m.notation, "best": str(best), "best_score": 40 + ply,
                    "played_score": -80 - ply if mistake else 40 + ply, "forced": len(pos.legal_moves()) == 1})
        pos = pos.play(played)
    return raw


def written_before(chat, game: int, lang: str, raw: list[dict]) -> Reply:
    """The reply the analysis wrote to the outbox before it was a notification, as that row was
    delivered (the stored JSON read back)."""
    app = chat.service.app
    reply = present_stats.analysis_report(lang, app.analysis.report(chat.game(game), raw))
    return chat.service.outbox.read(reply.to_json())


def rows(chat) -> list:
    return chat.storage.due_messages(PLATFORM, chat.now[0], 1000)


def delivered(chat) -> list[Reply]:
    return [item.reply for item in chat.service.pending_messages(PLATFORM, limit=1000)]


def test_the_analysis_of_an_80_ply_game_is_an_outbox_row_of_at_most_1_kb(chat):
    game = long_game(chat)
    before = {r.id for r in rows(chat)}
    chat.service.app.analysis._analysed(chat.game(game), "en", notes_for(chat, game))
    [row] = [r for r in rows(chat) if r.id not in before]
    size = len(row.payload.encode("utf-8"))
    kept = chat.storage.dump()["analyses"]
    print(f"analysis outbox row: {size} bytes; notes kept: {len(kept[0][2])} bytes")
    assert size <= KB, row.payload[:200]


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_the_delivered_report_is_the_reply_written_before_it_was_a_notification(chat, lang):
    game = long_game(chat)
    raw = notes_for(chat, game)
    expected = written_before(chat, game, lang, raw)
    delivered(chat)                                   # what the game itself sent
    chat.service.app.analysis._analysed(chat.game(game), lang, raw)
    [report] = delivered(chat)
    assert report == expected
    assert report.image is not None and report.image.startswith(PNG)
    assert report.document is not None and report.document[0] == f"game-{game}-analysis.pdn"
    assert "??" in report.document[1].decode("utf-8")


def test_a_second_analysis_of_the_same_game_replaces_the_kept_notes(chat):
    # The notes are kept for the ply analysed: a second analysis of the same game replaces them,
    # and what is delivered then is the latest report.
    game = long_game(chat)
    raw = notes_for(chat, game)
    delivered(chat)
    chat.service.app.analysis._analysed(chat.game(game), "en", [dict(n, forced=False) for n in raw])
    chat.service.app.analysis._analysed(chat.game(game), "en", raw)
    first, second = delivered(chat)
    assert first == second == written_before(chat, game, "en", raw)


def test_an_analysis_row_written_before_the_change_still_delivers(chat):
    game = long_game(chat)
    raw = notes_for(chat, game)
    app = chat.service.app
    old = present_stats.analysis_report("it", app.analysis.report(chat.game(game), raw))
    delivered(chat)
    chat.service.outbox.say(PLATFORM, GROUP, old)
    [report] = delivered(chat)
    assert report == old


def test_an_analysis_notice_of_a_missing_game_or_missing_notes_is_dropped_with_a_log_line(chat, bot_errors):
    game = long_game(chat, plies=10)
    delivered(chat)
    # A game that is not there (a damaged or pruned database), and a game whose notes are not.
    gone = chat.service.outbox.notify(PLATFORM, GROUP, AnalysisReady(9999, "en", 10))
    no_notes = chat.service.outbox.notify(PLATFORM, GROUP, AnalysisReady(game, "en", 10))
    chat.service.outbox.say(PLATFORM, GROUP, Reply("still here"))
    assert [r.text for r in delivered(chat)] == ["still here"]
    logged = [r.getMessage() for r in bot_errors]
    for item in (gone, no_notes):
        assert any(f"outbox message {item} cannot be read" in line for line in logged), logged
        assert chat.storage.outbox_message(item).status == "dropped"
    assert len(logged) == 2
    bot_errors.clear()                                # the two dropped rows were the point
