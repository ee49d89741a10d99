"""Plot helpers return matplotlib Figures with the expected panels."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalhouse.analytics.factor.parallel import ParallelAnalysis
from evalhouse.analytics.report.plots_factor import (
    plot_dmse_forest,
    plot_loadings_heatmap,
    plot_score_vs_date,
    plot_scree,
)


def test_scree_from_parallel_analysis(three_factor):
    X, _, _ = three_factor
    fig = plot_scree(ParallelAnalysis(50, random_state=0).fit(X), max_factors=6)
    assert isinstance(fig, Figure)
    lines = fig.axes[0].get_lines()
    assert len(lines[0].get_xdata()) == 6 and len(lines) >= 2


def test_loadings_heatmap_two_panels():
    L = pd.DataFrame(np.random.default_rng(0).uniform(-1, 1, (5, 3)), index=list("abcde"), columns=["F1", "F2", "F3"])
    fig = plot_loadings_heatmap(L, L * 0.5)
    assert len(fig.axes) == 3  # two heatmaps and a colour bar
    assert plot_loadings_heatmap(L).axes[0].get_title() == "Raw scores"


def test_score_vs_date_and_forest():
    dates = pd.Series(pd.date_range("2024-01-01", periods=60, freq="10D"))
    t = np.linspace(-2, 2, 60)
    scores = 1 / (1 + np.exp(-2 * t)) + 0.05 * np.random.default_rng(0).standard_normal(60)
    fig = plot_score_vs_date(scores, dates)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert "OLS" in labels and any(lab.startswith("logistic") for lab in labels)
    delta = pd.DataFrame(
        {
            "baseline": ["ii"] * 3,
            "target": ["a", "b", "pooled"],
            "dmse": [0.02, 0.05, 0.035],
            "ci_low": [-0.01, 0.01, 0.015],
            "ci_high": [0.05, 0.09, 0.055],
        }
    )
    forest = plot_dmse_forest(delta)
    position = {tick.get_text(): tick.get_position()[1] for tick in forest.axes[0].get_yticklabels()}
    assert position["pooled"] == 0 and position["a"] > position["b"] > 0
