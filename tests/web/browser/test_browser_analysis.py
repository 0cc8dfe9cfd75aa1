"""The analysis on the board in a real browser (the system's Chromium; issue 34): a player's page of a
finished game asks for the analysis (the real Analysis use case, the engine in a thread at a small
node budget), then shows the evaluation graph whose points go to their moves, the marks on the move
list, the better move as an arrow at a marked move and the refuting line stepped through on the
board without moving the list.  Games are played in the Telegram group on the strict fake Bot API."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from browser_harness import Board, TelegramBoard, require_browser
from review_games import positions_after, scripted

from bot.i18n import t
from bot.rules import Position
from bot.service.features import analysis as analysis_feature
from bot.service.thinking import Thinker

require_browser()          # skip (or fail, in CI) before anything else

VARIANT = "spanish"
PLIES = 16
TEST_NODES = (3_000, 12_000)


MOVES = scripted(VARIANT, PLIES)


@pytest.fixture
def analysing(board: TelegramBoard, monkeypatch: pytest.MonkeyPatch) -> Iterator[TelegramBoard]:
    """The board's service with its engine in a thread (the use case's queue and limits) at a small budget."""
    monkeypatch.setattr(analysis_feature, "ANALYSIS_NODES", TEST_NODES)
    executor = ThreadPoolExecutor(1)
    board.service.thinker = Thinker(executor, workers=2)
    yield board
    assert board.service.settle(60)
    executor.shutdown(wait=True, cancel_futures=True)


def drawn(page: Any) -> dict[str, str]:
    found = page.evaluate("""() => Array.from(document.querySelectorAll('[data-role=board] g[data-piece]'))
        .map(g => [g.dataset.at, g.dataset.piece])""")
    return {at: code for at, code in found}


def pieces(pos: Position) -> dict[str, str]:
    return {str(sq): code for sq, code in pos.pieces().items()}


def finished(board: TelegramBoard) -> int:
    game = board.new_game(VARIANT)
    for i, move in enumerate(MOVES):
        board.say("ana" if i % 2 == 0 else "bob", f"/m {move}")
    board.say("bob", "/resign")
    board.say("bob", "/resign")
    row = board.storage.game(game)
    assert row is not None and row.status == "finished" and row.ply == PLIES
    return game


def test_the_analysis_asked_from_the_page_graph_marks_arrow_and_refuting_line(browser, analysing) -> None:
    board = analysing
    positions = positions_after(VARIANT, MOVES)
    game = finished(board)
    view = Board(browser, board.seat_url(game, "ana"))
    try:
        page = view.page
        section = page.locator("section[data-role=analysis]")
        page.wait_for_selector("section[data-role=analysis][data-status=none]", state="attached")
        # The player asks for the analysis on the page: the use case runs it as it would /analysis.
        page.get_by_role("button", name=t("en", "web.analyse")).click()
        page.wait_for_selector("section[data-role=analysis][data-status=ready]", state="attached", timeout=60_000)
        assert page.locator("[data-role=analysis-message]").inner_text() == ""
        data = board.service.web.analysis_view(game, None, "en")
        assert data is not None and data["status"] == "ready"
        marked = {n["ply"]: n for n in data["notes"] if n["mark"]}
        assert marked
        # The graph: a point per ply, move numbers on its axis; each point goes to its move.
        points = page.locator("svg[data-role=graph] [data-graph-ply]")
        assert points.count() == PLIES
        assert page.locator("svg[data-role=graph] text[data-graph-number='1']").count() == 1
        for ply in (3, 1, PLIES, 9):
            page.locator(f"svg[data-role=graph] [data-graph-ply='{ply}']").click()
            page.wait_for_selector(f"main#app[data-view='{ply}']", state="attached")
            assert drawn(page) == pieces(positions[ply])
            current = page.locator("[data-role=moves] li[aria-current=step]")
            assert current.get_attribute("data-ply") == str(ply)
        # The keyboard reaches a point too.
        page.locator("svg[data-role=graph] [data-graph-ply='5']").focus()
        page.keyboard.press("Enter")
        page.wait_for_selector("main#app[data-view='5']", state="attached")
        # The marks on the move list are the analysis's.
        for li in page.locator("ol[data-role=moves] > li").all():
            ply = int(li.get_attribute("data-ply") or 0)
            want = marked[ply]["mark"] if ply in marked else ""
            assert li.get_attribute("data-mark") == want, ply
            if want:
                assert li.locator("[data-role=mark]").inner_text() == want
        # At a marked move: its better move as an arrow, the refuting line stepped on the board.
        ply, note = min(marked.items())
        page.locator(f"ol[data-role=moves] li[data-ply='{ply}'] button").click()
        page.wait_for_selector(f"main#app[data-view='{ply}']", state="attached")
        arrow = page.locator("[data-role=board] [data-arrow]")
        arrow.wait_for(state="attached")
        better = note["better"]["path"]
        assert arrow.get_attribute("data-from") == str(better[0])
        assert arrow.get_attribute("data-to") == str(better[-1])
        assert arrow.get_attribute("data-arrow") == note["better"]["notation"]
        note_text = page.locator("[data-role=analysis-note]").inner_text()
        assert note["better"]["notation"] in note_text and t("en", "web.better") in note_text
        page.screenshot(path="/tmp/w2_phone.png", full_page=True)
        line = note["line"]
        assert line
        forward = page.get_by_role("button", name=t("en", "web.line_forward"))
        pos = positions[ply]
        for i, step in enumerate(line, start=1):
            forward.click()
            page.wait_for_selector(f"[data-role=line][data-step='{i}']", state="attached")
            pos = pos.play(pos.parse_move(step["notation"]))
            assert drawn(page) == pieces(pos), i
            trail = page.locator("[data-role=board] [data-last-path]")
            assert trail.get_attribute("data-last-path") == step["notation"]
            # The game's list stays where it was: the line is not the game.
            assert view.data("view") == str(ply)
            assert page.locator("[data-role=moves] li[aria-current=step]").get_attribute("data-ply") == str(ply)
            assert arrow.count() == 0
        assert forward.is_disabled()
        page.screenshot(path="/tmp/w2_line_phone.png", full_page=True)
        page.get_by_role("button", name=t("en", "web.line_back")).click()
        page.wait_for_selector(f"[data-role=line][data-step='{len(line) - 1}']", state="attached")
        # Leaving the line returns to the game's move, its arrow back.
        page.get_by_role("button", name=t("en", "web.line_leave")).click()
        page.wait_for_selector("[data-role=line][data-step='0']", state="attached")
        assert drawn(page) == pieces(positions[ply])
        arrow.wait_for(state="attached")
        # A step of the game leaves the line too.
        page.locator(f"ol[data-role=moves] li[data-ply='{ply}'] button").click()
        forward.click()
        page.wait_for_selector("[data-role=line][data-step='1']", state="attached")
        page.keyboard.press("ArrowRight")
        page.wait_for_selector(f"main#app[data-view='{ply + 1}']", state="attached")
        assert drawn(page) == pieces(positions[ply + 1])
        # Named in the accessibility tree: the graph, its points, the line's controls.
        tree = section.aria_snapshot()
        assert t("en", "web.analysis_title") in tree
        assert f'group "{t("en", "web.graph")}"' in tree
        assert tree.count("- button") >= PLIES
    finally:
        view.close()
    desk = Board(browser, board.spectator_url(game), width=1280, height=900)
    try:
        page = desk.page
        page.wait_for_selector("section[data-role=analysis][data-status=ready]", state="attached")
        # A spectator sees the analysis, and no button asks for another.
        assert page.get_by_role("button", name=t("en", "web.analyse")).count() == 0
        ply = min(marked)
        page.locator(f"svg[data-role=graph] [data-graph-ply='{ply}']").click()
        page.locator("[data-role=board] [data-arrow]").wait_for(state="attached")
        page.screenshot(path="/tmp/w2_desktop.png", full_page=True)
    finally:
        desk.close()
