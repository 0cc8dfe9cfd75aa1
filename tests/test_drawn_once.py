"""The suite's draw-once cache (tests/conftest.py) names the boards module by its path: if the module
moves, the cache would silently stop applying and the suite would slow down; this fails instead."""

from __future__ import annotations

import importlib


def test_the_draw_once_cache_finds_the_boards_module() -> None:
    boards = importlib.import_module("bot.service.chat.boards")
    assert callable(boards.render_png)
    assert "render_png(" in open(boards.__file__, encoding="utf-8").read(), "png() draws through render_png"
