"""The puzzle bank that ships with the package: one JSON-lines file per variant."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from bot.rules import Position

from .prove import THEMES, centi_balance, leaf_won, verify

BANK_DIR = Path(__file__).parent / "bank"
EXPORT_KEYS = ("id", "variant", "fen", "solution", "tags", "rating")
__all__ = ["BANK_DIR", "EXPORT_KEYS", "THEMES", "add", "bank_file", "by_id", "check_line", "export_line", "load",
           "reprove", "rewrite", "save", "theme_counts", "with_theme"]


def bank_file(variant: str) -> Path:
    """Where a variant's puzzles are kept."""
    return BANK_DIR / f"{variant}.jsonl"


@cache
def _load(variant: str) -> tuple[dict[str, Any], ...]:
    path = bank_file(variant)
    if not path.exists():
        return ()
    return tuple(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def load(variant: str) -> list[dict[str, Any]]:
    """The variant's puzzles, in the bank's order (by id: a stable mix of difficulties)."""
    return list(_load(variant))


@cache
def _index(variant: str) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in _load(variant)}


def by_id(variant: str, puzzle_id: str) -> dict[str, Any] | None:
    """One puzzle of the variant's bank, or None when the bank has no such id."""
    return _index(variant).get(puzzle_id)


def with_theme(variant: str, theme: str) -> list[dict[str, Any]]:
    """The variant's puzzles whose line shows ``theme`` (one of ``THEMES``), in the bank's order;
    an unknown theme has none."""
    return [p for p in _load(variant) if theme in p.get("tags", {}).get("themes", ())]


def theme_counts(variant: str) -> dict[str, int]:
    """How many of the variant's puzzles show each theme, every one of ``THEMES`` in its order
    (a theme no puzzle shows counts 0)."""
    counts = dict.fromkeys(THEMES, 0)
    for puzzle in _load(variant):
        for theme in puzzle.get("tags", {}).get("themes", ()):
            if theme in counts:
                counts[theme] += 1
    return counts


def save(variant: str, puzzles: list[dict[str, Any]]) -> None:
    """Write the variant's bank, sorted by id, one puzzle a line."""
    BANK_DIR.mkdir(parents=True, exist_ok=True)
    ordered = sorted(puzzles, key=lambda p: p["id"])
    text = "".join(json.dumps(p, ensure_ascii=False, separators=(",", ":")) + "\n" for p in ordered)
    bank_file(variant).write_text(text, encoding="utf-8")
    _load.cache_clear()
    _index.cache_clear()


def add(variant: str, puzzle: dict[str, Any]) -> None:
    """Add one puzzle to the variant's bank file as it is now (other generators may be adding to
    it too: the file is locked, read again and written whole)."""
    BANK_DIR.mkdir(parents=True, exist_ok=True)
    with open(BANK_DIR / f".{variant}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _load.cache_clear()
        current = [p for p in _load(variant) if p["id"] != puzzle["id"]]
        save(variant, [*current, puzzle])


def rewrite(variant: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> tuple[int, int]:
    """Apply ``change`` to every puzzle of the variant's bank, under the lock ``add`` takes (a
    generator may be adding), and save it when anything changed: (puzzles changed, puzzles)."""
    BANK_DIR.mkdir(parents=True, exist_ok=True)
    with open(BANK_DIR / f".{variant}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _load.cache_clear()
        puzzles = _load(variant)
        changed = [change(p) for p in puzzles]
        count = sum(1 for old, new in zip(puzzles, changed, strict=True) if old != new)
        if count:
            save(variant, changed)
        return count, len(puzzles)


def export_line(puzzle: dict[str, Any]) -> str:
    """One puzzle as the JSON line of ``python -m bot puzzles export``."""
    return json.dumps({k: puzzle[k] for k in EXPORT_KEYS}, ensure_ascii=False)


def check_line(puzzle: dict[str, Any]) -> str | None:
    """Why the puzzle's main line is wrong (illegal, or not reaching the result), or None."""
    pos = Position.from_fen(puzzle["variant"], puzzle["fen"])
    solver = pos.turn
    base = centi_balance(pos, solver)
    line = puzzle["solution"]
    if len(line) % 2 == 0:
        return "the main line does not end on a move of the solver"
    for text in line:
        try:
            pos = pos.play(pos.parse_move(text))
        except Exception as err:      # IllegalMove or a malformed move text
            return f"{text}: {err}"
    if leaf_won(pos, solver, base):
        return None
    return "the main line ends without the result"


def reprove(puzzle: dict[str, Any]) -> str | None:
    """Why the puzzle falls short of the bank's standard (``prove.verify``), or None."""
    problems = verify(puzzle)
    return "; ".join(problems) if problems else None
