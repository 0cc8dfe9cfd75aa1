"""Evaluation weights per variant, in hundredths of a man (the man is fixed at 100).

Fitted by ``python -m bot.ai.tune`` (--games 240 --depth 3 --seed 1 --steps 300 --l2 1e-7,1e-6);
see bot/ai/tune.py for the method.
"""

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
