"""Issue 28, item 9: the /stats chart gives every game its own place along the x axis (seven
games of one evening were drawn on one vertical line, 8 px of 640), with the date written where
it changes."""

from __future__ import annotations

import datetime as dt
import io

from PIL import Image

from renderers.charts import LINE_COLOURS, PAD, render_rating_chart

EVENING = dt.datetime(2026, 3, 2, 19, 0, tzinfo=dt.UTC).timestamp()
LEFT = 60          # the chart's left margin (value labels)


def _image(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def _series_columns(img: Image.Image, colour: tuple[int, int, int]) -> list[int]:
    """The x of every pixel of the series' colour above the legend."""
    data = img.load()
    w, h = img.size
    return sorted({x for x in range(w) for y in range(h - 30) if data[x, y] == colour})


def seven_games_one_evening() -> list[tuple[float, float]]:
    return [(EVENING + k * 25 * 60, 1500 + (30 if k % 2 else -30) + 5 * k) for k in range(7)]


def test_seven_games_of_one_evening_spread_across_the_width():
    img = _image(render_rating_chart([("Italian", seven_games_one_evening())], lambda d: d.isoformat()))
    xs = _series_columns(img, LINE_COLOURS[0])
    plot_w = img.width - LEFT - PAD
    assert xs[-1] - xs[0] >= 0.9 * plot_w, (xs[0], xs[-1])


def test_each_game_has_its_own_place_evenly_spaced():
    points = seven_games_one_evening()
    img = _image(render_rating_chart([("Italian", points)], lambda d: d.isoformat()))
    data = img.load()
    plot_w = img.width - LEFT - PAD
    for k in range(len(points)):
        x = round(LEFT + plot_w * k / (len(points) - 1))
        column = [data[xx, y] for xx in range(x - 2, x + 3) for y in range(img.height - 30)]
        # A marker (a disc 8 px across) sits on every place.
        assert column.count(LINE_COLOURS[0]) >= 20, k


def test_the_date_is_written_where_it_changes():
    asked: list[dt.date] = []

    def label(day: dt.date) -> str:
        asked.append(day)
        return day.isoformat()

    earlier = [(EVENING - 3 * 86400, 1480.0), (EVENING - 86400 - 3600, 1490.0), (EVENING - 86400, 1495.0)]
    render_rating_chart([("Italian", earlier + seven_games_one_evening())], label)
    assert asked == [dt.date(2026, 2, 27), dt.date(2026, 3, 1), dt.date(2026, 3, 2)]


def test_two_players_share_the_places_of_their_games():
    ana = [(EVENING + k * 600, 1500.0 + k) for k in range(0, 6, 2)]
    bob = [(EVENING + k * 600, 1450.0 - k) for k in range(1, 6, 2)]
    img = _image(render_rating_chart([("Ana", ana), ("Bob", bob)], lambda d: d.isoformat()))
    a, b = _series_columns(img, LINE_COLOURS[0]), _series_columns(img, LINE_COLOURS[1])
    # Six games, six places: Ana's first at the left edge, Bob's last at the right.
    assert a[0] < b[0] and a[-1] < b[-1]
    assert b[-1] - a[0] >= 0.9 * (img.width - LEFT - PAD)
