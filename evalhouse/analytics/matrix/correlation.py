"""Correlation-level imputation (paper 002): pairwise correlations, filled, repaired, predicted.

Pairwise correlations; the entries of never (or too rarely) co-observed pairs filled with zero, the
mean observed correlation, SoftImpute on the correlation matrix, or USVT (Chatterjee 2015: hard
thresholding of the singular values of the zero-filled matrix at ``(2 + eta) sqrt(p q)``, ``q`` the
observed share, rescaled by ``1/q``); repaired to a correlation matrix by eigenvalue clipping; cells
predicted by the conditional-Gaussian (best linear) predictor ``z_j = Theta_jS Theta_SS^+ z_S``.

The repair's eigenvalue floor is chosen, unless given, by held-out R2 on a mask of the cells the
imputer is fitted on (its training cells only) from :data:`EIG_FLOORS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalhouse.analytics.checks import check_choice
from evalhouse.analytics.matrix.holdout import heldout_score, holdout_mask
from evalhouse.analytics.matrix.impute import Imputer, SoftImpute, standardise

CORRELATION_FILLS = ("zero", "mean", "softimpute", "usvt")
#: Eigenvalue floors of the PSD repair the internal hold-out chooses from.
EIG_FLOORS: tuple[float, ...] = (1e-6, 1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.2)
#: The floor when no training cell can be held out (every column has <= 2 observations).
FALLBACK_FLOOR = 1e-2


def usvt(C: np.ndarray, observed: np.ndarray, *, eta: float = 0.01) -> np.ndarray:
    """Chatterjee's universal singular value thresholding of a matrix with entries in [-1, 1].

    ``Y`` is ``C`` on the ``observed`` entries and 0 elsewhere, ``q`` the observed share; the
    singular values of ``Y`` at least ``(2 + eta) sqrt(n q)`` (``n`` the larger side) are kept and
    the estimate ``U_k S_k V_k' / q`` is clipped to [-1, 1]. With none above the threshold the
    estimate is 0.
    """
    Y = np.where(observed, C, 0.0)
    q = float(observed.mean())
    if q == 0:
        return np.zeros_like(Y)
    u, sv, vt = np.linalg.svd(Y)
    keep = sv >= (2.0 + eta) * np.sqrt(max(Y.shape) * q)
    return np.clip((u[:, keep] * sv[keep]) @ vt[keep] / q, -1.0, 1.0)


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
    fill : {"zero", "mean", "softimpute", "usvt"}
        How correlations of never (or too rarely) co-observed pairs are filled.
    rank : int
        SoftImpute rank when ``fill="softimpute"``.
    min_pairs : int
        Co-observations needed to estimate a pairwise correlation.
    eig_floor : float or None
        Eigenvalue floor of the PSD repair. A pairwise-complete correlation matrix is usually
        indefinite; clipping to ~0 leaves near-null directions that the conditional predictor
        amplifies. None (the default) chooses it from :data:`EIG_FLOORS` by held-out R2 on a
        column-stratified mask of the training cells (the cells ``fit`` is given).
    eta : float
        USVT's threshold constant (paper 002: 0.01).
    random_state : int or None
        Seed of the internal hold-outs (the floor's, SoftImpute's lambda).

    Attributes
    ----------
    correlation_ : DataFrame
        The repaired correlation matrix.
    filled_ : ndarray
        The filled correlation matrix before the repair.
    eig_floor_ : float
        The floor used; ``floor_r2_`` the internal held-out R2 per candidate (None when given).
    n_filled_ : int
        Off-diagonal entries that had to be filled.
    """

    def __init__(
        self,
        fill: str = "zero",
        *,
        rank: int = 5,
        min_pairs: int = 3,
        eig_floor: float | None = None,
        eta: float = 0.01,
        random_state: Any = None,
    ) -> None:
        self.fill = fill
        self.rank = rank
        self.min_pairs = min_pairs
        self.eig_floor = eig_floor
        self.eta = eta
        self.random_state = random_state

    def filled_correlation(self, Z: np.ndarray) -> tuple[np.ndarray, int]:
        """Pairwise correlations of ``Z`` with the gaps filled (before the repair); ``(C, n_filled)``."""
        C = pd.DataFrame(Z).corr(min_periods=int(self.min_pairs)).to_numpy().copy()
        np.fill_diagonal(C, 1.0)
        gaps = np.isnan(C)
        if self.fill == "zero":
            C = np.where(gaps, 0.0, C)
        elif self.fill == "mean":
            off = ~np.eye(len(C), dtype=bool) & ~gaps
            C = np.where(gaps, C[off].mean() if off.any() else 0.0, C)
        elif self.fill == "usvt":
            C = np.where(gaps, usvt(np.nan_to_num(C), ~gaps, eta=float(self.eta)), C)
        elif gaps.any():
            si = SoftImpute(self.rank, center=False, random_state=self.random_state)
            C = si.fit_transform(pd.DataFrame(C)).to_numpy()
        return (C + C.T) / 2, int(gaps.sum())

    def _choose_floor(self, Z: np.ndarray) -> float:
        mask = holdout_mask(Z, random_state=self.random_state)
        if not mask.any():  # every column has <= 2 observations: nothing to hold out
            return FALLBACK_FLOOR
        train = np.where(mask, np.nan, Z)
        C, _ = self.filled_correlation(train)
        r2 = [
            heldout_score(Z, mask, conditional_gaussian_predict(train, repair_correlation(C, eig_floor=f))).r2
            for f in EIG_FLOORS
        ]
        self.floor_r2_ = dict(zip(EIG_FLOORS, r2, strict=True))
        return EIG_FLOORS[int(np.argmax(r2))]

    def _fit(self, frame: pd.DataFrame) -> np.ndarray:
        check_choice("fill", self.fill, CORRELATION_FILLS)
        Z, self.mean_, self.scale_ = standardise(frame)
        self.floor_r2_ = None
        self.eig_floor_ = float(self.eig_floor) if self.eig_floor is not None else self._choose_floor(Z)
        self.filled_, self.n_filled_ = self.filled_correlation(Z)
        theta = repair_correlation(self.filled_, eig_floor=self.eig_floor_)
        self.correlation_ = pd.DataFrame(theta, index=frame.columns, columns=frame.columns)
        return conditional_gaussian_predict(Z, theta) * self.scale_ + self.mean_

    def _transform(self, frame: pd.DataFrame) -> np.ndarray:
        Z = (frame.to_numpy(dtype=float) - self.mean_) / self.scale_
        return conditional_gaussian_predict(Z, self.correlation_.to_numpy()) * self.scale_ + self.mean_

    def _diagnostics(self) -> dict[str, Any]:
        return {"n_filled": self.n_filled_, "eig_floor": self.eig_floor_}
