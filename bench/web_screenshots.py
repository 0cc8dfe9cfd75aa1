"""Screenshots of the web board for the README: an 8x8 game (Spanish) a few moves in, its last move
marked and a piece picked up with its destinations lit, and a 10x10 game (Triestina) at the
capture with two routes to one square, the page asking which; each at 360x740 (a phone, drawn at
twice the pixels, as a phone does) and 1280x800 (a laptop).

A real service on a throw-away SQLite file, the games made the way a chat makes them (``/new``,
``/accept``, ``/m`` through ``service.handle``), the board served by ``WebThread`` on a free port,
and the system's Chromium (``/usr/bin/chromium``) driven by Playwright, tapping as a player does.

Run from the repository root::

    python bench/web_screenshots.py                  # writes docs/screenshots/board-*.png
    python bench/web_screenshots.py --out /tmp/shots
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bot.platforms.web import WebConfig, WebThread  # noqa: E402
from bot.service import ChatEvent, GameService  # noqa: E402
from bot.storage import Storage  # noqa: E402

PLATFORM = "web-shots"
GROUP = "club"
# The first plies of the Triestina line the browser test plays (tests/web/browser/
# test_browser_game.py): White is then to capture from 28 to 8, by 19 or by 17.
TRIESTINA = "34-28 19-24 28x19 14x25 35-30 8-14 30x19x8 3x14 38-34 17-23 33-28 18-24".split()
SPANISH = "9-13 22-19 13-18 21x14 11x18 27-22 18x27 31x22".split()
SIZES = {"360": (360, 740, 2), "1280": (1280, 800, 1)}


def say(service: GameService, user: str, text: str, lang: str) -> None:
    service.handle(ChatEvent(platform=PLATFORM, chat_id=GROUP, user_id=user, user_name=user.capitalize(),
                             username=user, language=lang, text=text))


def game(service: GameService, variant: str, white: str, black: str, moves: list[str], lang: str) -> int:
    say(service, white, f"/new {variant} white", lang)
    say(service, black, "/accept", lang)
    [row] = [g for g in service.storage.active_games(PLATFORM, GROUP) if white in (g.white_id, g.black_id)]
    for ply, move in enumerate(moves):
        say(service, white if ply % 2 == 0 else black, f"/m {move}", lang)
    after = service.storage.game(row.id)
    assert after is not None and after.ply == len(moves), (variant, after)
    return row.id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        storage = Storage(Path(tmp) / "shots.db")
        service = GameService(storage, rng=random.Random(1))
        server = WebThread(service, WebConfig(host="127.0.0.1", port=0))
        url = server.start()
        try:
            spanish = game(service, "spanish", "ana", "bob", SPANISH, "es")
            triestina = game(service, "triestina", "carla", "dario", TRIESTINA, "it")
            shots = [("8x8", url + service.web.link_path(spanish, PLATFORM, "ana") + "&lang=es", [10], None),
                     ("10x10", url + service.web.link_path(triestina, PLATFORM, "carla") + "&lang=it", [28, 8],
                      "[data-role=paths] button[data-path-index]")]
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
                for name, link, taps, wait_for in shots:
                    for size, (width, height, scale) in SIZES.items():
                        context = browser.new_context(viewport={"width": width, "height": height},
                                                      device_scale_factor=scale, has_touch=True)
                        page = context.new_page()
                        page.goto(link)
                        page.wait_for_selector("main#app[data-ready='1']")
                        # A piece picked up: its destinations lit (on 10x10, the destination tapped
                        # too: two routes end there, and the page asks which).
                        page.locator(f"g[data-at='{taps[0]}']").tap()
                        for square in taps[1:]:
                            page.locator(f"circle[data-dest='{square}']").tap()
                        page.wait_for_selector(wait_for or "circle[data-dest]")
                        target = args.out / f"board-{name}-{size}.png"
                        page.screenshot(path=str(target))
                        print(f"{target.relative_to(REPO) if target.is_relative_to(REPO) else target}: "
                              f"{target.stat().st_size} bytes")
                        context.close()
                browser.close()
        finally:
            server.stop()
            service.close()
            storage.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
