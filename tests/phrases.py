"""A catalog message as a pattern (a module of its own: ``from conftest import`` finds whichever
``conftest`` was imported first when several directories' tests are collected in one run)."""

from __future__ import annotations

import re


def phrase_pattern(template: str) -> re.Pattern[str]:
    """A catalog message with its {placeholders} as wildcards."""
    parts = re.split(r"\{[a-z_]+\}", template)
    return re.compile(".*?".join(re.escape(p) for p in parts), re.S)
