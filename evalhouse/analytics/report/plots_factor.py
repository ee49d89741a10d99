"""Matplotlib figures for the factor analyses (returned, never shown or saved).

Figures are built on ``matplotlib.figure.Figure`` directly, so no pyplot state or GUI backend
is involved and callers (HTML report, CLI) decide how to render them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from evalhouse.analytics.factor.detrend import logistic4, logistic_fit
from evalhouse.analytics.report.plot_labels import text_color_on


def plot_scree(observed: Any, thresholds: Any | None = None, *, max_factors: int | None = None) -> Figure:
    """Observed correlation eigenvalues with the parallel-analysis cut-offs.

    ``observed`` may also be a fitted :class:`~evalhouse.analytics.factor.parallel.ParallelAnalysis`.
    """
    if hasattr(observed, "observed_"):
        observed, thresholds = observed.observed_, observed.thresholds_
    obs = np.asarray(observed, dtype=float)
    m = len(obs) if max_factors is None else min(max_factors, len(obs))
    x = np.arange(1, m + 1)
    fig = Figure(figsize=(5.5, 4))
    ax = fig.add_subplot()
    ax.plot(x, obs[:m], "o-", label="observed eigenvalue")
    if thresholds is not None:
        ax.plot(x, np.asarray(thresholds, dtype=float)[:m], "s--", color="grey", label="95th percentile (random)")
    ax.axhline(1.0, color="lightgrey", lw=0.8, ls=":")
    ax.set_xticks(x)
    ax.set_xlabel("Factor")
    ax.set_ylabel("Eigenvalue")
    ax.set_title("Scree and parallel analysis")
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def heywood_cells(frame: pd.DataFrame, *, bound: float = 1.0) -> list[tuple[str, str, float]]:
    """``(row, factor, loading)`` for every loading beyond ±``bound`` (a Heywood case in a pattern
    matrix from an oblique rotation is possible but says the solution is suspect)."""
    values = frame.to_numpy(dtype=float)
    return [
        (str(frame.index[i]), str(frame.columns[j]), float(v))
        for (i, j), v in np.ndenumerate(values)
        if np.isfinite(v) and abs(v) > bound
    ]


def plot_loadings_heatmap(
    raw: pd.DataFrame, adjusted: pd.DataFrame | None = None, *, labels: Mapping[str, str] | None = None
) -> Figure:
    """Heatmaps of loadings (items x factors): raw and, if given, date-adjusted side by side.

    Each number is written in black or white, whichever contrasts more with its cell; a loading
    beyond ±1 is outlined, marked ``!`` and shown uncapped (the colour scale stops at ±1).
    ``labels`` maps row ids to display names.
    """
    panels = [("Raw scores", raw)] + ([("Date-adjusted", adjusted)] if adjusted is not None else [])
    fig = Figure(figsize=(3.2 * len(panels) + 1.0, 0.35 * len(raw) + 1.5))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    image = None
    names = [str((labels or {}).get(str(r), r)) for r in raw.index]
    for ax, (title, frame) in zip(axes, panels, strict=True):
        values = frame.to_numpy(dtype=float)
        image = ax.imshow(values, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        for (i, j), v in np.ndenumerate(values):
            beyond = bool(np.isfinite(v) and abs(v) > 1)
            colour = text_color_on(image.cmap(image.norm(v))) if np.isfinite(v) else "black"
            ax.text(j, i, f"{v:.2f}{'!' if beyond else ''}", ha="center", va="center", fontsize=7, color=colour,
                    fontweight="bold" if beyond else "normal")  # fmt: skip
            if beyond:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#ffb000", lw=2))
        ax.set_xticks(range(values.shape[1]), [str(c) for c in frame.columns])
        ax.set_yticks(range(values.shape[0]), names if frame is raw else [str(r) for r in frame.index])
        ax.set_title(title)
    for ax in axes[1:]:
        ax.set_yticklabels([])
    fig.colorbar(image, ax=list(axes), label="loading (scale capped at ±1)", shrink=0.8)
    return fig


def plot_score_vs_date(scores: Any, release_date: Any, *, label: str = "First-factor score") -> Figure:
    """Factor score against release date with the OLS line and the 4-parameter logistic fit."""
    y = np.asarray(scores, dtype=float)
    dates = pd.to_datetime(pd.Series(np.asarray(release_date)))
    days = (dates - dates.min()).dt.days.to_numpy(dtype=float)
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.scatter(dates, y, s=14, alpha=0.7)
    order = np.argsort(days)
    slope, intercept = np.polyfit(days, y, 1)
    ax.plot(dates.iloc[order], intercept + slope * days[order], color="grey", label="OLS")
    params, r2 = logistic_fit(days, y)
    if np.isfinite(r2):
        t = (days - days.mean()) / days.std()
        ax.plot(dates.iloc[order], logistic4(t[order], *params), color="C3", label=f"logistic (R2 = {r2:.3f})")
    ax.set_xlabel("Release date")
    ax.set_ylabel(label)
    ax.legend(frameon=False)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def plot_dmse_forest(delta: pd.DataFrame, *, baseline: str = "ii") -> Figure:
    """Forest plot of dMSE with 95% intervals per target and pooled.

    ``delta`` is :attr:`PredictionLadder.delta_` (columns baseline, target, dmse, ci_low, ci_high).
    """
    sub = delta[delta["baseline"] == baseline] if "baseline" in delta.columns else delta
    sub = pd.concat([sub[sub["target"] != "pooled"], sub[sub["target"] == "pooled"]])
    y = np.arange(len(sub))[::-1]
    fig = Figure(figsize=(6, 0.5 * len(sub) + 1.5))
    ax = fig.add_subplot()
    err = np.vstack([sub["dmse"] - sub["ci_low"], sub["ci_high"] - sub["dmse"]])
    colours = ["black" if t == "pooled" else "C0" for t in sub["target"]]
    # errorbar takes one colour per call (a list fails when the figure is drawn).
    for colour in dict.fromkeys(colours):
        sel = np.array([c == colour for c in colours])
        ax.errorbar(sub["dmse"].to_numpy()[sel], y[sel], xerr=err[:, sel], fmt="none", ecolor=colour, capsize=3)
    ax.scatter(sub["dmse"], y, c=colours, zorder=3)
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_yticks(y, list(sub["target"]))
    ax.set_xlabel("dMSE (single index - k factors)")
    ax.set_title("k-factor gain over the single index")
    fig.tight_layout()
    return fig
