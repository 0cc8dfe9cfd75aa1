"""Levels 1-3 play like people who look at the board: level 1 leaves men hanging and misses shots,
level 2 mostly sees a man left hanging, level 3 always looks at the answers; level 4 searches one
ply and level 5 deeply, which finds the shots.  How strong they are against scripted players is
measured by bench/ai_ladder.py (mat1, mat2, mat3), not here."""

import random
from dataclasses import replace

from bot.ai import LEVELS, choose_move, search_position
from bot.ai.evaluation import evaluator
from bot.ai.human import Vision, human_move
from bot.rules import Game, Position, Result

# White to move; three of its eight moves leave a man to be taken for nothing.
HANGING = "W:W19,20,24,25,28,29,31,32:B1,4,5,7,8,11,12,13,17"
# Spanish, from tests/ai/test_tactics.py: 3-7 wins two men by force (a shot), nothing else does.
SHOT = "W:W3,4,5,9,10,11,16,26:B8,18,19,23,25,28,29,31"
SEEDS = range(30)


def hanging_moves(variant: str, fen: str) -> set[str]:
    """The moves after which the opponent takes a man and keeps the gain (by a real search)."""
    pos = Position.from_fen(variant, fen)
    out = set()
    for move in pos.legal_moves():
        after = pos.play(move)
        if after.legal_moves() and after.legal_moves()[0].captured and search_position(after, 4, 5).score >= 80:
            out.add(str(move))
    return out


def test_level_one_sometimes_leaves_a_man_hanging_and_level_five_never():
    hanging = hanging_moves("italian", HANGING)
    assert 1 <= len(hanging) < len(Position.from_fen("italian", HANGING).legal_moves())
    level1 = [str(choose_move("italian", HANGING, level=1, rng=seed).move) for seed in SEEDS]
    assert sum(m in hanging for m in level1) >= 2
    level5 = {str(choose_move("italian", HANGING, level=5, time_limit=0.5, rng=seed).move) for seed in range(2)}
    assert not level5 & hanging


def test_level_two_mostly_sees_a_hanging_man_but_not_always():
    hanging = hanging_moves("italian", HANGING)
    level2 = sum(str(choose_move("italian", HANGING, level=2, rng=seed).move) in hanging for seed in SEEDS)
    assert 1 <= level2 < len(SEEDS) // 3


def test_the_beginner_levels_rarely_see_a_shot():
    level1 = [str(choose_move("spanish", SHOT, level=1, rng=seed).move) for seed in SEEDS]
    assert level1.count("3-7") <= len(SEEDS) // 5
    # The deep search finds it.
    assert str(choose_move("spanish", SHOT, level=5, time_limit=0.5, rng=0).move) == "3-7"


def test_a_beginners_move_is_legal_and_says_how_it_was_chosen():
    pos = Position.from_fen("italian", HANGING)
    for level in (1, 2):
        result = choose_move("italian", HANGING, level=level, rng=3)
        assert pos.is_legal(result.move) and result.pv == (result.move,)
        assert result.depth == level and result.nodes >= 1


def threatens(pos: Position, move: str) -> bool:
    """Whether, after ``move``, its player could take a man if it were their turn again."""
    after = pos.play(pos.parse_move(move)).fen()
    again = Position.from_fen(pos.variant.id, pos.fen()[0] + after[1:])
    moves = again.legal_moves()
    return bool(moves and moves[0].captured)


def test_level_one_likes_to_threaten_a_man_without_asking_whether_it_can_be_taken_first():
    pos = Position.from_fen("italian", HANGING)
    threatening = {str(m) for m in pos.legal_moves() if threatens(pos, str(m))}
    assert 1 <= len(threatening) < len(pos.legal_moves())
    vision = LEVELS[1].vision
    assert vision is not None and vision.attack > 0
    calm = replace(vision, attack=0)
    ev = evaluator("italian").evaluate
    seeds = range(200)
    keen = sum(str(human_move(pos, vision, ev, random.Random(s))[0]) in threatening for s in seeds)
    plain = sum(str(human_move(pos, calm, ev, random.Random(s))[0]) in threatening for s in seeds)
    assert keen >= 1.5 * plain > 0


def finish(fen: str, vision: Vision, seed: int) -> Result | None:
    """A triestina ending played out: White with ``vision``, Black as level 2."""
    rng = random.Random(seed)
    game = Game("triestina", fen)
    ev = evaluator("triestina").evaluate
    black = LEVELS[2].vision
    assert black is not None
    while game.result is None:
        game.play(human_move(game.position, vision if game.position.turn == "W" else black, ev, rng)[0])
    return game.result


def test_level_three_closes_in_on_a_won_ending_instead_of_wandering_into_a_draw():
    # Three kings against one on the 10x10 board, kings one square a step: a player that only
    # looks two plies ahead finds the capture only by chance, before the no-progress rule.
    vision = LEVELS[3].vision
    assert vision is not None and vision.hunt > 0
    fen = "W:WK1,K2,K3:BK50"
    results = [finish(fen, vision, seed) for seed in range(6)]
    assert all(r is not None and r.winner == "W" for r in results)
    wandering = [finish(fen, replace(vision, hunt=0), seed) for seed in range(6)]
    assert any(r is not None and r.winner is None for r in wandering)
