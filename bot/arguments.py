"""Argument types shared by the command-line entry (``bot.cli``) and the commands it adds from
other modules (``bot.operator_cli``): kept below both, so neither imports the other back."""

from __future__ import annotations

import argparse
from collections.abc import Callable

# The largest id a stored row can have (SQLite's and PostgreSQL's 64-bit integers).
MAX_ID = 2**63 - 1


def whole_number(low: int, high: int, what: str = "a whole number") -> Callable[[str], int]:
    """An argument type: a whole number from ``low`` to ``high``."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {what} from {low} to {high}, got {text!r}")
        return value
    return parse
