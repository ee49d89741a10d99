"""Greedy densifiers of a sparse models x benchmarks matrix (paper 002, section 2.1, Appendix F).

* ``C`` (column-primary): while density < tau, drop the benchmark with the fewest observations
  among the kept models, then any model left with none.
* ``R`` (row-primary): the same with models and benchmarks swapped.
* ``S`` (symmetric): drop whichever single row or column has the lowest fill rate
  (observations / current size of the other axis), then clear emptied rows and columns.
* ``raw``: no peel and no floor - the matrix as collapsed (paper 002's "raw" rows of Table 2 keep
  every model and benchmark), through the degenerate-column guard only.

For C, R and S a minimum-observation floor (default 3) is iterated to a fixed point, because dropping a
sparse row can starve a column and vice versa, and a guard drops columns with fewer than two
observations or zero variance among their observed values (what the estimators would drop at
runtime). Rows the guard leaves empty are dropped too. Ties are broken by position (the first
row or column in the current order); on an exact S tie between a row and a column rate the
column goes (the paper does not say).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.checks import as_float_frame, check_choice
from evalhouse.errors import InputError

DENSIFIERS = ("raw", "C", "R", "S")


def _peel(mask: np.ndarray, method: str, target: float) -> tuple[np.ndarray, np.ndarray]:
    rows = mask.any(axis=1)
    cols = mask.any(axis=0)
    while rows.any() and cols.any():
        sub = mask[np.ix_(rows, cols)]
        if sub.mean() >= target:
            break
        row_idx, col_idx = np.flatnonzero(rows), np.flatnonzero(cols)
        col_obs, row_obs = sub.sum(axis=0), sub.sum(axis=1)
        if method == "C":
            cols[col_idx[np.argmin(col_obs)]] = False
        elif method == "R":
            rows[row_idx[np.argmin(row_obs)]] = False
        else:
            col_rate, row_rate = col_obs / len(row_idx), row_obs / len(col_idx)
            if col_rate.min() <= row_rate.min():
                cols[col_idx[np.argmin(col_rate)]] = False
            else:
                rows[row_idx[np.argmin(row_rate)]] = False
        # Clear emptied rows and columns on both axes (C and R only ever empty the other axis).
        sub_mask = mask & rows[:, None] & cols[None, :]
        rows &= sub_mask.any(axis=1)
        cols &= sub_mask.any(axis=0)
    return rows, cols


def _floor(mask: np.ndarray, rows: np.ndarray, cols: np.ndarray, min_obs: int) -> None:
    while True:
        sub = mask & rows[:, None] & cols[None, :]
        drop_rows = rows & (sub.sum(axis=1) < min_obs)
        drop_cols = cols & (sub.sum(axis=0) < min_obs)
        if not drop_rows.any() and not drop_cols.any():
            return
        rows &= ~drop_rows
        cols &= ~drop_cols


def densify(X: Any, method: str = "C", *, target_density: float = 0.10, min_obs: int = 3) -> pd.DataFrame:
    """Return the densified submatrix of ``X`` (see the module docstring)."""
    return Densifier(method, target_density=target_density, min_obs=min_obs).fit(X).transform(X)


class Densifier(AnalysisEstimator):
    """Select a denser submatrix of a sparse wide matrix.

    Parameters
    ----------
    method : {"raw", "C", "R", "S"}
    target_density : float
        Peeling stops once the observed share of cells reaches this value.
    min_obs : int
        Minimum observations per kept row and column, iterated to a fixed point.

    Attributes
    ----------
    rows_, columns_ : Index
        Kept models and benchmarks, in input order.
    density_ : float
        Observed share of the kept submatrix.
    """

    kind = "densify"

    def __init__(self, method: str = "C", *, target_density: float = 0.10, min_obs: int = 3) -> None:
        self.method = method
        self.target_density = target_density
        self.min_obs = min_obs

    def fit(self, X: Any, y: Any = None) -> Densifier:
        """Choose the rows and columns to keep."""
        self._start()
        check_choice("method", self.method, DENSIFIERS)
        if not 0 < self.target_density <= 1:
            raise InputError(f"target_density={self.target_density!r} must be in (0, 1]")
        frame = as_float_frame(X)
        values = frame.to_numpy(dtype=float)
        mask = ~np.isnan(values)
        if self.method == "raw":
            rows, cols = mask.any(axis=1), mask.any(axis=0)
        else:
            rows, cols = _peel(mask, self.method, self.target_density)
            _floor(mask, rows, cols, int(self.min_obs))
        # Degenerate-column guard: < 2 observations or zero variance among observed values.
        for j in np.flatnonzero(cols):
            observed = values[rows & mask[:, j], j]
            if observed.size < 2 or np.ptp(observed) == 0:
                cols[j] = False
        rows &= (mask & cols[None, :]).any(axis=1)
        if not rows.any() or not cols.any():
            raise InputError(f"densifier {self.method} left an empty matrix from shape {frame.shape}")
        self.rows_ = frame.index[rows]
        self.columns_ = frame.columns[cols]
        self.density_ = float(mask[np.ix_(rows, cols)].mean())
        self._finish(X, shape=[int(rows.sum()), int(cols.sum())], density=self.density_)
        return self

    def transform(self, X: Any) -> pd.DataFrame:
        """The kept submatrix of ``X``."""
        return as_float_frame(X).loc[self.rows_, self.columns_]
