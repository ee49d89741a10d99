"""Correlation-level imputation (paper 002): pairwise correlations, filled, repaired, predicted.

Pairwise correlations, missing entries filled with zero, the mean observed correlation, or
SoftImpute on the correlation matrix; repaired to a correlation matrix by eigenvalue clipping;
cells predicted by the conditional-Gaussian (best linear) predictor ``z_j = Theta_jS Theta_SS^+ z_S``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalhouse.analytics.checks import check_choice
from evalhouse.analytics.matrix.impute import Imputer, SoftImpute, standardise

CORRELATION_FILLS = ("zero", "mean", "softimpute")


def repair_correlation(C: Any, *, eig_floor: float = 1e-6) -> np.ndarray:
    """Nearest-PSD repair by eigenvalue clipping, rescaled back to a unit diagonal."""
    M = np.asarray(C, dtype=float)
    M = (M + M.T) / 2
    vals, vecs = np.linalg.eigh(M)
    fixed = (vecs * np.maximum(vals, eig_floor)) @ vecs.T
    d = np.sqrt(np.diag(fixed))
    fixed = fixed / np.outer(d, d)
    np.fill_diagonal(fixed, 1.0)
    return (fixed + fixed.T) / 2


def conditional_gaussian_predict(Z: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Fill NaN cells of standardised ``Z`` by ``Theta_jS Theta_SS^+ z_S`` row by row.

    Rows sharing a pattern of observed cells share one set of weights; a row with nothing
    observed gets 0 (the column mean).
    """
    out = Z.copy()
    missing = np.isnan(Z)
    patterns, inverse = np.unique(missing, axis=0, return_inverse=True)
    for g, pattern in enumerate(patterns):
        if not pattern.any():
            continue
        rows = np.flatnonzero(inverse.ravel() == g)
        seen = ~pattern
        if not seen.any():
            out[np.ix_(rows, pattern)] = 0.0
            continue
        weights = theta[np.ix_(pattern, seen)] @ np.linalg.pinv(theta[np.ix_(seen, seen)])
        out[np.ix_(rows, pattern)] = Z[np.ix_(rows, seen)] @ weights.T
    return out


class CorrelationImputer(Imputer):
    """Correlation-level imputation with a conditional-Gaussian cell predictor.

    Parameters
    ----------
    fill : {"zero", "mean", "softimpute"}
        How correlations of never (or too rarely) co-observed pairs are filled.
    rank : int
        SoftImpute rank when ``fill="softimpute"``.
    min_pairs : int
        Co-observations needed to estimate a pairwise correlation.
    eig_floor : float
        Eigenvalue floor of the PSD repair. A pairwise-complete correlation matrix is usually
        indefinite; clipping to ~0 leaves near-null directions that the conditional predictor
        amplifies (held-out R2 of -11 on the AA matrix at 1e-6, 0.55 at 0.01), hence 0.01. It
        can be tuned by held-out R2 like any other parameter.
    random_state : int or None
        Seed of SoftImpute's internal lambda hold-out.

    Attributes
    ----------
    correlation_ : DataFrame
        The repaired correlation matrix.
    n_filled_ : int
        Off-diagonal entries that had to be filled.
    """

    def __init__(
        self,
        fill: str = "zero",
        *,
        rank: int = 5,
        min_pairs: int = 3,
        eig_floor: float = 0.01,
        random_state: Any = None,
    ) -> None:
        self.fill = fill
        self.rank = rank
        self.min_pairs = min_pairs
        self.eig_floor = eig_floor
        self.random_state = random_state

    def _fit(self, frame: pd.DataFrame) -> np.ndarray:
        check_choice("fill", self.fill, CORRELATION_FILLS)
        Z, self.mean_, self.scale_ = standardise(frame)
        C = pd.DataFrame(Z).corr(min_periods=int(self.min_pairs)).to_numpy().copy()
        np.fill_diagonal(C, 1.0)
        gaps = np.isnan(C)
        self.n_filled_ = int(gaps.sum())
        if self.fill == "zero":
            C = np.where(gaps, 0.0, C)
        elif self.fill == "mean":
            off = ~np.eye(len(C), dtype=bool) & ~gaps
            C = np.where(gaps, C[off].mean() if off.any() else 0.0, C)
        elif gaps.any():
            si = SoftImpute(self.rank, center=False, random_state=self.random_state)
            C = si.fit_transform(pd.DataFrame(C)).to_numpy()
        theta = repair_correlation(C, eig_floor=self.eig_floor)
        self.correlation_ = pd.DataFrame(theta, index=frame.columns, columns=frame.columns)
        return conditional_gaussian_predict(Z, theta) * self.scale_ + self.mean_

    def _transform(self, frame: pd.DataFrame) -> np.ndarray:
        Z = (frame.to_numpy(dtype=float) - self.mean_) / self.scale_
        return conditional_gaussian_predict(Z, self.correlation_.to_numpy()) * self.scale_ + self.mean_

    def _diagnostics(self) -> dict[str, Any]:
        return {"n_filled": self.n_filled_}
