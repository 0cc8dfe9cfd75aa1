"""Service benchmark: a move through the service against the render alone, and a board
render against Pillow's own PNG encode of an image of the same size.

The encode baseline is measured twice: the full-colour RGB image, and the same
image reduced to the 128-colour palette our PNGs use (a palette PNG encodes
about four times faster, so that ratio is the strict one and decides MET).

Run from the repository root::

    python bench/service.py            # about 20 s
    python bench/service.py --moves 40

Targets (issue 3): a move through the service (parse, rules, transaction,
render) at most 2x the render alone; a board render at most 3x what Pillow
takes to encode a PNG of the same size.  All figures come from one run on
the same positions, so the ratios hold on a noisy machine where the absolute
times do not.
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.rules import Game, Position  # noqa: E402
from bot.service import ChatEvent, GameService  # noqa: E402
from bot.service.chat import boards  # noqa: E402
from bot.storage import SQLiteStore as Storage  # noqa: E402
from renderers import render_image, render_png  # noqa: E402
from renderers.board import _to_palette  # noqa: E402

PLAYERS = ("ana", "luca")


def scripted_game(variant: str, plies: int, seed: int) -> list[str]:
    """A reproducible sequence of legal moves (random but fixed by the seed)."""
    rng = random.Random(seed)
    game = Game(variant)
    out = []
    while len(out) < plies and game.result is None:
        move = rng.choice(game.position.legal_moves())
        game.play(move)
        out.append(str(move))
    return out


def event(user: str, text: str) -> ChatEvent:
    return ChatEvent(platform="bench", chat_id="room", user_id=user, user_name=user.title(), username=user,
                     language="en", text=text)


def measure_service(variant: str, moves: list[str], rounds: int) -> tuple[list[float], ...]:
    """Per move: service time; render-alone time; PNG-encode time of the same board as RGB and
    as the palette image we actually send."""
    service_t, render_t, encode_t, palette_t = [], [], [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            storage = Storage(Path(tmp) / "bench.db")
            service = GameService(storage, rng=random.Random(0))
            service.handle(event("ana", f"/new {variant} white"))
            service.handle(event("luca", "/accept"))
            game_id = storage.active_games("bench", "room")[0].id
            for i, text in enumerate(moves):
                started = time.perf_counter()
                replies = service.handle(event(PLAYERS[i % 2], f"/m {text}"))
                service_t.append(time.perf_counter() - started)
                if not replies or replies[0].image is None:
                    raise SystemExit(f"move {text} was not played: {replies[0].text if replies else 'no reply'}")
                row = storage.game(game_id)
                pos = Position.from_fen(variant, row.fen)
                last = [int(s) for s in text.replace("x", "-").split("-")]
                view = boards.board_view(pos, last)
                # Drawn afresh: boards.png would find the picture the service just drew in its cache.
                started = time.perf_counter()
                render_png(view, boards.BOARD_PX)
                render_t.append(time.perf_counter() - started)
                image = render_image(view, boards.BOARD_PX)
                started = time.perf_counter()
                image.save(io.BytesIO(), format="PNG")
                encode_t.append(time.perf_counter() - started)
                palette = _to_palette(image)
                started = time.perf_counter()
                palette.save(io.BytesIO(), format="PNG")
                palette_t.append(time.perf_counter() - started)
            storage.close()
    return service_t, render_t, encode_t, palette_t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=30, help="plies per game")
    parser.add_argument("--rounds", type=int, default=3, help="games per variant")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {args.rounds} rounds x {args.moves} moves per variant\n")
    worst_move = worst_render = 0.0
    for variant in ("italian", "spanish", "triestina"):
        moves = scripted_game(variant, args.moves, seed=7)
        # Warm-up: fonts, sprites and caches are built once per process.
        measure_service(variant, moves[:4], 1)
        service_t, render_t, encode_t, palette_t = measure_service(variant, moves, args.rounds)
        sv, r, e, p = (statistics.median(x) * 1000 for x in (service_t, render_t, encode_t, palette_t))
        move_ratio, render_ratio = sv / r, r / p
        worst_move = max(worst_move, move_ratio)
        worst_render = max(worst_render, render_ratio)
        print(f"{variant:9}  move via service {sv:6.2f} ms   render alone {r:6.2f} ms   "
              f"PNG encode: palette {p:5.2f} ms, RGB {e:5.2f} ms")
        print(f"{'':9}  move/render {move_ratio:.2f}x (target <= 2x)   render/palette encode {render_ratio:.2f}x, "
              f"render/RGB encode {r / e:.2f}x (target <= 3x)")
    print()
    print(f"summary: move via service / render alone = {worst_move:.2f}x (worst variant, target <= 2x) "
          f"{'MET' if worst_move <= 2 else 'MISSED'}")
    print(f"summary: render / PNG encode of the same palette image = {worst_render:.2f}x (worst variant, "
          "target <= 3x) "
          f"{'MET' if worst_render <= 3 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
