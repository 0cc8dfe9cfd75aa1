"""A finished game's Review link (issue 34, W4) in a real browser (the system's Chromium): the page
it opens shows the game's first position, stepped back from the end, with the whole move list, and
steps forward from there; a ply the game does not have is clamped to its end, and a malformed one
is ignored (the page opens at the end as an Open board link does).  Screenshots of the view at
phone and desktop size go to $W4_SHOTS when set."""

from __future__ import annotations

import os
from typing import Any

from browser_harness import BOARD_GROUP, Board, TelegramBoard, require_browser
from review_games import scripted

from bot.platforms.telegram.adapter import chat_key
from bot.rules import Position

require_browser()          # skip (or fail, in CI) before anything else

MOVES = scripted("italian", 8)


def finished(board: TelegramBoard) -> int:
    game = board.new_game("italian")
    for i, move in enumerate(MOVES):
        board.say("ana" if i % 2 == 0 else "bob", f"/m {move}")
    board.say("ana", "/resign")
    board.say("ana", "/resign")
    row = board.storage.game(game)
    assert row is not None and row.status == "finished" and row.ply == len(MOVES)
    return game


def review_url(board: TelegramBoard, game: int) -> str:
    board.service.chat.serve_web(board.url, board.service.web)
    button = board.service.chat.review_button("telegram", chat_key(BOARD_GROUP["id"]), game)
    assert button is not None and button.url is not None and button.url.endswith("&ply=0")
    return button.url


def pieces(page: Any) -> dict[str, str]:
    found = page.evaluate("""() => Array.from(document.querySelectorAll('[data-role=board] g[data-piece]'))
        .map(g => [g.dataset.at, g.dataset.piece])""")
    return {at: code for at, code in found}


def test_the_review_link_opens_the_first_position_and_steps_on(browser, board):
    game = finished(board)
    url = review_url(board, game)
    shots = os.environ.get("W4_SHOTS")
    for width, height, name in ((390, 844, "phone"), (1280, 800, "desktop")):
        view = Board(browser, url, width=width, height=height)
        try:
            view.page.wait_for_selector("main#app[data-view='0']", state="attached")
            assert view.data("live") == "0" and view.data("status") == "finished"
            assert pieces(view.page) == {str(sq): code for sq, code in Position.start("italian").pieces().items()}
            listed = "document.querySelectorAll('[data-role=moves] li[data-ply]').length"
            view.page.wait_for_function(f"{listed} === {len(MOVES)}")
            assert view.page.locator("[data-role=moves] li[aria-current=step]").count() == 0
            if shots:
                view.page.screenshot(path=f"{shots}_{name}.png", full_page=True)
            view.page.keyboard.press("ArrowRight")
            view.page.wait_for_selector("main#app[data-view='1']", state="attached")
            assert view.page.locator("[data-role=moves] li[aria-current=step]").get_attribute("data-ply") == "1"
            view.page.keyboard.press("End")
            view.page.wait_for_selector(f"main#app[data-view='{len(MOVES)}']", state="attached")
        finally:
            view.close()


def test_a_ply_beyond_the_game_or_malformed_opens_the_end(browser, board):
    game = finished(board)
    base = review_url(board, game).removesuffix("&ply=0")
    for asked in ("&ply=999", "&ply=-3", "&ply=abc", "&ply=1e3"):
        view = Board(browser, base + asked)
        try:
            view.page.wait_for_timeout(300)
            assert view.data("view") == str(len(MOVES)), asked
        finally:
            view.close()
