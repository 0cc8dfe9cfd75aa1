"""The Texel fit recovers weights from results drawn with known weights, and
self-play yields labelled quiet positions."""

import math
import random
from pathlib import Path

from bot.ai import choose_move
from bot.ai.evaluation import FEATURES, Evaluator
from bot.ai.tune import STARTING_WEIGHTS, _loss, fit_k, fit_weights, self_play, starting_weights, write_weights
from bot.rules import VARIANTS, CapturePriority, Game, Variant


def test_fit_recovers_known_weights():
    rng = random.Random(1)
    true = [100.0, 250.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    samples = []
    for g in range(1500):
        f = [rng.randint(-3, 3), rng.randint(-2, 2), rng.randint(-10, 10)] + [0] * (len(FEATURES) - 3)
        e = sum(a * b for a, b in zip(true, f, strict=True))
        p = 1.0 / (1.0 + math.exp(-e * math.log(10) / 400.0))
        samples.append((f, 1.0 if rng.random() < p else 0.0, g))
    start = [100.0, 150.0, 0.0] + [0.0] * (len(FEATURES) - 3)
    k = 1.0
    fitted = fit_weights(samples, start, k, steps=200, lr=3.0)
    assert fitted[0] == 100.0        # the unit stays fixed
    assert abs(fitted[1] - 250.0) < 40
    assert abs(fitted[2] - 10.0) < 4
    assert _loss(samples, fitted, k) < _loss(samples, start, k)
    assert 0.5 < fit_k(samples, true) < 2.0


def test_self_play_labels_quiet_positions_with_the_result():
    samples = self_play("italian", games=1, depth=1, max_plies=60, seed=3, log=False)
    assert samples
    assert all(len(f) == len(FEATURES) and y in (0.0, 0.5, 1.0) and g == 0 for f, y, g in samples)


def test_fitted_weights_value_a_flying_king_far_above_a_short_one():
    from bot.ai.weights import WEIGHTS
    assert WEIGHTS["spanish"]["kings"] > 1.5 * WEIGHTS["italian"]["kings"]
    assert all(w["men"] == 100 for w in WEIGHTS.values())


# Variants made here, not registered: Italian rules on 6x6, and flying kings with a rule set
# no shipped variant has.
MINI = Variant(id="mini6", size=6, flying_kings=False, men_capture_kings=False,
               priority=CapturePriority.ITALIAN, no_progress_plies=80, numbering="italian",
               pdn_gametype="22,W,6,6,N2,1", start_rows=2)
FLYING = Variant(id="flying10", size=10, flying_kings=True, men_capture_kings=False,
                 priority=CapturePriority.ITALIAN, no_progress_plies=50, numbering="italian",
                 pdn_gametype="22,W,10,10,N2,1", start_rows=4)


def test_a_variant_without_tuned_weights_plays_with_those_of_the_variant_it_plays_like():
    from bot.ai.weights import WEIGHTS, stand_in, weights_for
    assert stand_in(MINI, WEIGHTS) == "italian"         # same rules; Italian's 8x8 is nearer than 10x10
    assert weights_for(MINI) == WEIGHTS["italian"]
    assert stand_in(FLYING, WEIGHTS) == "spanish"        # no variant shares its rules; kings fly
    assert weights_for("triestina") == WEIGHTS["triestina"]
    assert Evaluator(MINI).weights == [WEIGHTS["italian"][name] for name in FEATURES]
    # The engine plays it, at a searching level and at a beginner's.
    game = Game(MINI)
    for level in (1, 3):
        move = choose_move(MINI, game.position.fen(), level=level, time_limit=1, rng=1).move
        assert move in game.position.legal_moves()


def test_tuning_a_new_variant_starts_from_the_variant_it_plays_like(monkeypatch):
    monkeypatch.setitem(VARIANTS, MINI.id, MINI)
    assert starting_weights(MINI.id) == STARTING_WEIGHTS["italian"]
    assert starting_weights("spanish") == STARTING_WEIGHTS["spanish"]


def test_writing_the_weights_keeps_the_rest_of_the_module(tmp_path):
    import bot.ai.weights as module
    path = tmp_path / "weights.py"
    path.write_text(Path(module.__file__).read_text(encoding="utf-8"), encoding="utf-8")
    fitted = {v: dict(w) for v, w in module.WEIGHTS.items()}
    fitted["italian"]["kings"] = 201.5
    write_weights(fitted, path, "--games 2 --depth 1")
    text = path.read_text(encoding="utf-8")
    assert "Fitted by ``python -m bot.ai.tune`` (--games 2 --depth 1);" in text
    namespace: dict = {}
    exec(compile(text, str(path), "exec"), namespace)
    assert namespace["WEIGHTS"] == fitted
    assert namespace["weights_for"]("italian")["kings"] == 201.5
    assert namespace["weights_for"](MINI)["kings"] == 201.5
