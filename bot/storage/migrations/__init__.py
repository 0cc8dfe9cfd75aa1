"""Schema migrations as numbered SQL files, one folder per dialect (``sqlite/0001_initial.sql``, ...).

A file is applied once, in number order, inside the transaction that opens the database; the
number of the last one applied is recorded in the database (table ``schema_version``).  Add a new
file with the next number; never edit one that has shipped (databases out there have run it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    """One numbered file: its number, its name and its statements in order."""

    number: int
    name: str
    statements: tuple[str, ...]


def split_statements(text: str) -> tuple[str, ...]:
    """The statements of a file: ``--`` comment lines dropped, each statement ending with ';' at the
    end of a line (no statement of ours has a ';' inside a string)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    parts = re.split(r";[ \t]*(?:\n|$)", "\n".join(lines))
    return tuple(part.strip() for part in parts if part.strip())


@cache
def migrations(dialect: str) -> tuple[Migration, ...]:
    """Every migration of a dialect, by number; ValueError when the numbers have a gap or a repeat
    (a file added in the wrong place must not be skipped silently)."""
    folder = resources.files(__package__).joinpath(dialect)
    found = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), split_statements(entry.read_text("utf-8"))))
    found.sort(key=lambda m: m.number)
    numbers = [m.number for m in found]
    if numbers != list(range(1, len(found) + 1)):
        raise ValueError(f"{dialect} migrations are not numbered 1..{len(found)}: {numbers}")
    return tuple(found)
