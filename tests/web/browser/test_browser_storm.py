"""A storm run in a real browser (the system's Chromium; issue 33): /storm typed in the Telegram group
on the strict fake Bot API, the run's page opened from its signed link, a bank puzzle solved by
tapping its pieces and squares, a wrong move typed in the move field with the keyboard alone (it
costs 10 s on the server's clock), the page read through Chromium's accessibility tree (the board's
text alternative names every piece of the puzzle's position; every control has a name), and an
answer after the time is up refused while the result reaches the group, once, in its language."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlparse

from browser_harness import BOARD_GROUP, PLATFORM, WAIT_MS, Board, TelegramBoard, require_browser
from catalog_text import says
from test_browser_a11y import ax_tree, named, pieces_read

from bot.i18n import t
from bot.puzzles import bank
from bot.puzzles.solve import position_after
from bot.rules import Position
from bot.service.chat.describe import describe
from bot.service.features.storm import MISS_SECONDS, RUN_SECONDS

require_browser()          # skip (or fail, in CI) before anything else

NO_TELEGRAM_REFUSALS = False       # the player never opened a private chat: the fake refuses it


def storm_url(board: TelegramBoard, user: str = "ana") -> tuple[int, str]:
    board.service.chat.serve_web(board.url, board.service.web)
    board.say(user, "/storm italian")
    runs = [run for run in (board.storage.storm_runs.get(n) for n in range(1, 5)) if run is not None]
    assert len(runs) == 1, runs
    run = runs[0]
    page = board.service.web.storm
    assert page is not None
    return run.id, board.url + page.path(run.id, PLATFORM, board.user_id(user))


def shown(view: Board) -> dict[str, Any]:
    state = view.page.evaluate("JSON.parse(document.getElementById('app').dataset.boot).state")
    return dict(state)


def puzzle_now(view: Board) -> dict[str, Any]:
    found = bank.by_id("italian", view.data("puzzle") or "")
    assert found is not None
    return found


def play_by_taps(view: Board, position: Position, notation: str) -> None:
    move = position.parse_move(notation)
    view.tap_square(move.path[0])
    view.tap_destination(move.path[-1])
    routes = view.page.locator("[data-role=paths] button[data-path-index]")
    if routes.count():
        view.page.locator(f"[data-role=paths] button[data-path='{notation}']").first.tap()


def group_texts(board: TelegramBoard) -> list[str]:
    return [c.params.get("text") or c.params.get("caption") or "" for c in board.http.calls
            if c.status == 200 and c.method.startswith("send") and int(c.params.get("chat_id", 0)) == BOARD_GROUP["id"]]


def test_a_storm_is_played_on_the_page_and_its_result_reaches_the_group(browser, board: TelegramBoard) -> None:
    run_id, url = storm_url(board)
    # Everything in the language the group was answered in (the run's, and its page's without ?lang=).
    run = board.storage.storm_runs.get(run_id)
    assert run is not None
    lang = run.lang
    assert any(says(text, lang, "storm.group") for text in group_texts(board))
    assert not any("/storm/" in text for text in group_texts(board))
    view = Board(browser, url)
    try:
        assert view.data("status") == "running" and view.data("index") == "0"
        # The page speaks the browser's language (asked for by Accept-Language, as the game's page).
        page_lang = view.page.evaluate("JSON.parse(document.getElementById('app').dataset.boot).lang")
        assert page_lang == "en" and view.page.locator("html").get_attribute("lang") == "en"
        clock = view.page.locator("[data-role=clock]").inner_text()
        assert clock in ("3:00", "2:59", "2:58"), clock
        # The puzzle solved by taps: each solver move, the forced reply played by the server.
        pz = puzzle_now(view)
        line = pz["solution"]
        for i in range(0, len(line), 2):
            play_by_taps(view, position_after(pz, line[:i]), line[i])
            if i + 2 < len(line):
                view.page.wait_for_selector(f"main#app[data-ply='{i + 2}']", state="attached", timeout=WAIT_MS)
        view.page.wait_for_selector("main#app[data-solved='1'][data-index='1']", state="attached", timeout=WAIT_MS)
        assert says(view.message(), page_lang, "storm.solved")

        # Read without sight: the board's name is the new puzzle's position in words, every piece.
        nxt = puzzle_now(view)
        start = Position.from_fen("italian", nxt["fen"])
        nodes = ax_tree(view.page)
        images = named(nodes, "image")
        assert images == [describe(page_lang, start)]
        assert pieces_read(images[0], page_lang) == start.pieces()
        for role in ("button", "textbox"):
            names = named(nodes, role)
            assert names and all(n.strip() for n in names), (role, names)
        assert t(page_lang, "storm.page.move_label") in named(nodes, "textbox")

        # A wrong move with the keyboard alone: Tab to the field, type, Enter.
        tree = nxt["tree"]
        wrong = next((str(m) for m in start.legal_moves() if str(m) not in tree), None)
        if wrong is not None:
            field = view.page.locator("[data-role=move-input]")
            field.focus()
            view.page.keyboard.type(wrong)
            view.page.keyboard.press("Enter")
            view.page.wait_for_selector("main#app[data-missed='1'][data-index='2']", state="attached",
                                        timeout=WAIT_MS)
            assert says(view.message(), page_lang, "storm.wrong")
            row = board.storage.storm_runs.get(run_id)
            # The 3 minutes started when the page was first opened, not at /storm.
            assert row is not None and row.opened_at is not None
            assert row.ends_at == row.opened_at + RUN_SECONDS - MISS_SECONDS

        # The server's clock runs out: the page's answer is refused, the run ends, the group hears it.
        board.service.app.runtime.clock = lambda: time.time() + RUN_SECONDS + 5
        pz = puzzle_now(view)
        index = view.data("index")
        play_by_taps(view, position_after(pz, []), pz["solution"][0])
        view.page.wait_for_selector("main#app[data-status='finished']", state="attached", timeout=WAIT_MS)
        assert says(view.message(), page_lang, "storm.late")
        assert view.data("index") == index and view.data("solved") == "1"
        assert view.page.locator("[data-role=move-entry]").is_hidden()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not any(says(x, lang, "storm.result") for x in group_texts(board)):
            time.sleep(0.1)
        results = [x for x in group_texts(board) if says(x, lang, "storm.result")]
        assert len(results) == 1 and "Ana" in results[0]
    finally:
        view.close()


def test_an_answer_that_never_reaches_the_server_says_so_and_changes_nothing(browser, board: TelegramBoard) -> None:
    run_id, url = storm_url(board)
    view = Board(browser, url)
    try:
        version = view.data("version")
        # The network drops the answer (a phone between two cells): the page says the server could
        # not be reached, in the page's language, and the run stays where it was.
        view.page.route(lambda address: urlparse(address).path.endswith("/move"), lambda route: route.abort())
        pz = puzzle_now(view)
        play_by_taps(view, position_after(pz, []), pz["solution"][0])
        view.page.wait_for_selector("[data-role=message].error", state="attached", timeout=WAIT_MS)
        assert view.message() == t("en", "storm.page.error")
        assert (view.data("version"), view.data("ply"), view.data("index")) == (version, "0", "0")
        row = board.storage.storm_runs.get(run_id)
        assert row is not None and (row.current, row.moves, row.solved, row.missed) == (0, "[]", 0, 0)
    finally:
        view.close()
