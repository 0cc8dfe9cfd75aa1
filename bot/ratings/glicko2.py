"""Glicko-2 ratings, written from Glickman's "Example of the Glicko-2 system" (2013).

Pure arithmetic, no I/O.  Ratings are kept on the Glicko scale (1500, RD 350 ...) and converted
to the Glicko-2 scale (mu, phi) only inside ``update``.  Rating periods may be fractional: an idle
player's deviation grows with elapsed time, as lichess does it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 173.7178          # Glicko <-> Glicko-2 (paper, step 2)
CONVERGENCE = 1e-6        # epsilon of the volatility iteration (paper, step 5)


@dataclass(frozen=True)
class Settings:
    """System constants; the defaults are lichess's for games."""

    rating: float = 1500.0
    deviation: float = 500.0
    volatility: float = 0.09
    tau: float = 0.75
    min_deviation: float = 45.0
    max_deviation: float = 500.0
    provisional_deviation: float = 110.0
    periods_per_day: float = 0.21436   # lichess: elapsed time counts as fractional rating periods


LICHESS = Settings()


@dataclass(frozen=True)
class Rating:
    """One player's rating on the Glicko scale."""

    rating: float
    deviation: float
    volatility: float

    def provisional(self, settings: Settings = LICHESS) -> bool:
        """Whether the deviation is still too wide to show the rating without a question mark."""
        return self.deviation > settings.provisional_deviation

    def shown(self, settings: Settings = LICHESS) -> str:
        """'1500?' while provisional, '1642' after."""
        return f"{round(self.rating)}{'?' if self.provisional(settings) else ''}"


@dataclass(frozen=True)
class Outcome:
    """One game against an opponent as rated before the period: score 1, 0.5 or 0."""

    opponent: Rating
    score: float


def new_rating(settings: Settings = LICHESS) -> Rating:
    """The rating of a player who has not played yet."""
    return Rating(settings.rating, settings.deviation, settings.volatility)


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5 of the paper: the Illinois variant of regula falsi on f(x) = 0."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return (ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2)
                - (x - a) / (tau * tau))

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > CONVERGENCE:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(player: Rating, outcomes: Sequence[Outcome], settings: Settings = LICHESS,
           periods: float = 1.0, clamp: bool = True) -> Rating:
    """The player's rating after one rating period with these outcomes.

    ``periods`` is how many rating periods the pre-period deviation grows by (fractional for
    elapsed time); with no outcomes only the deviation grows.  ``clamp`` keeps the deviation
    within the settings' bounds (the paper's worked example has no bounds)."""
    mu = (player.rating - 1500.0) / SCALE
    phi = player.deviation / SCALE
    sigma = player.volatility
    if not outcomes:
        phi_star = math.sqrt(phi * phi + periods * sigma * sigma)
        return _finish(player.rating, phi_star * SCALE, sigma, settings, clamp)
    v_inv = 0.0
    delta_sum = 0.0
    for o in outcomes:
        mu_j = (o.opponent.rating - 1500.0) / SCALE
        phi_j = o.opponent.deviation / SCALE
        g = _g(phi_j)
        e = _expected(mu, mu_j, phi_j)
        v_inv += g * g * e * (1.0 - e)
        delta_sum += g * (o.score - e)
    v = 1.0 / v_inv
    delta = v * delta_sum
    sigma_new = _new_volatility(sigma, phi, v, delta, settings.tau)
    phi_star = math.sqrt(phi * phi + periods * sigma_new * sigma_new)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * delta_sum
    return _finish(mu_new * SCALE + 1500.0, phi_new * SCALE, sigma_new, settings, clamp)


def _finish(rating: float, deviation: float, volatility: float, settings: Settings, clamp: bool) -> Rating:
    if clamp:
        deviation = min(max(deviation, settings.min_deviation), settings.max_deviation)
    return Rating(rating, deviation, volatility)


def periods_between(earlier: float | None, later: float, settings: Settings = LICHESS) -> float:
    """Rating periods elapsed between two epoch times (at least one game's worth: 1 when unknown)."""
    if earlier is None:
        return 1.0
    days = max(0.0, later - earlier) / 86400.0
    return days * settings.periods_per_day
