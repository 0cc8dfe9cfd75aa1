"""Evaluation weights per variant, in hundredths of a man (the man is fixed at 100).

Starting values before tuning; ``python -m bot.ai.tune`` rewrites this file.
"""

WEIGHTS: dict[str, dict[str, float]] = {
    "spanish": {"men": 100, "kings": 350, "advance": 3, "back_rank": 8, "centre": 6, "mobility": 2,
                "tempo": 4, "runaway": 40, "diagonal": 15},
    "italian": {"men": 100, "kings": 220, "advance": 3, "back_rank": 8, "centre": 6, "mobility": 2,
                "tempo": 4, "runaway": 40, "diagonal": 5},
    "triestina": {"men": 100, "kings": 220, "advance": 3, "back_rank": 8, "centre": 6, "mobility": 2,
                  "tempo": 4, "runaway": 40, "diagonal": 5},
}
