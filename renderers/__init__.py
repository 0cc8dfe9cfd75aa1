"""Image renderers (pure Pillow, no dependency on the rest of the project)."""

from .board import BoardView, render_capture_gif, render_image, render_png, square_center

__all__ = ["BoardView", "render_capture_gif", "render_image", "render_png", "square_center"]
