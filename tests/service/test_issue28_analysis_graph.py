"""Issue 28, item 5 through the service: the analysis picture's evaluation graph numbers its
moves along the bottom, so a dip can be matched with a move of the report."""

from __future__ import annotations

import io

from PIL import Image

# The fixtures ``an`` and (autouse) ``small_budgets`` of test_service_analysis, used here too.
from test_service_analysis import SETTLE, finished_game, reports
from test_service_analysis import an as an
from test_service_analysis import small_budgets as small_budgets

from renderers.panels import INK, MOVE_BAND


def test_the_analysis_graph_has_move_numbers(an):
    game = finished_game(an)
    an.say("bob", "/analysis")
    assert an.service.settle(SETTLE)
    [report] = reports(an, game)
    img = Image.open(io.BytesIO(report.image)).convert("RGB")
    band = [(x, y) for y in range(img.height - 12 - MOVE_BAND + 1, img.height) for x in range(img.width)
            if all(abs(a - b) <= 60 for a, b in zip(img.getpixel((x, y)), INK, strict=True))]
    assert band, "no move numbers under the evaluation graph"
    # Four plies: moves 1 and 2 numbered, apart along the width.
    xs = sorted({x for x, _y in band})
    assert xs[-1] - xs[0] > img.width * 0.5
