"""Readable figure text: annotation colours that contrast with their cell, labels that never overlap.

Two helpers the report's figures share:

* :func:`text_color_on` picks black or white for text drawn on a coloured cell, whichever has the
  higher WCAG 2 contrast ratio with the cell (:func:`contrast_ratio`); on any colour one of the
  two reaches at least 4.58:1, above the 4.5:1 WCAG AA asks of normal text.
* :func:`place_labels` writes point labels so that no two label boxes overlap and none leaves
  the axes: for each point (in the order given, most important first) it tries offsets at growing
  distances around the point and keeps the first free one, drawing a thin leader line when the
  label sits away from its point. A label with no free place in the axes is left out and counted,
  never drawn over another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.text import Text
from matplotlib.transforms import Bbox

BLACK, WHITE = "#000000", "#ffffff"


def _channel(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def luminance(color: object) -> float:
    """WCAG 2 relative luminance of a matplotlib colour (0 black … 1 white)."""
    r, g, b = (_channel(c) for c in to_rgb(color))  # type: ignore[arg-type]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: object, b: object) -> float:
    """WCAG 2 contrast ratio of two colours, 1 (none) … 21 (black on white)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_color_on(background: object) -> str:
    """Black or white, whichever contrasts more with ``background``."""
    return BLACK if contrast_ratio(BLACK, background) >= contrast_ratio(WHITE, background) else WHITE


@dataclass(frozen=True)
class Placed:
    drawn: int
    left_out: list[str]


# Offsets in points: right, left, above, below, then the diagonals, at growing distances.
_DIRECTIONS = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1)]
_DISTANCES = [6, 14, 26, 42, 64]


def place_labels(
    ax: Axes,
    xs: Sequence[float],
    ys: Sequence[float],
    labels: Sequence[str],
    *,
    fontsize: float = 7,
) -> Placed:
    """Annotate each ``(x, y)`` with its label without overlaps (see the module docstring)."""
    board = _Board(ax, fontsize)
    for x, y in zip(xs, ys, strict=True):
        board.block_point(x, y)
    left_out = [label for x, y, label in zip(xs, ys, labels, strict=True) if not board.place((x, y), label)]
    return Placed(len(labels) - len(left_out), left_out)


class _Board:
    """The axes' free space in display coordinates: what is taken by points and placed labels."""

    def __init__(self, ax: Axes, fontsize: float) -> None:
        self.ax, self.fontsize = ax, fontsize
        canvas = ax.figure.canvas
        if not hasattr(canvas, "get_renderer"):  # a bare Figure: give it the Agg canvas it is saved with
            canvas = FigureCanvasAgg(ax.figure)
        canvas.draw()  # the layout (and so every box) is final before boxes are measured
        self.renderer = canvas.get_renderer()
        self.frame = ax.get_window_extent(self.renderer)
        self.taken: list[Bbox] = []

    def block_point(self, x: float, y: float) -> None:
        px, py = self.ax.transData.transform((x, y))
        self.taken.append(Bbox.from_extents(px - 2.5, py - 2.5, px + 2.5, py + 2.5))

    def place(self, xy: tuple[float, float], label: str) -> bool:
        for distance in _DISTANCES:
            for dx, dy in _DIRECTIONS:
                text = self.ax.annotate(
                    label,
                    xy,
                    xytext=(dx * distance, dy * distance),
                    textcoords="offset points",
                    ha="left" if dx > 0 else "right" if dx < 0 else "center",
                    va="bottom" if dy > 0 else "top" if dy < 0 else "center",
                    fontsize=self.fontsize,
                    arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "0.45"} if distance > _DISTANCES[0] else None,
                )
                text.update_positions(self.renderer)
                box = Text.get_window_extent(text, self.renderer).expanded(1.04, 1.15)  # the words, not the leader
                f = self.frame
                inside = f.x0 <= box.x0 and box.x1 <= f.x1 and f.y0 <= box.y0 and box.y1 <= f.y1
                if inside and not any(box.overlaps(other) for other in self.taken):
                    self.taken.append(box)
                    return True
                text.remove()
        return False
