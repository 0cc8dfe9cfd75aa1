"""Image renderers (pure Pillow, no dependency on the rest of the project)."""

from .board import BoardView, render_capture_gif, render_image, render_png, square_center
from .standings import StandingRow, StandingsView, render_standings

__all__ = [
    "BoardView", "StandingRow", "StandingsView", "render_capture_gif", "render_image", "render_png",
    "render_standings", "square_center",
]
