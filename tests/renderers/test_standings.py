"""Issue 32: the standings picture (rank, name, points, tie-breaks; a cross table for a round
robin) is legible on a phone, draws every name, and survives long, right-to-left and emoji names."""

from __future__ import annotations

import io

from PIL import Image, ImageChops

from renderers import StandingRow, StandingsView, render_standings
from renderers.board import _font
from renderers.standings import NAME_MAX_PX, fit_name, points_text


def _image(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def _view(names: list[str], cross: bool = False, tiebreaks: tuple[str, ...] = ("BH-C1", "BH", "SB"),
          title: str = "Swiss 1") -> StandingsView:
    n = len(names)
    rows = tuple(
        StandingRow(rank=i + 1, name=name, points=n - i - 0.5,
                    tiebreaks=tuple(float(k) + 0.5 for k in range(len(tiebreaks))), withdrawn=i == 2,
                    cross=tuple("" if j == i else ("1" if j > i else "0") for j in range(n)) if cross else ())
        for i, name in enumerate(names))
    return StandingsView(title, "#", "Player", "Pts", tiebreaks, rows, subtitle="Round 3 of 5")


def test_a_png_sized_for_a_phone():
    img = _image(render_standings(_view(["Ana", "Luca", "Marta", "Piero"])))
    # Telegram shows about 512 px: a Swiss's table is not much wider, so its text stays legible.
    assert 360 <= img.width <= 640
    assert img.height > 4 * 30


def test_every_name_is_drawn():
    base = _image(render_standings(_view(["Ana", "Luca", "Marta", "Piero"])))
    other = _image(render_standings(_view(["Ana", "Luca", "Marta", "Pietro"])))
    assert base.size == other.size
    box = ImageChops.difference(base, other).getbbox()
    # Only the fourth row differs, and only where the name is written.
    assert box is not None
    assert box[1] > base.height * 0.6 and box[0] < base.width // 2


def test_sixteen_players_with_a_cross_table():
    names = [f"Player number {k}" for k in range(16)]
    plain = _image(render_standings(_view(names, tiebreaks=("DE", "WIN", "SB"))))
    crossed = _image(render_standings(_view(names, cross=True, tiebreaks=("DE", "WIN", "SB"))))
    assert crossed.width > plain.width + 16 * 25          # one column per player
    assert crossed.height == plain.height
    assert crossed.width <= 1100                          # still readable once a phone scales it


def test_sixteen_columns_of_tiebreaks_do_not_break_it():
    many = tuple(f"T{k}" for k in range(16))
    img = _image(render_standings(_view([f"P{k}" for k in range(16)], cross=True, tiebreaks=many)))
    assert img.width > 1000


def test_long_names_are_cut_with_an_ellipsis():
    font = _font(18)
    long = "Luca Bianchi-Verdi di Montefeltro e Urbino e Casteldurante"
    cut = fit_name(long, font, NAME_MAX_PX)
    assert cut.endswith("…") and long.startswith(cut[:-1])
    short = _image(render_standings(_view(["Ana", "Luca", "Marta"])))
    wide = _image(render_standings(_view(["Ana", long * 5, "Marta"])))
    assert wide.width - short.width <= NAME_MAX_PX


def test_right_to_left_emoji_and_control_characters():
    font = _font(18)
    # A bidi override would reverse the rest of the row; a control character is no letter.
    assert "\u202e" not in fit_name("\u202eevil", font, NAME_MAX_PX)
    assert fit_name("a\nb\tc", font, NAME_MAX_PX) == "a b c"
    # Emoji the font lacks are left out rather than drawn as boxes; a name of only those keeps them.
    assert fit_name("👨\u200d👩\u200d👧 Family", font, NAME_MAX_PX) == "Family"
    assert fit_name("李小龍", font, NAME_MAX_PX) == "李小龍"
    # A cut never leaves an accent without its letter.
    cut = fit_name("e\u0301" * 80, font, 60)
    assert cut.endswith("…") and len(cut[:-1]) % 2 == 0 and cut[:-1] == "e\u0301" * (len(cut[:-1]) // 2)
    names = ["محمد عبد الله", "👨‍👩‍👧‍👦 Family", "Zoë", "李小龍", "\u202eevil", "x" * 300]
    img = _image(render_standings(_view(names, cross=True)))
    assert img.width > 0


def test_points_are_written_with_halves():
    assert [points_text(v) for v in (0, 0.5, 1, 2.5, 10)] == ["0", "½", "1", "2½", "10"]


def test_equal_views_are_drawn_once():
    view = _view(["Ana", "Luca", "Marta"])
    assert render_standings(view) is render_standings(view)
