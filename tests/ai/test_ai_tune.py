"""The Texel fit recovers weights from results drawn with known weights, and
self-play yields labelled quiet positions."""

import math
import random

from bot.ai.evaluation import FEATURES
from bot.ai.tune import _loss, fit_k, fit_weights, self_play


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
