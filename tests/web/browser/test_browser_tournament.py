"""A tournament's page in a real browser (the system's Chromium): the standings and the round's
pairings of a Swiss made and started through the real use case on the Telegram adapter's service
(the strict fake Bot API), read on a phone (390x844) and on a desktop; a game resigned in the
Telegram group shows on the open page by itself; every name is text (an attacker's name runs
nothing); the accessibility tree names the tables, their headers, the rows' players and the links
to the games."""

from __future__ import annotations

from typing import Any

from browser_harness import BOARD_GROUP, PLATFORM, WAIT_MS, TelegramBoard, require_browser
from telegram_fake_api import USERS

from bot.i18n import t
from bot.rules import Position
from bot.service.features.identity import Caller, Player, Where
from bot.service.features.results_tournaments import NewTournamentArgs, Started, TournamentCreated

require_browser()          # skip (or fail, in CI) before anything else

NO_TELEGRAM_REFUSALS = True
EVIL = '<img src=x onerror="window.__pwned=1">"\'&amp;'
GROUP = str(BOARD_GROUP["id"])


def caller(board: TelegramBoard, user: str, name: str | None = None) -> Caller:
    now = board.service.clock()
    chat = board.storage.players.ensure_chat(PLATFORM, GROUP, "group", now)
    person = USERS.get(user)
    user_id = str(person["id"]) if person else user
    return Caller(Player(PLATFORM, user_id, name or user.capitalize(), user, "en"), Where(PLATFORM, GROUP), now, now,
                  chat)


def started_swiss(board: TelegramBoard) -> int:
    """A 2-round Swiss of the group's three members (Eve under an attacker's name), started."""
    use = board.service.app.tournaments
    made = use.create(caller(board, "admin"), NewTournamentArgs("swiss", "italian", 2, name="Club <b>open</b>"), "en")
    assert isinstance(made, TournamentCreated), made
    for user, name in (("ana", "Ana"), ("bob", "Bob"), ("eve", EVIL)):
        use.join(caller(board, user, name))
    started = use.start(caller(board, "admin"))
    assert isinstance(started, Started), started
    return made.tournament.id


def open_page(browser: Any, url: str, width: int, height: int, locale: str = "en-US") -> tuple[Any, Any, list]:
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=width < 600,
                                  locale=locale)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    dialogs: list = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(url)
    page.wait_for_selector("main#app[data-ready='1']")
    return context, page, dialogs


def no_sideways_scroll(page: Any) -> None:
    """The page itself never scrolls sideways (a wide table scrolls within its own box)."""
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_standings_and_pairings_on_a_phone_and_a_result_arrives_by_itself(browser: Any, board: TelegramBoard) -> None:
    tid = started_swiss(board)
    url = board.url + board.service.web.tournament_path(tid)
    context, page, dialogs = open_page(browser, url, 390, 844)
    try:
        no_sideways_scroll(page)
        title = t("en", "webt.title", name="Club <b>open</b>", id=tid)
        assert page.title() == title
        assert page.get_by_role("heading", level=1).inner_text() == title
        # The attacker's name is text: no image, no script ran, the markup shown as written.
        assert page.locator("main img, main b").count() == 0 and dialogs == []
        assert page.evaluate("window.__pwned") is None
        rows = page.locator("[data-role=standings] tbody tr")
        assert rows.count() == 3
        names = page.locator("[data-role=standings] [data-role=name]").all_inner_texts()
        assert EVIL in [n.strip() for n in names]
        assert [c.get_attribute("data-tiebreak") for c in rows.first.locator("td[data-tiebreak]").all()] == \
            ["BH-C1", "BH", "SB", "DE", "WIN"]
        # Round 1: one game (its link opens the game's spectator page) and one bye.
        games = page.locator("[data-role=rounds] section[data-round='1'] a[data-game]")
        assert games.count() == 1
        game_id = int(games.first.get_attribute("data-game") or 0)
        assert games.first.get_attribute("href") == f"/g/{game_id}?t={board.service.web.watch_token(game_id)}"
        cell = page.locator(f"[data-role=rounds] tr:has(a[data-game='{game_id}']) [data-role=result]")
        assert cell.inner_text() == t("en", "webt.playing")
        # The running round's deadline (a week, the default), in the page's language.
        deadline = page.locator("[data-role=rounds] section[data-round='1'] [data-role=deadline]").inner_text()
        assert deadline.startswith(t("en", "webt.deadline") + " ") and len(deadline) > 12
        before = page.locator("main#app").get_attribute("data-version")

        # White moves, then resigns in the Telegram group (asked, then confirmed): the open page
        # shows it (resigning before one's first move would be a forfeit, -+).
        row = board.storage.games.get(game_id)
        assert row is not None
        white = next(name for name, u in USERS.items() if str(u["id"]) == row.white_id)
        board.say(white, f"/m {Position.from_fen(row.variant, row.fen).legal_moves()[0]}")
        board.say(white, "/resign")
        board.say(white, "/resign")
        page.wait_for_selector("main#app[data-rounds='2']", timeout=WAIT_MS)
        assert page.locator("main#app").get_attribute("data-version") != before
        done = page.locator(f"[data-role=rounds] section[data-round='1'] tr:has(a[data-game='{game_id}'])"
                            " [data-role=result]")
        assert done.inner_text() == "0-1" and done.get_attribute("data-result") == "0-1"
        assert page.locator("[data-role=counted]").inner_text() == t("en", "webt.standings.after", n=1)
        winner_row = page.locator("[data-role=standings] tbody tr", has_text=row.black_name)
        assert winner_row.locator("[data-role=points]").inner_text() == "1"
        no_sideways_scroll(page)

        # The game's link opens its spectator page.
        games.first.click()
        page.wait_for_selector("main#app[data-ready='1'][data-status='finished']")
        assert page.url.startswith(f"{board.url}/g/{game_id}?t=")
    finally:
        context.close()


def test_the_accessibility_tree_on_a_desktop_in_the_chats_language(browser: Any, board: TelegramBoard) -> None:
    tid = started_swiss(board)
    url = board.url + board.service.web.tournament_path(tid) + "&lang=es"
    context, page, _dialogs = open_page(browser, url, 1280, 800, locale="es-ES")
    try:
        no_sideways_scroll(page)
        assert page.locator("html").get_attribute("lang") == "es"
        standings = page.get_by_role("table", name=t("es", "webt.standings"))
        assert standings.count() == 1
        for header in (t("es", "webt.rank"), t("es", "webt.player"), t("es", "webt.points"), "BH-C1", "SB"):
            assert standings.get_by_role("columnheader", name=header, exact=True).count() == 1, header
        # Each player's row is named by the player (a row header), the attacker's name as text.
        assert standings.get_by_role("rowheader", name=EVIL).count() == 1
        assert page.get_by_role("heading", name=t("es", "webt.round", n=1)).count() == 1
        # A Swiss has no cross table.
        assert page.locator("[data-role=cross-section]").is_hidden()
        link = page.get_by_role("link", name=t("es", "webt.game") + " #")
        assert link.count() == 1
        assert page.get_by_role("status").inner_text() == t("es", "webt.status.running", round=1, total=2)
        tree = page.locator("main").aria_snapshot()
        assert "table" in tree and "columnheader" in tree and "rowheader" in tree and "link" in tree
        # The full name of a tie-break is there for whoever asks (abbr's title).
        assert page.locator("abbr[title]").first.get_attribute("title") == t("es", "webt.tb.bh_c1")
    finally:
        context.close()


def test_a_tournaments_number_alone_shows_nothing_in_the_browser(browser: Any, board: TelegramBoard) -> None:
    tid = started_swiss(board)
    context = browser.new_context()
    try:
        page = context.new_page()
        answer = page.goto(f"{board.url}/t/{tid}")
        assert answer is not None and answer.status == 403
        assert page.locator("body").inner_text().strip() == t("en", "webt.need_link")
        assert "Ana" not in page.content()
    finally:
        context.close()


def test_a_round_robins_cross_table(browser: Any, board: TelegramBoard) -> None:
    use = board.service.app.tournaments
    made = use.create(caller(board, "admin"), NewTournamentArgs("roundrobin", "spanish", None, name="Berger"), "it")
    assert isinstance(made, TournamentCreated), made
    for user in ("ana", "bob", "eve"):
        use.join(caller(board, user))
    assert isinstance(use.start(caller(board, "admin")), Started)
    url = board.url + board.service.web.tournament_path(made.tournament.id) + "&lang=it"
    context, page, _dialogs = open_page(browser, url, 390, 844, locale="it-IT")
    try:
        no_sideways_scroll(page)
        cross = page.get_by_role("table", name=t("it", "webt.cross"))
        assert cross.is_visible()
        assert cross.get_by_role("rowheader").count() == 3
        assert cross.locator("td.self").all_inner_texts() == ["×", "×", "×"]
    finally:
        context.close()
