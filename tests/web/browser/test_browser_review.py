"""Reviewing a game on the web board in a real browser (the system's Chromium; issue 34): the move
list (an ``ol`` of one ``li`` per ply), stepping with the keyboard, the buttons and the list, each
position drawn compared with the rules engine's, the list growing live, and no move played from an
earlier position until "back to the game".  Games are played through the real service (moves typed
in the Telegram group on the strict fake Bot API)."""

from __future__ import annotations

from typing import Any

from browser_harness import Board, TelegramBoard, require_browser
from review_games import positions_after, scripted

from bot.i18n import t
from bot.rules import Position

require_browser()          # skip (or fail, in CI) before anything else

PLIES = 40
VARIANT = "italian"


def play(board: TelegramBoard, game: int, moves: list[str], first: int = 0) -> None:
    for i, move in enumerate(moves, start=first):
        board.say("ana" if i % 2 == 0 else "bob", f"/m {move}")
        row = board.storage.game(game)
        assert row is not None and row.ply == i + 1, (i, move)


def drawn(page: Any) -> dict[str, str]:
    """The pieces the page draws, by square (its data attributes)."""
    found = page.evaluate("""() => Array.from(document.querySelectorAll('[data-role=board] g[data-piece]'))
        .map(g => [g.dataset.at, g.dataset.piece])""")
    return {at: code for at, code in found}


def shows(view: Board, ply: int, positions: list[Position], moves: list[str]) -> None:
    """The page shows ply ``ply``: that position's pieces, its move drawn, its list item current."""
    view.page.wait_for_selector(f"main#app[data-view='{ply}']", state="attached")
    assert drawn(view.page) == {str(sq): code for sq, code in positions[ply].pieces().items()}, ply
    trail = view.page.locator("[data-role=board] [data-last-path]")
    if ply == 0:
        assert trail.count() == 0
    else:
        assert trail.get_attribute("data-last-path") == moves[ply - 1]
        capture = view.page.locator("[data-role=board] [data-captured-mark]")
        mark = sorted(int(capture.nth(i).get_attribute("data-captured-mark")) for i in range(capture.count()))
        assert mark == sorted(positions[ply - 1].parse_move(moves[ply - 1]).captured)
    # The captured counts are the shown ply's: a player's row counts the other side's pieces gone
    # since the first position.
    for colour, other in (("W", "B"), ("B", "W")):
        gone = sum(positions[0].count(other)) - sum(positions[ply].count(other))
        counted = view.page.locator(f"[data-color={colour}] [data-role=captured]").inner_text()
        assert counted.endswith(f": {gone}"), (ply, colour, counted)
    current = view.page.locator("[data-role=moves] li[aria-current=step]")
    if ply == 0:
        assert current.count() == 0
    else:
        assert current.count() == 1 and current.get_attribute("data-ply") == str(ply)


def test_a_40_ply_game_stepped_to_every_ply_by_keys_buttons_and_taps(browser, board: TelegramBoard) -> None:
    moves = scripted(VARIANT, PLIES)
    positions = positions_after(VARIANT, moves)
    assert any("x" in m for m in moves)
    game = board.new_game(VARIANT)
    play(board, game, moves)
    view = Board(browser, board.spectator_url(game) + "&lang=es", width=1280, height=900, locale="es-ES")
    try:
        items = view.page.locator("ol[data-role=moves] > li")
        view.page.wait_for_selector(f"ol[data-role=moves] > li[data-ply='{PLIES}']", state="attached")
        assert items.count() == PLIES
        texts = items.all_inner_texts()
        assert texts[0] == f"1. {moves[0]}" and texts[1] == f"1… {moves[1]}" and texts[-1] == f"20… {moves[-1]}"
        captures = [int(x) for x in view.page.eval_on_selector_all(
            "ol[data-role=moves] > li[data-capture]", "els => els.map(e => e.dataset.ply)")]
        assert captures == [i + 1 for i, m in enumerate(moves) if "x" in m]
        shows(view, PLIES, positions, moves)
        # The page's hook for later views (the analysis): told each ply shown.
        view.page.evaluate("window.__seen = []; window.draughtsBoard.onPly((n, live) => window.__seen.push([n, live]))")
        # The keyboard: Home, then ArrowRight through every ply, ArrowLeft back, End.
        view.page.keyboard.press("Home")
        shows(view, 0, positions, moves)
        for ply in range(1, PLIES + 1):
            view.page.keyboard.press("ArrowRight")
            shows(view, ply, positions, moves)
        for ply in range(PLIES - 1, PLIES - 4, -1):
            view.page.keyboard.press("ArrowLeft")
            shows(view, ply, positions, moves)
        view.page.keyboard.press("End")
        shows(view, PLIES, positions, moves)
        seen = view.page.evaluate("window.__seen")
        assert seen == [[0, False], *[[n, n == PLIES] for n in range(1, PLIES + 1)],
                        [39, False], [38, False], [37, False], [PLIES, True]]
        # The buttons, labelled in the page's language: back through every ply, first, forward, last.
        back = view.page.get_by_role("button", name=t("es", "web.step_back"))
        for ply in range(PLIES - 1, -1, -1):
            back.click()
            shows(view, ply, positions, moves)
        assert back.is_disabled()
        view.page.get_by_role("button", name=t("es", "web.step_last")).click()
        shows(view, PLIES, positions, moves)
        view.page.get_by_role("button", name=t("es", "web.step_first")).click()
        shows(view, 0, positions, moves)
        view.page.get_by_role("button", name=t("es", "web.step_forward")).click()
        shows(view, 1, positions, moves)
        # Tapping a move in the list.
        for ply in (23, 7, 40, 2):
            view.page.locator(f"ol[data-role=moves] li[data-ply='{ply}'] button").click()
            shows(view, ply, positions, moves)
        view.page.locator("ol[data-role=moves] li[data-ply='30'] button").click()
        shows(view, 30, positions, moves)
        view.page.screenshot(path="/tmp/review_desktop.png")
        # The move list is a list of one item a ply in the accessibility tree.
        tree = view.page.locator("ol[data-role=moves]").aria_snapshot()
        assert tree.startswith(f'- list "{t("es", "web.moves")}"')
        assert tree.count("- listitem") == PLIES
        for name in ("step_first", "step_back", "step_forward", "step_last"):
            assert view.page.get_by_role("button", name=t("es", f"web.{name}")).count() == 1
    finally:
        view.close()


def test_a_running_games_list_grows_live_and_no_move_is_played_from_the_past(browser, board: TelegramBoard) -> None:
    moves = scripted(VARIANT, 6)
    positions = positions_after(VARIANT, moves)
    game = board.new_game(VARIANT)
    play(board, game, moves[:3])                      # Black to move
    ana = Board(browser, board.seat_url(game, "ana"))
    try:
        page = ana.page
        page.wait_for_selector("ol[data-role=moves] > li[data-ply='3']", state="attached")
        assert page.locator("[data-action=live]").is_hidden()
        play(board, game, moves[3:4], first=3)        # Bob, in the chat: the list grows
        page.wait_for_selector("ol[data-role=moves] > li[data-ply='4']", state="attached")
        ana.wait_ply(4)
        assert page.locator("ol[data-role=moves] > li").all_inner_texts()[-1] == f"2… {moves[3]}"
        shows(ana, 4, positions, moves)
        assert ana.data("live") == "1" and page.locator("[data-mine]").count() > 0
        # Stepped back: nothing can be played, and the page says why.
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        shows(ana, 2, positions, moves)
        assert ana.data("live") == "0" and page.locator("[data-mine]").count() == 0
        live = page.get_by_role("button", name=t("en", "web.back_to_game"))
        assert live.is_visible()
        mover = positions[4].parse_move(moves[4])
        ana.tap_square(mover.path[0])
        page.wait_for_function("document.querySelector('[data-role=message]').textContent.length > 0")
        assert ana.message() == t("en", "web.stepped_back")
        assert page.locator("circle[data-dest]").count() == 0
        row = board.storage.game(game)
        assert row is not None and row.ply == 4
        page.screenshot(path="/tmp/review_phone.png")
        # Back to the game: the live position, from which the move is played.
        live.click()
        shows(ana, 4, positions, moves)
        assert ana.data("live") == "1" and live.is_hidden()
        ana.tap_square(mover.path[0])
        ana.tap_destination(mover.path[-1])
        ana.wait_ply(5)
        page.wait_for_selector("ol[data-role=moves] > li[data-ply='5']", state="attached")
        row = board.storage.game(game)
        assert row is not None and row.ply == 5 and row.fen == positions[5].fen()
        shows(ana, 5, positions, moves)
    finally:
        ana.close()
