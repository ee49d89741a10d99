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


def test_loadings_heatmap_text_contrasts_with_its_cell_and_flags_loadings_beyond_one() -> None:
    import pandas as pd

    from evalhouse.analytics.report.plots_factor import heywood_cells, plot_loadings_heatmap

    raw = pd.DataFrame(
        [[0.95, 0.02, -0.9], [1.12, 0.1, 0.0], [0.3, -1.05, 0.5]],
        index=["gpqa_diamond", "hle", "scicode"],
        columns=["F1", "F2", "F3"],
    )
    fig = plot_loadings_heatmap(raw, raw * 0.5, labels={"gpqa_diamond": "GPQA Diamond"})
    ax = fig.axes[0]
    image = ax.images[0]
    for text in ax.texts:
        i, j = (round(c) for c in text.get_position()[::-1])
        cell = image.cmap(image.norm(raw.iloc[i, j]))
        assert contrast_ratio(text.get_color(), cell) >= 4.5, (text.get_text(), cell)
    flagged = sorted(t.get_text() for t in ax.texts if t.get_text().endswith("!"))
    assert flagged == ["-1.05!", "1.12!"] and len(ax.patches) == 2  # outlined on the raw panel only
    assert not fig.axes[1].patches  # halved: nothing beyond ±1
    assert [t.get_text() for t in ax.get_yticklabels()] == ["GPQA Diamond", "hle", "scicode"]
    assert heywood_cells(raw) == [("hle", "F1", 1.12), ("scicode", "F2", -1.05)]


def test_theta_plot_labels_highlighted_models_without_overlap() -> None:
    import pandas as pd
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from evalhouse.analytics.report.plots_equate import plot_theta_by_release

    rng = np.random.default_rng(3)
    ids = [f"m{i}" for i in range(60)]
    dates = pd.Series(pd.date_range("2023-01-01", periods=60, freq="10D"), index=ids)
    theta = pd.Series(np.linspace(-2, 2, 60) + rng.normal(0, 0.05, 60), index=ids)
    names = pd.Series({m: f"Display name of {m}" for m in ids})
    top = list(theta.sort_values(ascending=False).index[:12])  # crowded at the top right
    fig = plot_theta_by_release(theta, dates, labels=names, highlight=top, se=theta * 0 + 0.1)
    ax = fig.axes[0]
    renderer = (
        FigureCanvasAgg(fig).get_renderer() if not hasattr(fig.canvas, "get_renderer") else fig.canvas.get_renderer()
    )
    labels = [t for t in ax.texts if t.get_text().startswith("Display name")]
    assert len(labels) >= 8 and all("Display name of m" in t.get_text() for t in labels)  # display names, not ids
    boxes = [Text.get_window_extent(t, renderer) for t in labels]
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b)
