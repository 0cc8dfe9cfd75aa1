"""The endgame tables checked against the rules engine itself, not against the way they were made.

Two independent checks on random positions of every material the shipped tables hold:
- one step: a position's verdict is what its legal moves (``Position.legal_moves``, the rules
  engine every game uses) lead to -- a win in d when some move leaves the opponent lost in d-1
  and none quicker, a loss in d when every move leaves the opponent winning, the slowest in
  d-1, a draw otherwise;
- many steps: an exhaustive search to a fixed horizon, knowing nothing of the tables, finds
  exactly the wins and losses they say end within that horizon, and nothing forced in the
  positions they call drawn or longer.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from bot.ai import egtb, search_position
from bot.ai.egtb import DRAW, LOSS, WIN, Tables, Verdict, store
from bot.ai.egtb.solve import Material, materials, name, solve
from bot.ai.search import MATE
from bot.rules import VARIANTS, Position, Variant, get_variant

VARIANT_IDS = sorted(VARIANTS)


def shipped(variant: str) -> Tables:
    tb = egtb.tables(variant)
    assert tb is not None, f"no shipped tables for {variant}"
    return tb


def random_position(v: Variant, m: Material, rng: random.Random) -> Position:
    """A position of material ``m`` (the side to move's pieces first), either side to move."""
    a, b, c, d = m
    white_to_move = rng.random() < 0.5
    while True:
        squares = rng.sample(range(1, v.squares + 1), a + b + c + d)
        mover, other = ("W", "B") if white_to_move else ("B", "W")
        pieces = {mover: [], other: []}
        # Men never stand on their own crowning row.
        for i, sq in enumerate(squares):
            side = mover if i < a + b else other
            man = i < a or a + b <= i < a + b + c
            pieces[side].append(("" if man else "K") + str(sq))
        fen = f"{'W' if white_to_move else 'B'}:W{','.join(pieces['W'])}:B{','.join(pieces['B'])}"
        try:
            pos = Position.from_fen(v, fen)
        except ValueError:
            continue
        if _crowning_row_men(pos):
            continue
        return pos


def _crowning_row_men(pos: Position) -> bool:
    v = pos.variant
    return bool(pos.wm & v.white_promo or pos.bm & v.black_promo)


def from_moves(pos: Position, tb: Tables) -> Verdict:
    """The verdict the position's legal moves imply, one ply down in the tables."""
    mat = (0, 0, 0, 0)
    wins: list[int] = []
    losses: list[int] = []
    draws = 0
    moves = pos.legal_moves()
    for move in moves:
        child = pos.play(move)
        if not (child.wm | child.wk) or not (child.bm | child.bk):
            losses.append(0)            # the opponent has no piece: lost now
            continue
        v = tb.verdict(child)
        assert v is not None
        if v.result == DRAW:
            draws += 1
        elif v.result == WIN:
            wins.append(v.plies)
        else:
            losses.append(v.plies)
    if not moves:
        return Verdict(LOSS, 0, mat)
    if losses:
        return Verdict(WIN, min(losses) + 1, mat)
    if draws:
        return Verdict(DRAW, 0, mat)
    return Verdict(LOSS, max(wins) + 1, mat)


def horizon_search(pos: Position, horizon: int) -> tuple[str, int] | None:
    """The exact result and distance of ``pos`` if the game ends within ``horizon`` plies with
    best play, else None; plain minimax over ``legal_moves`` with a memo, nothing else."""
    memo: dict[tuple, tuple[str, int] | None] = {}

    def solve_at(p: Position, depth: int) -> tuple[str, int] | None:
        key = (p.key, depth)
        if key in memo:
            return memo[key]
        moves = p.legal_moves()
        result: tuple[str, int] | None = None
        if not moves:
            result = (LOSS, 0)
        elif depth > 0:
            best_win: int | None = None
            slowest_loss = -1
            all_lose = True
            for move in moves:
                child = p.play(move)
                if not (child.wm | child.wk) or not (child.bm | child.bk):
                    best_win = 1
                    break
                r = solve_at(child, depth - 1)
                if r is None:
                    all_lose = False
                elif r[0] == LOSS:
                    if best_win is None or r[1] + 1 < best_win:
                        best_win = r[1] + 1
                else:
                    slowest_loss = max(slowest_loss, r[1])
            if best_win is not None:
                result = (WIN, best_win)
            elif all_lose:
                result = (LOSS, slowest_loss + 1)
        memo[key] = result
        return result

    return solve_at(pos, horizon)


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_every_verdict_is_what_the_legal_moves_lead_to(variant: str) -> None:
    tb = shipped(variant)
    v = get_variant(variant)
    rng = random.Random(f"bellman-{variant}")
    seen = {DRAW: 0, WIN: 0, LOSS: 0}
    for m in materials(tb.pieces):
        for _ in range(100):
            pos = random_position(v, m, rng)
            got = tb.verdict(pos)
            assert got is not None and got.material == m, (pos.fen(), name(m))
            want = from_moves(pos, tb)
            assert (got.result, got.plies) == (want.result, want.plies), (pos.fen(), got, want)
            seen[got.result] += 1
    # The sample meets all three results (a check that only ever saw draws would prove little).
    assert min(seen.values()) >= 200, seen


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_an_exhaustive_search_finds_what_the_tables_say(variant: str) -> None:
    tb = shipped(variant)
    v = get_variant(variant)
    rng = random.Random(f"horizon-{variant}")
    checked = {DRAW: 0, WIN: 0, LOSS: 0}
    # Up to three pieces 6 plies deep (5 with flying kings), four pieces 4: plain Python over the
    # rules engine is slow, and the one-step check above covers many more positions of every material.
    for m in materials(min(tb.pieces, 4)):
        tries, horizon = (2, 5 if v.flying_kings else 6) if sum(m) <= 3 else (1, 4)
        for _ in range(tries):
            pos = random_position(v, m, rng)
            got = tb.verdict(pos)
            assert got is not None
            found = horizon_search(pos, horizon)
            if got.result != DRAW and got.plies <= horizon:
                assert found == (got.result, got.plies), (pos.fen(), got, found)
            else:
                assert found is None, (pos.fen(), got, found)
            checked[got.result] += 1
    assert min(checked.values()) >= 3, checked


def test_the_search_plays_the_quickest_win_and_says_how_long_it_takes() -> None:
    # Italian, two kings against one: the tables know the end; the search needs no depth for it.
    pos = Position.from_fen("italian", "W:WK22,K27:BK5")
    known = shipped("italian").verdict(pos)
    assert known is not None and known.result == WIN
    result = search_position(pos, 64, 1.0)
    assert result.score == MATE - known.plies
    # The principal variation is a legal line that ends the game in exactly that many plies.
    assert len(result.pv) == known.plies
    p = pos
    for move in result.pv:
        p = p.play(move)
    assert not p.legal_moves()


def test_a_position_with_a_black_king_to_move_reads_the_same_table_turned_round() -> None:
    tb = shipped("spanish")
    pos = Position.from_fen("spanish", "W:WK10,K20:BK1")
    mirror = Position.from_fen("spanish", "B:WK32:BK23,K13")   # the same, half a turn round
    a, b = tb.verdict(pos), tb.verdict(mirror)
    assert a is not None and b is not None and (a.result, a.plies) == (b.result, b.plies)


def test_a_damaged_or_foreign_file_is_refused_and_the_next_one_is_used(tmp_path, monkeypatch) -> None:
    v = get_variant("italian")
    monkeypatch.setenv("DRAUGHTS_EGTB_DIR", str(tmp_path))
    egtb.forget()
    try:
        (tmp_path / store.file_name(v, 5)).write_bytes(b"not xz at all")
        tb = egtb.tables(v)
        # The damaged 5-piece file is skipped: the shipped 4-piece tables serve.
        assert tb is not None and tb.pieces == 4
        with pytest.raises(store.TableFileError):
            store.load(tmp_path / store.file_name(v, 5), v)
        # A file built for other rules is refused, whatever its name says.
        spanish = solve(get_variant("spanish"), 2)
        store.save(tmp_path / "italian-2.egtb.xz", get_variant("spanish"), 2, spanish)
        with pytest.raises(store.TableFileError):
            store.load(tmp_path / "italian-2.egtb.xz", v)
    finally:
        egtb.forget()


def test_build_writes_tables_that_load_and_probe_answers(tmp_path) -> None:
    env = {"DRAUGHTS_EGTB_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "bot", "ai", "egtb", "build", "--variant", "italian",
                          "--pieces", "3", "--jobs", "2"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "italian-3.egtb.xz").exists()
    assert "italian: solved in" in out.stdout and "100%" in out.stderr
    # A fresh solve (two processes) gives the shipped tables' bytes, material by material.
    pieces, data = store.load(tmp_path / "italian-3.egtb.xz", get_variant("italian"))
    assert pieces == 3 and sorted(data) == sorted(materials(3))
    assert all(bytes(data[m]) == bytes(shipped("italian").table(m)) for m in materials(3))
    probe = subprocess.run([sys.executable, "-m", "bot", "ai", "egtb", "probe", "--variant", "italian",
                            "--fen", "W:WK22,K27:BK5"], capture_output=True, text=True, env=env, timeout=60)
    assert probe.returncode == 0, probe.stderr
    # The 4-piece tables the package ships are found, not the 3-piece ones just built elsewhere.
    first = probe.stdout.splitlines()[0]
    assert first.startswith("KKvK: win in ") and first.endswith("plies for the side to move")
    bad = subprocess.run([sys.executable, "-m", "bot", "ai", "egtb", "probe", "--variant", "italian",
                          "--fen", "W:W21,22,23,24,25:B1,2"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert bad.returncode == 1 and "up to 4 pieces" in bad.stderr
