"""Glicko-2 against Glickman's worked example and against an independent re-derivation."""

from __future__ import annotations

import math

import pytest

from bot.ratings import LICHESS, Outcome, Rating, Settings, new_rating, periods_between, update

PAPER = Settings(tau=0.5)


def test_worked_example_of_the_paper():
    player = Rating(1500, 200, 0.06)
    outcomes = [Outcome(Rating(1400, 30, 0.06), 1), Outcome(Rating(1550, 100, 0.06), 0),
                Outcome(Rating(1700, 300, 0.06), 0)]
    after = update(player, outcomes, PAPER, clamp=False)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.deviation == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)


def _reference(r, rd, sigma, games, tau):
    """The paper's steps again, written apart: bisection instead of regula falsi for step 5."""
    mu, phi = (r - 1500) / 173.7178, rd / 173.7178
    gs = [(1 / math.sqrt(1 + 3 * (o_rd / 173.7178) ** 2 / math.pi ** 2), (o_r - 1500) / 173.7178, s)
          for o_r, o_rd, s in games]
    es = [1 / (1 + math.exp(-g * (mu - mj))) for g, mj, _ in gs]
    v = 1 / sum(g * g * e * (1 - e) for (g, _, _), e in zip(gs, es, strict=True))
    delta = v * sum(g * (s - e) for (g, _, s), e in zip(gs, es, strict=True))
    a = math.log(sigma ** 2)

    def f(x):
        return (math.exp(x) * (delta ** 2 - phi ** 2 - v - math.exp(x)) / (2 * (phi ** 2 + v + math.exp(x)) ** 2)
                - (x - a) / tau ** 2)

    lo, hi = a - 20, a + 20          # f is decreasing: f(lo) > 0 > f(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    sigma2 = math.exp(lo / 2)
    phi_star = math.sqrt(phi ** 2 + sigma2 ** 2)
    phi2 = 1 / math.sqrt(1 / phi_star ** 2 + 1 / v)
    mu2 = mu + phi2 ** 2 * sum(g * (s - e) for (g, _, s), e in zip(gs, es, strict=True))
    return 1500 + 173.7178 * mu2, 173.7178 * phi2, sigma2


@pytest.mark.parametrize("r, rd, sigma, games", [
    (2100, 80, 0.06, [(1900, 60, 1), (2300, 120, 0)]),
    (1100, 250, 0.09, [(1300, 90, 1), (1250, 200, 1), (1000, 50, 0.5)]),
    (1800, 50, 0.05, [(1750, 45, 0)] * 5),
    (1000, 300, 0.09, [(1700, 150, 1)]),
])
def test_away_from_1500_matches_an_independent_derivation(r, rd, sigma, games):
    after = update(Rating(r, rd, sigma), [Outcome(Rating(o_r, o_rd, 0.06), s) for o_r, o_rd, s in games],
                   LICHESS, clamp=False)
    ref = _reference(r, rd, sigma, games, LICHESS.tau)
    assert after.rating == pytest.approx(ref[0], abs=1e-3)
    assert after.deviation == pytest.approx(ref[1], abs=1e-3)
    assert after.volatility == pytest.approx(ref[2], abs=1e-6)


def test_volatility_does_not_drift_for_an_expected_result_away_from_1500():
    # A 2100 player beating a 1500 player did what was expected: volatility barely moves.
    # (An implementation that puts the rating where the paper has phi drifts here.)
    after = update(Rating(2100, 60, 0.06), [Outcome(Rating(1500, 60, 0.06), 1)], LICHESS, clamp=False)
    assert after.volatility == pytest.approx(0.06, abs=2e-4)


def test_new_players_start_as_lichess_does_and_are_provisional():
    fresh = new_rating()
    assert (fresh.rating, fresh.deviation, fresh.volatility) == (1500, 500, 0.09)
    assert fresh.shown() == "1500?"
    assert Rating(1642.4, 80, 0.06).shown() == "1642"


def test_deviation_stays_within_bounds():
    strong = Rating(1500, 46, 0.06)
    for _ in range(30):
        strong = update(strong, [Outcome(Rating(1500, 50, 0.06), 0.5)])
    assert strong.deviation >= LICHESS.min_deviation
    idle = update(Rating(1500, 480, 0.09), [], periods=10_000)
    assert idle.deviation == LICHESS.max_deviation


def test_an_idle_players_deviation_grows_with_elapsed_time():
    r = Rating(1700, 60, 0.06)
    day = update(r, [], periods=periods_between(0, 86400))
    year = update(r, [], periods=periods_between(0, 365 * 86400))
    assert r.deviation < day.deviation < year.deviation
    assert day.rating == year.rating == 1700
