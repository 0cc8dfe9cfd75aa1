"""Evaluation weights per variant, in hundredths of a man (the man is fixed at 100).

Fitted by ``python -m bot.ai.tune`` (--games 240 --depth 3 --seed 1 --steps 300 --l2 1e-7,1e-6);
see bot/ai/tune.py for the method.
"""

from collections.abc import Mapping

from bot.rules import VARIANTS, Variant, get_variant

WEIGHTS: dict[str, dict[str, float]] = {
    "italian": {
        "men": 100.0,
        "kings": 194.1,
        "advance": 11.8,
        "back_rank": 25.3,
        "centre": -14.6,
        "mobility": 8.9,
        "tempo": -2.5,
        "runaway": 43.8,
        "diagonal": -3.1,
    },
    "spanish": {
        "men": 100.0,
        "kings": 343.8,
        "advance": 0.4,
        "back_rank": 32.8,
        "centre": 11.7,
        "mobility": 0.2,
        "tempo": 5.2,
        "runaway": 45.4,
        "diagonal": 10.0,
    },
    "triestina": {
        "men": 100.0,
        "kings": 219.3,
        "advance": 3.5,
        "back_rank": 8.2,
        "centre": 6.0,
        "mobility": 1.3,
        "tempo": 4.0,
        "runaway": 40.0,
        "diagonal": 4.9,
    },
}


# ``python -m bot.ai.tune --write`` rewrites the table above and keeps what follows.


def stand_in(variant: Variant | str, table: Mapping[str, dict[str, float]]) -> str:
    """The entry of ``table`` a variant uses: its own; for a variant without one, that of the
    registered variant that plays alike (the same ``rules_key``), nearest in board size; failing
    that, of one whose kings move alike (flying or not), nearest in size; failing that, Italian's.

    So a new variant gets sensible weights before it is tuned (Mini, Italian rules on 6x6, plays
    with Italian's), and never a KeyError."""
    v = get_variant(variant)
    if v.id in table:
        return v.id
    known = [k for k in VARIANTS.values() if k.id in table]
    for alike in (lambda k: k.rules_key == v.rules_key, lambda k: k.flying_kings == v.flying_kings):
        candidates = [k for k in known if alike(k)]
        if candidates:
            return min(candidates, key=lambda k: abs(k.size - v.size)).id
    return "italian"


def weights_for(variant: Variant | str) -> dict[str, float]:
    """The evaluation weights a variant plays with (see ``stand_in``)."""
    return WEIGHTS[stand_in(variant, WEIGHTS)]
