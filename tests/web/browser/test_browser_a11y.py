"""The web board read without sight, in a real browser (the system's Chromium; issue 34): the
board's text alternative in Chromium's accessibility tree (every piece by square, compared with the
rules engine's position, at the live position and at every ply stepped to), an accessible name on
every control, and a game move made with the keyboard alone (the move field).  Games are played
through the real service (moves typed in the Telegram group on the strict fake Bot API)."""

from __future__ import annotations

import re
from typing import Any

from browser_harness import Board, TelegramBoard, require_browser
from review_games import positions_after, scripted

from bot.i18n import t
from bot.rules import Position
from bot.service.chat.describe import describe

require_browser()          # skip (or fail, in CI) before anything else

VARIANT = "spanish"
PLIES = 12


def ax_tree(page: Any) -> list[dict[str, Any]]:
    """Chromium's own accessibility tree of the page (what a screen reader is given)."""
    cdp = page.context.new_cdp_session(page)
    try:
        return list(cdp.send("Accessibility.getFullAXTree")["nodes"])
    finally:
        cdp.detach()


def named(nodes: list[dict[str, Any]], role: str) -> list[str]:
    """The names of the tree's nodes of ``role`` (ignored nodes left out)."""
    return [str(n.get("name", {}).get("value", "")) for n in nodes
            if not n.get("ignored") and n.get("role", {}).get("value") == role]


def pieces_read(text: str, lang: str) -> dict[int, str]:
    """The pieces a description names, read back by square with the catalog's own words."""
    out: dict[int, str] = {}
    for side, man, king in (("W", "w", "W"), ("B", "b", "B")):
        head = t(lang, "describe.side", side=t(lang, f"describe.side.{side}"), pieces="")[:-1]
        part = text.split(head, 1)[1].split(".", 1)[0]
        for code, key in ((man, "describe.men"), (king, "describe.kings")):
            word = t(lang, key, squares="")
            for group in part.split(t(lang, "describe.sep")):
                if group.startswith(word):
                    out.update({int(n): code for n in re.findall(r"\d+", group[len(word):])})
    return out


def board_name(view: Board) -> str:
    images = named(ax_tree(view.page), "image")
    assert len(images) == 1, images
    return images[0]


def test_the_tree_lists_every_piece_and_every_control_is_named(browser, board: TelegramBoard) -> None:
    moves = scripted(VARIANT, PLIES, stride=5)
    positions = positions_after(VARIANT, moves)
    game = board.new_game(VARIANT)
    for i, move in enumerate(moves):
        board.say("ana" if i % 2 == 0 else "bob", f"/m {move}")
    view = Board(browser, board.seat_url(game, "ana", "es"), locale="es-ES")
    try:
        view.page.wait_for_selector(f"ol[data-role=moves] > li[data-ply='{PLIES}']", state="attached")
        name = board_name(view)
        assert name == describe("es", positions[PLIES])
        assert name.startswith(t("es", "describe.turn.W"))
        # Every piece of the engine's position is named on its square, and nothing else.
        assert pieces_read(name, "es") == positions[PLIES].pieces()
        nodes = ax_tree(view.page)
        for role in ("button", "link", "textbox", "navigation", "list"):
            names = named(nodes, role)
            assert names and all(n.strip() for n in names), (role, names)
        assert len(named(nodes, "listitem")) == PLIES
        assert t("es", "web.move_entry") in named(nodes, "textbox")
        # Stepped with the keys, the tree names the position of each ply, and the live region says it.
        view.page.keyboard.press("Home")
        for ply in range(PLIES + 1):
            if ply:
                view.page.keyboard.press("ArrowRight")
            view.page.wait_for_selector(f"main#app[data-view='{ply}']", state="attached")
            view.page.wait_for_function(
                "w => document.querySelector('[data-role=board] svg').getAttribute('aria-label') === w",
                arg=describe("es", positions[ply]))
            assert pieces_read(board_name(view), "es") == positions[ply].pieces(), ply
            if ply < PLIES:
                said = view.page.locator("[data-role=board-description]").inner_text()
                assert said == describe("es", positions[ply])
    finally:
        view.close()


def test_a_move_played_with_the_keyboard_alone(browser, board: TelegramBoard) -> None:
    game = board.new_game(VARIANT)
    start = Position.start(VARIANT)
    move = sorted(start.legal_moves(), key=str)[0]
    view = Board(browser, board.seat_url(game, "ana", "en"), width=1280, height=900)
    try:
        view.page.screenshot(path="/tmp/w3_desktop.png", full_page=True)
        # Tab to the move field (no pointer), type the move, Enter.
        for _ in range(40):
            view.page.keyboard.press("Tab")
            if view.page.evaluate("document.activeElement && document.activeElement.dataset.role") == "move-input":
                break
        else:
            raise AssertionError("the move field cannot be reached with Tab")
        # A move the rules refuse: the server says why, nothing is played, the words stay to be mended.
        view.page.keyboard.type("nonsense")
        view.page.keyboard.press("Enter")
        view.page.wait_for_function("() => document.querySelector('[data-role=message]').textContent.length > 0")
        assert board.storage.game(game).ply == 0
        assert view.page.locator("[data-role=move-input]").input_value() == "nonsense"
        view.page.fill("[data-role=move-input]", "")
        view.page.keyboard.type(str(move))
        view.page.keyboard.press("Enter")
        view.wait_ply(1)
        row = board.storage.game(game)
        assert row is not None and row.ply == 1 and row.fen == start.play(move).fen()
        assert view.page.locator("[data-role=move-input]").input_value() == ""
        assert board_name(view) == describe("en", start.play(move))
        # The focus stayed in the field, for the next move.
        assert view.page.evaluate("document.activeElement.dataset.role") == "move-input"
        view.page.screenshot(path="/tmp/w3_desktop_after.png", full_page=True)
    finally:
        view.close()
    phone = Board(browser, board.seat_url(game, "bob", "it"), locale="it-IT")
    try:
        assert board_name(phone) == describe("it", start.play(move))
        phone.page.screenshot(path="/tmp/w3_phone.png", full_page=True)
    finally:
        phone.close()
