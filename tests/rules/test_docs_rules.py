"""docs/rules.md section 1 agrees with the engine: the numbering diagrams and the table."""

import re
from pathlib import Path

import pytest

from bot.rules import Position, get_variant

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def _section_1() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text[text.index("## 1."):text.index("## 2.")]


def _diagrams() -> dict[str, list[list[str]]]:
    """Each diagram's rows of tokens; the two 8x8 boards are drawn side by side."""
    block = re.search(r"```\n(.*?)```", _section_1(), re.S).group(1)
    boards: dict[str, list[list[str]]] = {}
    names: list[str] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        if re.match(r"\s*[a-z]+ \d+x\d+", line):
            names = re.findall(r"([a-z]+) \d+x\d+", line)
            for name in names:
                boards[name] = []
            continue
        tokens = line.split()
        per_board = len(tokens) // len(names)
        for i, name in enumerate(names):
            boards[name].append(tokens[i * per_board:(i + 1) * per_board])
    return boards


@pytest.mark.parametrize("variant", ["spanish", "italian", "triestina"])
def test_numbering_diagram_is_the_engines(variant):
    v = get_variant(variant)
    rows = _diagrams()[variant]
    assert len(rows) == v.size
    for r, row in enumerate(rows):
        assert len(row) == v.size
        for c, token in enumerate(row):
            square = v.rc_to_square(r, c)
            assert token == ("." if square is None else str(square)), (variant, r, c)


def _table() -> dict[str, list[str]]:
    rows = {}
    for line in _section_1().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0]:
            rows[cells[0]] = cells[1:]
    return rows


def _span(text: str) -> list[int]:
    lo, hi = (int(x) for x in text.split("–"))
    return list(range(lo, hi + 1))


@pytest.mark.parametrize("column,variant", list(enumerate(["spanish", "italian", "triestina"])))
def test_start_and_promotion_rows_in_the_table_are_the_engines(column, variant):
    v = get_variant(variant)
    table = _table()
    pieces = Position.start(v).pieces()
    assert sorted(sq for sq, p in pieces.items() if p == "b") == _span(table["Black starts on"][column])
    assert sorted(sq for sq, p in pieces.items() if p == "w") == _span(table["White starts on"][column])
    assert v.mask_to_squares(v.white_promo) == _span(table["White promotes on"][column])
    assert v.mask_to_squares(v.black_promo) == _span(table["Black promotes on"][column])
    assert table["men per side"][column] == str(len(_span(table["White starts on"][column])))
