"""Figures for characteristic-curve equating: ability over release date, benchmark curves.

Both helpers return a :class:`matplotlib.figure.Figure` built with the object API (no pyplot
state), so callers save or embed it; nothing is shown.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib import dates as mdates
from matplotlib.figure import Figure

from evalhouse.analytics.equate.curves import CharacteristicCurveEquating
from evalhouse.analytics.report.plot_labels import place_labels
from evalhouse.errors import InputError


def plot_theta_by_release(  # noqa: PLR0913 - keyword-only settings of one analysis
    theta: pd.Series,
    release_dates: pd.Series,
    *,
    labels: pd.Series | None = None,
    highlight: Sequence[str] = (),
    frontier: bool = True,
    title: str = "Equated ability by release date",
    se: pd.Series | None = None,
    counts: pd.Series | None = None,
) -> Figure:
    """Scatter of ``θ`` against release date, with the running frontier (best so far).

    Parameters
    ----------
    theta : pd.Series
        Ability per model (NaN rows are skipped).
    release_dates : pd.Series
        Release date per model (anything ``pd.to_datetime`` reads; missing dates skipped).
    labels : pd.Series, optional
        Display names for ``highlight``.
    highlight : sequence of str
        Models to mark and annotate.
    frontier : bool
        Draw the step line of the highest ``θ`` released so far.
    se, counts : pd.Series, optional
        Standard errors (drawn as 90% intervals, ±1.645 SE) and the number of benchmarks behind each
        θ (marker size, and the label of highlighted models).
    """
    dates = pd.to_datetime(release_dates.reindex(theta.index), errors="coerce")
    frame = pd.DataFrame({"theta": theta, "date": dates}).dropna()
    if frame.empty:
        raise InputError("no model has both a finite theta and a release date")
    frame = frame.sort_values("date")
    fig = Figure(figsize=(8, 4.5), constrained_layout=True)
    ax = fig.add_subplot()
    sizes = 12.0
    if counts is not None:
        n = counts.reindex(frame.index).fillna(1).to_numpy(dtype=float)
        sizes = 4.0 + 2.0 * n
    if se is not None:
        half = 1.645 * se.reindex(frame.index).to_numpy(dtype=float)
        ax.errorbar(frame["date"], frame["theta"], yerr=half, fmt="none", ecolor="tab:blue", alpha=0.25, lw=0.8)
    ax.scatter(frame["date"], frame["theta"], s=sizes, alpha=0.6, color="tab:blue", label="models (size: benchmarks)")
    if frontier:
        ax.step(
            frame["date"],
            frame["theta"].cummax(),
            where="post",
            color="tab:red",
            lw=1.5,
            label="frontier (best so far)",
        )
    marked = [m for m in highlight if m in frame.index]
    names = []
    for model in marked:
        name = str(labels.get(model, model)) if labels is not None else str(model)
        if counts is not None and model in counts.index:
            name = f"{name} ({int(counts[model])} benchmarks)"
        names.append(name if len(name) <= 48 else name[:47] + "…")  # long configuration names squeeze the axes
    if marked:
        ax.scatter(frame.loc[marked, "date"], frame.loc[marked, "theta"], s=40, color="black", zorder=3)
        xs = mdates.date2num(frame.loc[marked, "date"])
        placed = place_labels(ax, list(xs), list(frame.loc[marked, "theta"]), names)
        if placed.left_out:
            ax.text(0.99, 0.01, f"{len(placed.left_out)} label(s) left out (no free space)", transform=ax.transAxes,
                    ha="right", va="bottom", fontsize=6, color="0.4")  # fmt: skip
    locator = mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_xlabel("release date")
    ax.set_ylabel("θ (standardised)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def plot_characteristic_curves(
    equating: CharacteristicCurveEquating,
    benchmarks: Sequence[str] | None = None,
    *,
    show_data: bool = True,
    theta_range: tuple[float, float] = (-3.5, 3.5),
    ncols: int = 4,
) -> Figure:
    """One panel per benchmark: fitted curve ``f_i(θ)`` over the observed normalised scores.

    Panel titles carry ``a``, ``b`` and ``σ``; the y axis is the normalised score (see
    ``equating.normalisation_``).
    """
    if not hasattr(equating, "a_"):
        raise InputError("equating is not fitted")
    cols = list(equating.benchmarks_ if benchmarks is None else benchmarks)
    unknown = [b for b in cols if b not in equating.benchmarks_]
    if unknown:
        raise InputError(f"benchmarks not fitted: {unknown}")
    n = len(cols)
    ncols = max(1, min(ncols, n))
    nrows = int(np.ceil(n / ncols))
    fig = Figure(figsize=(3.2 * ncols, 2.6 * nrows), constrained_layout=True)
    grid = np.linspace(*theta_range, 281)
    curves = equating.curve(grid, cols)
    theta = equating.theta_.loc[equating.models_]
    for k, bid in enumerate(cols):
        ax = fig.add_subplot(nrows, ncols, k + 1)
        if show_data:
            s = equating.scores_[bid]
            ok = s.notna()
            ax.scatter(theta[ok], s[ok], s=5, alpha=0.35, color="tab:gray")
        ax.plot(grid, curves[bid].to_numpy(), color="tab:red", lw=1.5)
        ax.set_title(
            f"{bid}\na={equating.a_[bid]:.2f} b={equating.b_[bid]:.2f} σ={equating.sigma_[bid]:.3f}",
            fontsize=8,
        )
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlim(*theta_range)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    fig.supxlabel("θ (standardised ability)")
    fig.supylabel("normalised score")
    return fig


__all__ = ["plot_characteristic_curves", "plot_theta_by_release"]
