"""The themes a puzzle's line shows, its starting rating, ``puzzles retag`` and the bank's theme
queries (issue 33): every theme is read from the line alone, so the bank can be retagged whenever
the definitions change, and the chat's ``/puzzle themes`` reads ``bank.THEMES`` and the counts."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bot.i18n import LANGUAGES, catalog
from bot.puzzles import bank, cli, generate
from bot.puzzles.prove import THEMES, centi_balance, line_tags, phase
from bot.rules import Position

VARIANTS = ("spanish", "italian", "triestina")
PHASES = ("opening", "middlegame", "endgame")


def _fen(white: list[str], black: list[str]) -> str:
    return f"W:W{','.join(white)}:B{','.join(black)}"


def _squares(pos: Position, code: str) -> list[str]:
    return [str(sq) for sq, piece in sorted(pos.pieces().items()) if piece == code]


def test_themes_are_the_issue_s_fourteen_or_more_with_the_old_names_kept():
    assert len(THEMES) >= 14 and len(set(THEMES)) == len(THEMES)
    assert bank.THEMES == THEMES
    for old in ("sacrifice", "shot", "promotion", "king_capture", "quiet_move", "blockade", "endgame"):
        assert old in THEMES
    assert THEMES[:3] == PHASES


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_theme_has_its_name_in_every_catalog(lang):
    words = catalog(lang)
    names = [words.get(f"puzzle.theme.{theme}") for theme in THEMES]
    assert all(isinstance(name, str) and name.strip() for name in names)
    assert len(set(names)) == len(names), "two themes read the same"


@pytest.mark.parametrize("variant, men, phase_name", [
    # 8x8 boards start with 24 pieces: 10 or fewer is the endgame, 18 or more men the opening.
    ("italian", 10, "endgame"), ("italian", 11, "middlegame"), ("italian", 17, "middlegame"),
    ("italian", 18, "opening"), ("spanish", 10, "endgame"), ("spanish", 18, "opening"),
    # Triestina's 10x10 board starts with 40: the same shares are 16 and 30.
    ("triestina", 16, "endgame"), ("triestina", 17, "middlegame"), ("triestina", 29, "middlegame"),
    ("triestina", 30, "opening"),
])
def test_the_phase_is_read_from_the_material_against_the_variant_s_start(variant, men, phase_name):
    start = Position.start(variant)
    white = _squares(start, "w")[: (men + 1) // 2]
    black = _squares(start, "b")[: men // 2]
    assert phase(Position.from_fen(variant, _fen(white, black))) == phase_name


def test_a_king_on_a_full_board_is_no_opening_any_more():
    start = Position.start("italian")
    white, black = _squares(start, "w"), _squares(start, "b")
    full = Position.from_fen("italian", _fen(white, black))
    assert phase(full) == "opening"
    crowned = Position.from_fen("italian", _fen(white[:-1] + ["K" + white[-1]], black))
    assert phase(crowned) == "middlegame"


# Puzzles of the shipped bank, each theme checked by hand against the board:
KNOWN = [
    # Black gives the man on 27 (king) with 27-22; 19x26 is forced and 30x21x14 takes two kings.
    ("italian", "B:WK18,K19,32:B16,K27,K30", ["27-22", "19x26", "30x21x14"],
     ["endgame", "sacrifice", "shot", "king_capture", "king_play", "short"]),
    # Two separate captures by White (15x8, then 16x7), a quiet key, four men each.
    ("italian", "W:W15,16,22,23:B5,7,8,10", ["23-19", "8-12", "15x8", "7-12", "16x7"],
     ["endgame", "double_capture", "quiet_move"]),
    # Black, a man behind (10 v 11), gives a man, crowns on 31 in a shot, and the new king takes
    # again: four solver moves.
    ("italian", "B:W13,18,20,22,23,25,27,28,29,30,32:B1,2,4,5,6,7,9,11,12,16",
     ["11-14", "18x11", "6x15x24x31", "30-26", "9x18", "22x13", "31x22"],
     ["opening", "sacrifice", "shot", "double_capture", "promotion", "breakthrough", "long_combination",
      "defence", "king_play"]),
    # King against king: 26-22 leaves 30-27 only, and 22x31 leaves Black with nothing: a capture,
    # not a lock.
    ("italian", "W:WK26:BK30", ["26-22", "30-27", "22x31"],
     ["endgame", "king_capture", "quiet_move", "king_play", "short"]),
    # 13-10 forces 2-6, 10x3 takes the king and crowns: White's man on 8 is left with both its
    # squares (3, 4) held by kings it may not take (Italian men never take kings): locked.
    ("italian", "B:WK2,8:B4,K13", ["13-10", "2-6", "10x3"],
     ["endgame", "king_capture", "quiet_move", "blockade", "king_play", "short"]),
]


@pytest.mark.parametrize("variant, fen, line, themes", KNOWN)
def test_known_lines_show_the_themes_a_player_sees_in_them(variant, fen, line, themes):
    assert line_tags(variant, fen, line)["themes"] == themes


def _replayed(p: dict[str, Any]) -> tuple[list[Position], list[Any]]:
    pos = Position.from_fen(p["variant"], p["fen"])
    positions, moves = [pos], []
    for text in p["solution"]:
        move = pos.parse_move(text)
        pos = pos.play(move)
        positions.append(pos)
        moves.append(move)
    return positions, moves


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_theme_of_the_bank_holds_as_its_definition_says(variant):
    """Each definition checked over the whole shipped bank, written here without line_tags."""
    for p in bank.load(variant):
        themes = p["tags"]["themes"]
        assert themes == [t for t in THEMES if t in themes], p["id"]       # known names, in order
        assert len([t for t in themes if t in PHASES]) == 1, p["id"]       # exactly one phase
        positions, moves = _replayed(p)
        solver = positions[0].turn
        mine = range(0, len(moves), 2)
        facts = {
            "short": p["tags"]["moves"] == 2,
            "long_combination": p["tags"]["moves"] >= 4,
            "defence": centi_balance(positions[0], solver) < 0,
            "double_capture": sum(1 for i in mine if moves[i].is_capture) >= 2,
            "king_play": any(positions[i].piece_at(moves[i].path[0]) in ("W", "B") for i in mine),
            "blockade": not positions[-1].legal_moves() and sum(positions[-1].count(positions[-1].turn)) > 0,
            "shot": any(len(moves[i].captured) >= 2 for i in mine),
            "promotion": any(moves[i].promotes for i in mine),
        }
        for theme, fact in facts.items():
            assert (theme in themes) == fact, (p["id"], theme)
        if "breakthrough" in themes:
            assert "promotion" in themes and "sacrifice" in themes, p["id"]


def test_the_bank_has_at_least_twelve_themes_of_a_hundred_puzzles():
    counts = {theme: sum(bank.theme_counts(v)[theme] for v in VARIANTS) for theme in THEMES}
    assert len([t for t, n in counts.items() if n >= 100]) >= 12, counts


def _percentile(values: list[int], share: float) -> float:
    ordered = sorted(values)
    at = share * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def test_starting_ratings_spread_from_1000_to_2100():
    ratings = [p["rating"] for v in VARIANTS for p in bank.load(v)]
    assert _percentile(ratings, 0.1) <= 1000
    assert _percentile(ratings, 0.9) >= 2100
    assert all(generate.RATING_MIN <= r <= generate.RATING_MAX and r % 10 == 0 for r in ratings)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_starting_rating_never_falls_when_a_difficulty_signal_grows(variant):
    """Longer lines, more sacrifices, a longer capture or a promotion: never an easier rating."""
    for p in bank.load(variant)[::10]:
        tags = line_tags(variant, p["fen"], p["solution"])
        rating = generate.starting_rating(variant, p["fen"], p["solution"], tags)
        assert rating == p["rating"], p["id"]
        for key, more in (("moves", tags["moves"] + 1), ("sacrifices", tags["sacrifices"] + 1),
                          ("longest_capture", tags["longest_capture"] + 1), ("promotion", True)):
            harder = generate.starting_rating(variant, p["fen"], p["solution"], {**tags, key: more})
            assert harder >= rating, (p["id"], key)
            # A capture of one piece counts nothing over none (the formula counts pieces beyond one).
            counted = key != "longest_capture" or tags[key] >= 1
            if generate.RATING_MIN < rating < generate.RATING_MAX and tags[key] is not True and counted:
                assert harder > rating, (p["id"], key)


def test_the_rating_weights_are_not_negative():
    weights = [generate.PER_EXTRA_MOVE, generate.PER_SACRIFICE, generate.PER_LATER_QUIET, generate.PER_TEMPTING,
               generate.PER_ALTERNATIVE, generate.PER_CAPTURED, generate.PER_KING, generate.FOR_PROMOTION]
    assert min(weights) >= 0


def test_a_king_more_on_the_board_rates_higher():
    """The same line from a start with a king of the defender more, far away (more to read)."""
    line = ["23-19", "8-12", "15x8", "7-12", "16x7"]
    plain = "W:W15,16,22,23:B5,7,8,10"
    tags = line_tags("italian", plain, line)
    more = generate.starting_rating("italian", "W:W15,16,22,23:B5,7,8,10,K32", line, tags)
    assert more > generate.starting_rating("italian", plain, line, tags) > generate.RATING_MIN


@pytest.fixture
def bank_copy(tmp_path, monkeypatch) -> Path:
    """The shipped bank copied to a temporary folder that ``bank`` reads and writes instead."""
    folder = tmp_path / "bank"
    shutil.copytree(bank.BANK_DIR, folder, ignore=shutil.ignore_patterns(".*"))
    monkeypatch.setattr(bank, "BANK_DIR", folder)
    bank._load.cache_clear()
    bank._index.cache_clear()
    yield folder
    bank._load.cache_clear()
    bank._index.cache_clear()


def _retag(variant: str | None, capsys) -> str:
    assert cli.retag(argparse.Namespace(variant=variant)) == 0
    return capsys.readouterr().out


def test_retag_recomputes_tags_and_ratings_keeping_the_source_and_is_idempotent(bank_copy, capsys):
    path = bank_copy / "italian.jsonl"
    shipped = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    # Tags as an earlier version wrote them: other themes, another rating, the source kept.
    stale = [dict(p, rating=1500, tags={**p["tags"], "themes": ["sacrifice", "endgame"]}) for p in shipped[:40]]
    path.write_text("".join(json.dumps(p) + "\n" for p in stale + shipped[40:]), encoding="utf-8")
    spanish = (bank_copy / "spanish.jsonl").read_bytes()
    out = _retag("italian", capsys)
    assert f"italian: 40 of {len(shipped)} puzzles retagged" in out
    assert "spanish" not in out
    assert (bank_copy / "spanish.jsonl").read_bytes() == spanish
    redone = bank.load("italian")
    assert redone == sorted(shipped, key=lambda p: p["id"])       # tags, sources and ratings as shipped
    first = path.read_bytes()
    again = _retag(None, capsys)
    assert all(f"{v}: 0 of" in again for v in VARIANTS)
    assert path.read_bytes() == first


def test_retag_keeps_the_source_and_every_other_field():
    p = bank.load("spanish")[0]
    changed = dict(p, tags={"source": "a club game", "themes": []}, rating=3000, extra="kept")
    redone = generate.retag(changed)
    assert redone["tags"]["source"] == "a club game"
    assert redone["extra"] == "kept" and redone["tree"] == p["tree"] and redone["id"] == p["id"]
    assert {k: v for k, v in redone["tags"].items() if k != "source"} == {
        k: v for k, v in p["tags"].items() if k != "source"}
    assert redone["rating"] == p["rating"]


def test_with_theme_and_theme_counts_agree_with_the_bank(bank_copy):
    for variant in VARIANTS:
        counts = bank.theme_counts(variant)
        assert list(counts) == list(THEMES)
        for theme in THEMES:
            chosen = bank.with_theme(variant, theme)
            assert len(chosen) == counts[theme]
            assert all(theme in p["tags"]["themes"] for p in chosen)
            assert [p["id"] for p in chosen] == sorted(p["id"] for p in chosen)
        assert sum(counts[t] for t in PHASES) == len(bank.load(variant))
    assert bank.with_theme("italian", "no_such_theme") == []
    assert bank.with_theme("checkers", "shot") == [] and set(bank.theme_counts("checkers").values()) == {0}
