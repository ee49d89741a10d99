"""Figure text the report relies on: readable on every heatmap colour, labels never overlapping."""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")
import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.text import Text

from evalhouse.analytics.report.plot_labels import BLACK, WHITE, contrast_ratio, place_labels, text_color_on


def test_cell_text_reaches_wcag_aa_contrast_on_every_colour_of_the_heatmap_maps() -> None:
    for name in ("RdBu_r", "viridis", "magma", "coolwarm"):
        cmap = colormaps[name]
        for v in np.linspace(0, 1, 257):
            cell = cmap(v)
            assert contrast_ratio(text_color_on(cell), cell) >= 4.5, (name, v)
    assert text_color_on("#08306b") == WHITE and text_color_on("#fff5f0") == BLACK
    assert round(contrast_ratio(BLACK, WHITE), 1) == 21.0


def test_crowded_labels_do_not_overlap_and_stay_inside_the_axes() -> None:
    rng = np.random.default_rng(7)
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    xs = np.concatenate([rng.normal(0, 0.05, 25), rng.uniform(-1, 1, 15)])
    ys = np.concatenate([rng.normal(0, 0.05, 25), rng.uniform(-1, 1, 15)])
    ax.scatter(xs, ys, s=8)
    ax.set_xlim(-1.2, 1.2)
    ax.set_ylim(-1.2, 1.2)
    labels = [f"model-{i:02d} with a long display name" for i in range(len(xs))]
    placed = place_labels(ax, xs, ys, labels)
    assert placed.drawn + len(placed.left_out) == len(labels) and placed.drawn >= 15
    renderer = fig.canvas.get_renderer()  # the Agg canvas place_labels gave the bare figure
    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]
    assert len(boxes) == placed.drawn
    frame = ax.get_window_extent(renderer)
    for box in boxes:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b)
    drawn = {t.get_text() for t in ax.texts}
    assert drawn.isdisjoint(placed.left_out) and drawn | set(placed.left_out) == set(labels)
