"""The analysis picture: 10x10 boards large enough to read, the better move's number beside its
target square (not on it), and a graph of the evaluation after every ply."""

import io
import math

from PIL import Image

import renderers.board as B
from renderers.board import BoardView, square_box
from renderers.panels import EVAL_UP, grid_board_px, render_analysis

PNG = b"\x89PNG\r\n\x1a\n"


def numbering(size: int) -> dict[tuple[int, int], int]:
    squares = [(r, c) for r in range(size) for c in range(size) if (r + c) % 2 == 1]
    return {sq: i + 1 for i, sq in enumerate(squares)}


def step_view(size: int) -> BoardView:
    """A man about to step one square: the route of the better move is that one step."""
    start, end = (6, 3), (5, 4)
    return BoardView(size, {start: "w", (2, 1): "b"}, numbering(size), last_path=[(6, 3), (5, 2)],
                     routes=[[start, end]])


def test_ten_by_ten_boards_in_the_analysis_are_larger():
    assert grid_board_px(10) >= 450 and grid_board_px(8) >= 300
    views = [step_view(10)] * 2
    img = Image.open(io.BytesIO(render_analysis(views, ["a", "b"], [0, 50])))
    assert img.width >= 2 * grid_board_px(10)


def test_the_better_moves_number_does_not_cover_its_target_square():
    for size, px in ((10, 300), (10, grid_board_px(10)), (8, 300)):
        view = step_view(size)
        sq = px // size
        [spot] = B.route_label_spots(view, px)
        x0, y0, x1, y1 = square_box(size, 5, 4, px=px)
        r = B._badge_radius(sq)
        # The badge's disc misses the target square entirely (and the start square too).
        nearest = (min(max(spot[0], x0), x1), min(max(spot[1], y0), y1))
        assert math.dist(spot, nearest) >= r - 1, (size, px, spot)
        sx0, sy0, sx1, sy1 = square_box(size, 6, 3, px=px)
        assert not (sx0 < spot[0] < sx1 and sy0 < spot[1] < sy1)


def _graph_pixels(img: Image.Image) -> list[tuple[int, int]]:
    rgb = img.convert("RGB")
    return [(x, y) for y in range(rgb.height) for x in range(rgb.width)
            if sum(abs(a - b) for a, b in zip(rgb.getpixel((x, y)), EVAL_UP, strict=True)) < 30]


def test_the_analysis_picture_has_an_evaluation_graph_clamped_for_won_positions():
    evaluations = [0, 40, -30, 150, 99_990, 99_990]
    data = render_analysis([], [], evaluations, title="Analysis", graph_title="Evaluation")
    assert data.startswith(PNG)
    img = Image.open(io.BytesIO(data))
    points = _graph_pixels(img)
    assert points
    ys = [y for _x, y in points]
    # The won plies sit on the top edge, not off the picture; the line runs across the width.
    assert min(ys) > 0 and max(ys) < img.height - 1
    xs = [x for x, _y in points]
    assert max(xs) - min(xs) > img.width * 0.8
    # With boards, the graph goes below them.
    with_boards = Image.open(io.BytesIO(render_analysis([step_view(10)], ["x"], evaluations)))
    assert min(y for _x, y in _graph_pixels(with_boards)) > grid_board_px(10)
