"""Ratings: Glicko-2 arithmetic (pure; no storage here)."""

from bot.ratings.glicko2 import LICHESS, Outcome, Rating, Settings, new_rating, periods_between, update

__all__ = ["LICHESS", "Outcome", "Rating", "Settings", "new_rating", "periods_between", "update"]
