"""Issue 28, item 5 through the service: the analysis picture's evaluation graph numbers its
moves along the bottom, so a dip can be matched with a move of the report."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from test_service_analysis import SETTLE, TEST_NODES, finished_game, reports

from bot.service.features import analysis as analysis_feature
from bot.service.thinking import Thinker
from renderers.panels import INK, MOVE_BAND


@pytest.fixture(autouse=True)
def small_budgets(monkeypatch):
    monkeypatch.setattr(analysis_feature, "ANALYSIS_NODES", TEST_NODES)


@pytest.fixture
def an(chat, pool):
    chat.use_thinker(Thinker(pool))
    yield chat
    assert chat.service.settle(SETTLE)


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
