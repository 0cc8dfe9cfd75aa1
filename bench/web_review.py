"""The web board's page with the move list and stepping (issue 34) against the page before it: the
page's weight (HTML + board.js + board.css, and the new page's analysis.js and a11y.js; raw and
gzip-compressed) and the time to the first drawn board (Chromium: from navigation start to the board
drawn, ``main#app[data-ready='1']``), and for the new page the time until its move list is filled too.

Both pages are served by one server in the same run: the new one as the server sends it, the old one
(its page.html, board.js and board.css as ``git show <base>:...`` gives them, by default the newest
commit whose page.html has no move list) put in its place by the browser (Playwright's routing: the
old template filled with the same boot data the server put in the new one; the new page is routed
the same way, so both loads pay the same for it).  A real service on a
throw-away SQLite file, a 40-ply Italian game played through ``service.handle``, the system's
Chromium; each load in a fresh browser context (nothing cached), old and new alternating.

Run from the repository root::

    python bench/web_review.py                 # 15 loads of each
    python bench/web_review.py --loads 5 --base <commit>
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bot.platforms.web import WebConfig, WebThread  # noqa: E402
from bot.rules import Position  # noqa: E402
from bot.service import ChatEvent, GameService  # noqa: E402
from bot.storage import Storage  # noqa: E402

PLATFORM = "bench"
GROUP = "club"
STATIC = "bot/platforms/web/static"
EXTRA_SCRIPTS = ("analysis.js", "a11y.js")
PLIES = 40
# When the page first says it is drawn (a MutationObserver added by the browser, not by the page),
# and when its move list holds every ply (the new page only).
TIMING = """
window.__drawn = null; window.__listed = null;
document.addEventListener("DOMContentLoaded", function () {
  var app = document.getElementById("app");
  function seen() {
    if (window.__drawn === null && app.dataset.ready === "1") window.__drawn = performance.now();
    if (window.__listed === null && app.querySelectorAll("[data-role=moves] > li").length >= PLIES_HERE)
      window.__listed = performance.now();
  }
  new MutationObserver(seen).observe(app, { attributes: true, childList: true, subtree: true });
});
""".replace("PLIES_HERE", str(PLIES))


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True).stdout


def old_base() -> str:
    """The newest commit whose page.html has no move list: the page before issue 34."""
    for commit in git("log", "--format=%H", "--", f"{STATIC}/page.html").split():
        if 'data-role="moves"' not in git("show", f"{commit}:{STATIC}/page.html"):
            return commit
    raise SystemExit("no commit with the page before the move list")


def say(service: GameService, user: str, text: str) -> None:
    service.handle(ChatEvent(platform=PLATFORM, chat_id=GROUP, user_id=user, user_name=user.capitalize(),
                             username=user, language="en", text=text))


def played_game(service: GameService) -> int:
    say(service, "ana", "/new italian white")
    say(service, "bob", "/accept")
    [row] = service.storage.active_games(PLATFORM, GROUP)
    pos = Position.start("italian")
    for i in range(PLIES):
        legal = sorted(pos.legal_moves(), key=str)
        move = legal[(i * 7) % len(legal)]
        say(service, "ana" if i % 2 == 0 else "bob", f"/m {move}")
        pos = pos.play(move)
    after = service.storage.game(row.id)
    assert after is not None and after.ply == PLIES, after
    return row.id


def weight(page: str, *assets: str) -> tuple[int, int]:
    parts = [page.encode(), *(asset.encode() for asset in assets)]
    return sum(len(p) for p in parts), sum(len(gzip.compress(p, 9)) for p in parts)


def fill(template: str, served: str) -> str:
    """``template`` (a page.html) filled as the server filled ``served``: its language, title and boot data."""
    boot = re.search(r'data-boot="([^"]*)"', served)
    title = re.search(r"<title>([^<]*)</title>", served)
    lang = re.search(r'<html lang="([^"]*)"', served)
    assert boot and title and lang, served[:200]
    return template.replace("{{lang}}", lang[1]).replace("{{title}}", title[1]).replace("{{boot}}", boot[1])


def load(browser: Any, url: str, assets: dict[str, str], listed: bool) -> tuple[float, float | None]:
    """One load in a fresh context: ms from navigation start to the board drawn (and to the list
    filled).  The old page and the new alike go through the browser's routing (the same cost for
    both): the server's page for this game, its boot data moved into ``assets``' template, and
    ``assets``' script and style."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.add_init_script(TIMING)

    def page_route(route: Any) -> None:
        route.fulfill(status=200, body=fill(assets["page.html"], route.fetch().text()), content_type="text/html")
    context.route("**/g/*", page_route)
    context.route("**/static/board.js", lambda r: r.fulfill(body=assets["board.js"], content_type="text/javascript"))
    context.route("**/static/board.css", lambda r: r.fulfill(body=assets["board.css"], content_type="text/css"))
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("main#app[data-ready='1']")
    if listed:
        page.wait_for_function("window.__listed !== null")
    drawn = float(page.evaluate("window.__drawn"))
    listed = page.evaluate("window.__listed")
    context.close()
    return drawn, (float(listed) if listed is not None else None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=15)
    parser.add_argument("--base", help="the commit of the old page (default: the newest without a move list)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    base = args.base or old_base()
    old = {name: git("show", f"{base}:{STATIC}/{name}") for name in ("page.html", "board.js", "board.css")}
    new = {name: (REPO / STATIC / name).read_text(encoding="utf-8") for name in old}
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        storage = Storage(Path(tmp) / "review.db")
        service = GameService(storage, rng=random.Random(1))
        server = WebThread(service, WebConfig(host="127.0.0.1", port=0))
        url = server.start()
        try:
            game = played_game(service)
            link = url + service.web.link_path(game, PLATFORM, None)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
                with urllib.request.urlopen(link) as answer:
                    new_page = answer.read().decode("utf-8")
                old_page = fill(old["page.html"], new_page)
                times: dict[str, list[float]] = {"old": [], "new": []}
                listed: list[float] = []
                load(browser, link, new, True)             # warm the server and the browser once
                for _ in range(args.loads):
                    for which in ("old", "new"):
                        drawn, filled = load(browser, link, old if which == "old" else new, which == "new")
                        times[which].append(drawn)
                        if filled is not None:
                            listed.append(filled)
                browser.close()
        finally:
            server.stop()
            service.close()
            storage.close()

    raw_old, gz_old = weight(old_page, old["board.js"], old["board.css"])
    # The new page also loads the analysis view and the screen-reader module (issue 34): counted too.
    extra = [(REPO / STATIC / name).read_text(encoding="utf-8") for name in EXTRA_SCRIPTS]
    raw_new, gz_new = weight(new_page, new["board.js"], new["board.css"], *extra)
    print(f"old page: {base[:10]}; {PLIES}-ply game; {args.loads} loads of each, fresh contexts, 390x844")
    print(f"weight (HTML+JS+CSS)  old {raw_old} B ({gz_old} B gzip)  new {raw_new} B ({gz_new} B gzip)  "
          f"ratio {raw_new / raw_old:.2f} ({gz_new / gz_old:.2f} gzip)")
    med_old, med_new = statistics.median(times["old"]), statistics.median(times["new"])
    print(f"first drawn board, ms from navigation start (median; min-max)  old {med_old:.0f} "
          f"({min(times['old']):.0f}-{max(times['old']):.0f})  new {med_new:.0f} "
          f"({min(times['new']):.0f}-{max(times['new']):.0f})  ratio {med_new / med_old:.2f}")
    if listed:
        print(f"new page's move list filled ({PLIES} items), ms from navigation start (median): "
              f"{statistics.median(listed):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
