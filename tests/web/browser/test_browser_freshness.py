"""What a player can trust on the page (issue 28), in a real browser (the system's Chromium) at a
phone's size: the page shows the newest state whatever order the answers arrive in (the answer to
the player's own move may come after the event stream brought the opponent's reply), the message
line under the board says the latest thing that happened and goes when the game moved past it, and
a page load asks for nothing that is not there (no console errors: the icon is served)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from browser_harness import BOARD_GROUP, PLATFORM, WAIT_MS, Board, TelegramBoard, require_browser

from bot.i18n import t
from bot.rules import Position

require_browser()          # skip (or fail, in CI) before anything else

VARIANT = "italian"
# Replies of the level-1 bot the page must show, one after another, without a reload.
BOT_REPLIES = 6


def played(board: TelegramBoard, game: int, ply: int) -> str:
    """The message line's words for the move that made ``ply``: who played it, as the page names them."""
    row, moves = board.service.game_with_moves(game)
    assert row is not None and len(moves) >= ply
    mover = "W" if ply % 2 == 1 else "B"
    state = board.service.web.state(game, None, "en")
    assert state is not None
    return t("en", "move.played", name=state.players[mover]["name"], move=moves[ply - 1].notation, id=game)


def message_is(page: Board, text: str) -> None:
    page.page.wait_for_function("t => document.querySelector('[data-role=message]').textContent === t",
                                arg=text, timeout=WAIT_MS)


def tap_move(page: Board, board: TelegramBoard, game: int, user: str) -> str:
    """Tap the first legal move the page offers (by the state the server gives the seat); its notation."""
    seat = board.service.web.read_token(board.service.web.seat_token(game, PLATFORM, board.user_id(user)))
    state = board.service.web.state(game, seat, "en")          # type: ignore[arg-type]
    assert state is not None and state.moves, "not this player's turn"
    move = state.moves[0]
    page.tap_square(move.path[0])
    page.tap_destination(move.path[-1])
    if sum(1 for m in state.moves if m.path[0] == move.path[0] and m.path[-1] == move.path[-1]) > 1:
        page.page.locator(f"[data-role=paths] button[data-path='{move.notation}']").tap()
    return move.notation


def type_move(board: TelegramBoard, game: int, user: str) -> str:
    """The player moves in the chat (the page hears it on its event stream); the move's notation."""
    row = board.storage.game(game)
    assert row is not None
    move = Position.from_fen(row.variant, row.fen).legal_moves()[0]
    board.say(user, f"/m {move}")
    return str(move)


def test_the_answer_to_a_move_arriving_after_the_streams_newer_state_does_not_replace_it(
        browser: Any, board: TelegramBoard,
) -> None:
    game = board.new_game(VARIANT)
    white = Board(browser, board.seat_url(game, "ana"))
    # The answer to Ana's move is held by the browser (the server has answered it) until the event
    # stream has brought Bob's reply too: then it is handed to the page, older than what it shows.
    held: list[tuple[Any, Any]] = []

    def hold(route: Any) -> None:
        held.append((route, route.fetch()))

    white.page.route(lambda url: urlparse(url).path.endswith("/move"), hold)
    tap_move(white, board, game, "ana")
    white.wait_ply(1)                                    # the stream: Ana's move
    assert len(held) == 1 and held[0][1].json()["state"]["ply"] == 1
    reply = type_move(board, game, "bob")
    white.wait_ply(2)                                    # the stream: Bob's reply
    route, response = held[0]
    with white.page.expect_event("requestfinished", lambda r: urlparse(r.url).path.endswith("/move")):
        route.fulfill(response=response)
    # The page has handled the late answer (it is no longer sending): it still shows Bob's reply.
    white.page.wait_for_function("s => document.querySelector('[data-role=message]').textContent !== s",
                                 arg=t("en", "web.sending"), timeout=WAIT_MS)
    assert white.data("ply") == "2" and white.data("turn") == "W"
    assert white.page.locator("[data-last-path]").get_attribute("data-last-path") == reply
    assert white.page.locator("[data-mine]").count() > 0          # Ana's turn, and she can tap
    assert white.message() == played(board, game, 2)
    white.close()


def test_a_level_1_bots_replies_all_show_without_a_reload_and_its_thinking_line_goes(
        browser: Any, board: TelegramBoard,
) -> None:
    board.say("ana", f"/play {VARIANT} 1 white")
    [row] = board.storage.active_games(PLATFORM, str(BOARD_GROUP["id"]))
    game = row.id
    white = Board(browser, board.seat_url(game, "ana"), width=390, height=844)
    start = board.service.web.state(game, None, "en")
    assert start is not None and start.players["B"]["bot"]
    thinking = t("en", "bot.thinking", bot=start.players["B"]["name"])
    shown = 0
    for reply_ply in range(2, 2 * BOT_REPLIES + 1, 2):
        if white.data("status") != "active":
            break
        tap_move(white, board, game, "ana")
        white.wait_ply(reply_ply)                         # the bot's reply, with no reload
        fresh = board.storage.game(game)
        assert fresh is not None and white.data("version") == str(fresh.version)
        # The line says what the bot did; its thinking is over.
        message_is(white, played(board, game, reply_ply))
        assert thinking not in white.message()
        shown += 1
    print(f"\nlevel-1 bot replies shown without a reload: {shown} of {shown}")
    assert shown >= 3
    white.close()


def test_the_draw_offer_goes_from_the_message_line_when_the_game_ends_by_resignation(
        browser: Any, board: TelegramBoard,
) -> None:
    game = board.new_game(VARIANT)
    white = Board(browser, board.seat_url(game, "ana"))
    white.page.locator("[data-action=draw]").tap()
    white.page.wait_for_function("s => !['', s].includes(document.querySelector('[data-role=message]').textContent)",
                                 arg=t("en", "web.sending"), timeout=WAIT_MS)
    row = board.storage.game(game)
    assert row is not None and row.draw_offer is not None
    assert "Ana" in white.message()                          # her offer, as the chat words it
    # Bob resigns from the chat (asked, then confirmed).
    board.say("bob", "/resign")
    board.say("bob", "/resign")
    white.page.wait_for_selector("main#app[data-status='finished']", state="attached")
    final = board.service.web.state(game, None, "en")
    assert final is not None and final.result is not None and final.result["reason"] == "resign"
    assert white.page.locator("[data-role=status]").inner_text() == final.status_text
    assert white.message() == ""
    white.close()


def test_the_players_own_move_line_does_not_repeat_the_status_and_goes_with_the_next_move(
        browser: Any, board: TelegramBoard,
) -> None:
    game = board.new_game(VARIANT)
    type_move(board, game, "ana")
    black = Board(browser, board.seat_url(game, "bob"))
    black.wait_ply(1)
    tap_move(black, board, game, "bob")
    black.wait_ply(2)
    # Bob's own move, said once: whose turn it is now is the status's to say.
    message_is(black, played(board, game, 2))
    status = black.page.locator("[data-role=status]").inner_text()
    assert status and status not in black.message()
    type_move(board, game, "ana")
    black.wait_ply(3)
    message_is(black, played(board, game, 3))
    black.close()


def test_a_page_load_has_no_console_errors_and_the_icon_is_served(browser: Any, board: TelegramBoard) -> None:
    game = board.new_game(VARIANT)
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    errors: list[str] = []
    failed: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(board.seat_url(game, "ana"))
    page.wait_for_selector("main#app[data-ready='1']")
    # Headless Chromium fetches no icon by itself; a browser with a tab strip asks for the page's
    # icon (its link, else /favicon.ico) on every load: asked here from the page the same way.
    status, kind, head = page.evaluate("""async () => {
        const link = document.querySelector("link[rel~=icon]");
        const r = await fetch(link ? link.href : "/favicon.ico");
        const bytes = new Uint8Array(await r.arrayBuffer());
        return [r.status, r.headers.get("content-type"), Array.from(bytes.slice(0, 4))];
    }""")
    page.wait_for_timeout(300)                              # anything the load asked for late
    assert errors == [] and failed == []
    assert status == 200 and kind.startswith("image/") and bytes(head) == b"\x00\x00\x01\x00"   # an ICO file
    assert page.locator("link[rel~=icon]").count() == 1
    context.close()
