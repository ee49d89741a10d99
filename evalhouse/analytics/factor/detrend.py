"""Date adjustment of a benchmark battery and date fits of factor scores (paper 000, H2).

Each standardised benchmark is regressed by OLS on release date (days since the earliest date;
optionally also log training compute) and the factor model is refitted on the residuals. This
removes from the covariance the rank-one component along the date direction (paper 000,
Appendix D); the change in the unrotated first-factor share ``s1`` measures how much of the
general factor is a date trend.

"Logistic-fit R2": paper 000 does not state the form. The one that reproduces its numbers is
a four-parameter logistic curve of the score on (standardised) date,
``y = a + (b - a) / (1 + exp(-c (t - d)))``, fitted by nonlinear least squares, with
``R2 = 1 - SSE / SST`` of the fitted values: it gives 0.505 / 0.364 / 0.286 on the three
oblique first-factor scores of the 96-model grid, exactly the values in the paper and its
repository (OLS: 0.477). A three-parameter curve with the floor fixed at the minimum gives
0.505 / 0.358 / 0.281 and a two-parameter curve on min-max scaled scores 0.498, so neither
is what was run.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeWarning, curve_fit

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.checks import as_float_frame, check_choice, check_matrix
from evalhouse.analytics.factor.efa import EFA, METHODS, ROTATIONS
from evalhouse.errors import InputError


def _days(dates: Any, n: int) -> np.ndarray:
    series = pd.Series(pd.to_datetime(pd.Series(np.asarray(dates)), errors="coerce"))
    if len(series) != n:
        raise InputError(f"release dates have {len(series)} entries; X has {n} rows")
    if series.isna().any():
        raise InputError(f"{int(series.isna().sum())} rows have no release date; drop them first")
    return ((series - series.min()).dt.days).to_numpy(dtype=float)


def residualize(X: Any, release_date: Any, log_compute: Any = None, *, standardize: bool = True) -> pd.DataFrame:
    """Per-column OLS residuals of ``X`` on release date (and optionally log compute).

    Parameters
    ----------
    X : DataFrame or array
        Complete wide matrix.
    release_date : sequence of dates aligned with the rows of ``X``.
    log_compute : sequence of float, optional
        Second regressor (paper 000's compute subsample).
    standardize : bool
        z-score the columns (ddof = 0) before regressing, as the paper does.
    """
    frame = as_float_frame(X)
    check_matrix(frame)
    n = frame.shape[0]
    design = [np.ones(n), _days(release_date, n)]
    if log_compute is not None:
        lc = np.asarray(log_compute, dtype=float)
        if lc.shape != (n,) or not np.isfinite(lc).all():
            raise InputError("log_compute must be finite and aligned with the rows of X")
        design.append(lc)
    D = np.column_stack(design)
    Y = frame.to_numpy(dtype=float)
    if standardize:
        Y = (Y - Y.mean(axis=0)) / Y.std(axis=0)
    beta, *_ = np.linalg.lstsq(D, Y, rcond=None)
    return pd.DataFrame(Y - D @ beta, index=frame.index, columns=frame.columns)


def ols_r2(x: np.ndarray, y: np.ndarray) -> float:
    """R2 of the OLS line of ``y`` on ``x``."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return float(np.corrcoef(x, y)[0, 1] ** 2)


def logistic4(t: np.ndarray, a: float, b: float, c: float, d: float) -> np.ndarray:
    """Four-parameter logistic ``a + (b - a) / (1 + exp(-c (t - d)))``."""
    return a + (b - a) / (1.0 + np.exp(-c * (t - d)))


def logistic_fit(x: Any, y: Any) -> tuple[np.ndarray, float]:
    """Four-parameter logistic fit of ``y`` on ``x`` by nonlinear least squares.

    ``x`` is standardised internally; returns ``(params, r2)`` with params ``(a, b, c, d)`` on
    that scale. Several starts are tried (rising and falling curves); if none converges, the
    R2 is NaN.
    """
    xv = np.asarray(x, dtype=float)
    yv = np.asarray(y, dtype=float)
    t = (xv - xv.mean()) / xv.std()
    sst = float(((yv - yv.mean()) ** 2).sum())
    best: tuple[np.ndarray, float] = (np.full(4, np.nan), float("nan"))
    lo, hi = float(yv.min()), float(yv.max())
    for c0 in (1.0, -1.0, 3.0, -3.0):
        for d0 in (0.0, -1.0, 1.0):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", OptimizeWarning)
                    params, _ = curve_fit(logistic4, t, yv, p0=[lo, hi, c0, d0], maxfev=20000)
            except RuntimeError:
                # curve_fit signals non-convergence with RuntimeError; try the next start.
                continue
            r2 = 1.0 - float(((yv - logistic4(t, *params)) ** 2).sum()) / sst
            if np.isfinite(r2) and not r2 <= best[1]:
                best = (params, r2)
    return best


def date_r2(scores: Any, release_date: Any) -> pd.DataFrame:
    """OLS and four-parameter-logistic R2 of each score column on release date."""
    frame = as_float_frame(scores)
    days = _days(release_date, frame.shape[0])
    rows = []
    for col in frame.columns:
        y = frame[col].to_numpy(dtype=float)
        rows.append({"factor": col, "ols_r2": ols_r2(days, y), "logistic_r2": logistic_fit(days, y)[1]})
    return pd.DataFrame(rows).set_index("factor")


class DateAdjustment(AnalysisEstimator):
    """Refit the factor model on date residuals and measure the change in ``s1``.

    Parameters
    ----------
    n_factors, method, rotation : see :class:`EFA`
        The model refitted on raw and residualised scores (paper 000: 3, ``ml``, ``oblimin``).

    Attributes
    ----------
    residuals_ : DataFrame
    efa_raw_, efa_adjusted_ : EFA
    s1_raw_, s1_adjusted_ : float
    s1_drop_ : float
        ``s1_raw_ - s1_adjusted_`` (positive = date explains part of the general factor).
    benchmark_date_r2_ : Series
        OLS R2 of each standardised benchmark on date.
    score_date_r2_ : DataFrame
        OLS and logistic R2 of the raw solution's oblique scores on date, per factor.
    """

    kind = "date_adjustment"

    def __init__(self, n_factors: int = 3, *, method: str = "ml", rotation: str = "oblimin") -> None:
        self.n_factors = n_factors
        self.method = method
        self.rotation = rotation

    def fit(self, X: Any, release_date: Any, log_compute: Any = None) -> DateAdjustment:
        """Fit raw and date-adjusted models on complete ``X`` with aligned ``release_date``."""
        self._start()
        check_choice("method", self.method, METHODS)
        check_choice("rotation", self.rotation, ROTATIONS)
        frame = as_float_frame(X)
        check_matrix(frame)
        dates = pd.to_datetime(pd.Series(np.asarray(release_date)), errors="coerce")
        z = (frame - frame.mean()) / frame.std(ddof=0)
        self.residuals_ = residualize(frame, dates, log_compute)
        days = _days(dates, frame.shape[0])
        self.benchmark_date_r2_ = pd.Series({c: ols_r2(days, z[c].to_numpy()) for c in z.columns})
        params = {"method": self.method, "rotation": self.rotation, "score_form": "oblique"}
        self.efa_raw_ = EFA(self.n_factors, **params).fit(z)
        self.efa_adjusted_ = EFA(self.n_factors, **params).fit(self.residuals_)
        self.s1_raw_ = self.efa_raw_.s1_
        self.s1_adjusted_ = self.efa_adjusted_.s1_
        self.s1_drop_ = self.s1_raw_ - self.s1_adjusted_
        self.score_date_r2_ = date_r2(self.efa_raw_.transform(z), dates)
        self._finish(
            X,
            s1_raw=self.s1_raw_,
            s1_adjusted=self.s1_adjusted_,
            compute=log_compute is not None,
        )
        return self
