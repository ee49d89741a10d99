"""Log-scaled axes that survive zeros: what cannot be drawn on a log scale is left out and said so.

matplotlib refuses to draw a log axis over no positive value (``ValueError: Data cannot be
log-scaled``), and a figure of item costs where every item was excluded, or every cost is 0, is
exactly that. Every log axis of the report goes through :func:`log_axis`: the points a log scale
cannot show (zero, negative, missing or infinite) are dropped from the plot and counted, the
count is written in the figure, and with nothing left the axis stays linear with a note in place
of the points. A test checks that no other module of evalhouse sets a log scale.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes


def loggable(values: pd.Series) -> pd.Series:
    """Which values a log axis can show: finite and above 0."""
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    return pd.Series(np.isfinite(numbers) & (numbers > 0), index=values.index)


def log_note(shown: int, skipped: int, what: str) -> str:
    """What a log axis of ``shown`` drawn and ``skipped`` left-out points says ("" when all are drawn)."""
    note = f"{skipped:,} {what} with a zero, negative or missing value not shown (log scale)" if skipped else ""
    if not shown:
        return f"nothing to draw on a log scale: no {what} with a positive value" + (f"; {note}" if note else "")
    return note


def log_axis(ax: Axes, axis: str, shown: int, skipped: int, what: str) -> str:
    """Put ``axis`` ("x" or "y") of ``ax`` on a log scale when ``shown`` points are drawn, and write
    in the figure how many were ``skipped``; with nothing to show, leave it linear and say so.
    Returns the note (:func:`log_note`; "" when every point is drawn), for the caption."""
    note = log_note(shown, skipped, what)
    if shown:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
        if note:
            ax.text(0.01, 0.99, note, transform=ax.transAxes, ha="left", va="top", fontsize=7, color="#555")
    else:
        ax.text(0.5, 0.5, note, transform=ax.transAxes, ha="center", va="center", fontsize=8, wrap=True)
    return note
