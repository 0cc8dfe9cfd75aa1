"""Issue 16, item 8: the rating chart has dates, round ticks and a marker per game; the
leaderboard table keeps its headers off the edge."""

from __future__ import annotations

import datetime as dt
import io

from PIL import Image

from renderers import panels
from renderers.charts import LINE_COLOURS, PAD, day_ticks, render_rating_chart, render_table, value_ticks

T0 = 1_700_000_000.0


def _image(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def test_value_ticks_are_round():
    ticks = value_ticks(1459.3, 1607.8)
    step = ticks[1] - ticks[0]
    assert step in (10, 20, 25, 50, 100)
    assert all(t % step == 0 for t in ticks)
    assert ticks[0] <= 1459.3 and ticks[-1] >= 1607.8 and len(ticks) <= 7


def test_dates_are_asked_for_the_x_axis():
    asked: list[dt.date] = []

    def label(day: dt.date) -> str:
        asked.append(day)
        return day.isoformat()

    points = [(T0 + k * 86400 * 3, 1500 + 10 * k) for k in range(6)]
    render_rating_chart([("Italian", points)], label, title="Rating")
    assert asked[0] == dt.datetime.fromtimestamp(T0, dt.UTC).date()
    assert len(asked) >= 3 and asked == sorted(asked)


def _colour_pixels(img: Image.Image, colour: tuple[int, int, int]) -> list[tuple[int, int]]:
    w, h = img.size
    data = img.load()
    return [(x, y) for x in range(w) for y in range(h) if data[x, y] == colour]


def test_one_game_is_a_marker_not_a_bare_diagonal():
    img = _image(render_rating_chart([("Italian", [(T0, 1662.0)])], lambda d: "14 Nov"))
    dots = _colour_pixels(img, LINE_COLOURS[0])
    legend = [p for p in dots if p[1] > img.size[1] - 30]
    marker = [p for p in dots if p[1] <= img.size[1] - 30]
    assert legend and 20 <= len(marker) <= 80                    # a round dot, not a line
    xs = [x for x, _ in marker]
    assert max(xs) - min(xs) <= 10


def test_every_game_has_a_marker():
    points = [(T0 + k * 86400, 1500 + 40 * (-1) ** k) for k in range(5)]
    img = _image(render_rating_chart([("Italian", points)], lambda d: d.isoformat()))
    data = img.load()
    w, _h = img.size
    left, right = 60, w - PAD
    for k in range(5):
        t0, t1 = T0 - 0.0, T0 + 4 * 86400
        x = round(left + (right - left) * (k * 86400) / (t1 - t0))
        column = [data[xx, y] for xx in range(x - 2, x + 3) for y in range(img.size[1] - 30)]
        assert column.count(LINE_COLOURS[0]) >= 10, k


def _rightmost_ink(img: Image.Image, top: int, bottom: int) -> int:
    data = img.load()
    w, _ = img.size
    for x in range(w - 1, -1, -1):
        for y in range(top, bottom):
            if sum(abs(a - b) for a, b in zip(data[x, y], panels.BACKGROUND, strict=True)) > 60:
                return x
    return -1


def test_the_last_header_keeps_off_the_edge():
    header = ["giocatore", "punteggio", "partite giocate in classifica"]
    rows = [["1. Ana", "1662 ±120", "12"], ["2. Bob", "1500", "5"]]
    img = _image(render_table("Classifica di questa chat: dama italiana", header, rows))
    assert _rightmost_ink(img, 52, 80) <= img.size[0] - PAD


def test_the_old_table_let_a_long_header_touch_the_edge():
    # Why the table moved: the same table drawn the old way runs into (or past) the margin.
    header = ["giocatore", "punteggio", "partite giocate in classifica"]
    rows = [["1. Ana", "1662 ±120", "12"]]
    img = _image(panels.render_table("Classifica", header, rows))
    assert _rightmost_ink(img, 52, 80) > img.size[0] - PAD


def test_day_ticks_are_whole_days_in_order():
    days = day_ticks(T0, T0 + 30 * 86400)
    assert 2 <= len(days) <= 5 and days == sorted(days)
