"""Factorability diagnostics and factor-comparison helpers.

KMO and Bartlett follow Kaiser (1974) and Bartlett (1950) as implemented in ``psych::KMO`` /
``psych::cortest.bartlett`` and ``factor_analyzer``; the Bartlett p-value is also returned on a
log10 scale because on strongly correlated batteries it underflows to 0 (paper 000 reports
"p < 1e-300"). Tucker's congruence coefficient compares loading vectors up to scale.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import linear_sum_assignment

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.checks import as_float_frame, check_matrix
from evalhouse.errors import InputError


class BartlettResult(NamedTuple):
    """Bartlett's test of sphericity."""

    statistic: float
    dof: int
    p_value: float
    log10_p_value: float


def _complete_values(X: Any) -> np.ndarray:
    frame = as_float_frame(X)
    frame = frame.dropna()
    check_matrix(frame)
    return frame.to_numpy(dtype=float)


def _inverse(corr: np.ndarray) -> np.ndarray:
    # A singular R has no inverse; the pseudo-inverse is what psych and factor_analyzer fall back to.
    try:
        return np.linalg.inv(corr)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(corr)


def kmo(X: Any) -> tuple[pd.Series, float]:
    """Kaiser-Meyer-Olkin sampling adequacy on the complete rows of ``X``.

    Returns
    -------
    per_item : Series
        MSA of every column.
    overall : float
        Overall KMO.
    """
    frame = as_float_frame(X).dropna()
    values = _complete_values(frame)
    corr = np.corrcoef(values, rowvar=False)
    inv = _inverse(corr)
    d = np.sqrt(np.outer(np.diag(inv), np.diag(inv)))
    partial = -inv / d
    off = ~np.eye(corr.shape[0], dtype=bool)
    r2 = np.where(off, corr**2, 0.0)
    a2 = np.where(off, partial**2, 0.0)
    per_item = r2.sum(axis=0) / (r2.sum(axis=0) + a2.sum(axis=0))
    overall = r2.sum() / (r2.sum() + a2.sum())
    return pd.Series(per_item, index=frame.columns), float(overall)


def bartlett_sphericity(X: Any) -> BartlettResult:
    """Bartlett's chi-square test that the correlation matrix of ``X`` is the identity."""
    values = _complete_values(X)
    n, p = values.shape
    corr = np.corrcoef(values, rowvar=False)
    sign, logdet = np.linalg.slogdet(corr)
    if sign <= 0:
        raise InputError("Bartlett's test needs a positive-definite correlation matrix (n > p, no collinear columns)")
    statistic = -(n - 1 - (2 * p + 5) / 6) * logdet
    dof = p * (p - 1) // 2
    log_p = float(stats.chi2.logsf(statistic, dof))
    return BartlettResult(float(statistic), dof, float(np.exp(log_p)), log_p / np.log(10))


def pca_variance_shares(X: Any) -> np.ndarray:
    """Shares of total variance per principal component of the standardised complete rows.

    Equal to the eigenvalues of the Pearson correlation matrix divided by ``p`` (descending),
    which is what ``sklearn.decomposition.PCA`` gives on z-scored data.
    """
    values = _complete_values(X)
    eig = np.linalg.eigvalsh(np.corrcoef(values, rowvar=False))[::-1]
    return np.clip(eig, 0.0, None) / values.shape[1]


def mean_offdiag_spearman(X: Any, *, min_periods: int = 3) -> float:
    """Mean off-diagonal Spearman correlation, each pair over the rows where both are observed.

    Pairwise-complete on purpose: paper 000's rho = 0.79 is this statistic on the 421 retained
    configurations; the same mean on the 96 complete-case rows is 0.819 (its printed matrix).
    """
    frame = as_float_frame(X)
    corr = frame.corr(method="spearman", min_periods=min_periods).to_numpy()
    off = ~np.eye(corr.shape[0], dtype=bool)
    return float(np.nanmean(corr[off]))


def tucker_congruence(a: Any, b: Any) -> Any:
    """Tucker's congruence ``sum(a b) / sqrt(sum(a^2) sum(b^2))``.

    Vectors give a float; matrices (items x factors) give the factors-by-factors matrix of
    congruences between the columns of ``a`` and the columns of ``b``.
    """
    A = np.asarray(a, dtype=float)
    B = np.asarray(b, dtype=float)
    if A.shape[0] != B.shape[0]:
        raise InputError(f"a and b need the same number of items; got {A.shape[0]} and {B.shape[0]}")
    if A.ndim == 1 and B.ndim == 1:
        return float(A @ B / np.sqrt((A @ A) * (B @ B)))
    A2 = A.reshape(A.shape[0], -1)
    B2 = B.reshape(B.shape[0], -1)
    num = A2.T @ B2
    den = np.sqrt(np.outer((A2**2).sum(axis=0), (B2**2).sum(axis=0)))
    return num / den


def match_factors(reference: Any, loadings: Any) -> tuple[np.ndarray, np.ndarray]:
    """Permute and sign-flip the columns of ``loadings`` to best match ``reference``.

    Returns the aligned loadings and the congruence of each aligned column with its
    reference column (Hungarian assignment on absolute congruence).
    """
    ref = np.asarray(reference, dtype=float)
    est = np.asarray(loadings, dtype=float)
    cong = tucker_congruence(ref, est)
    rows, cols = linear_sum_assignment(-np.abs(cong))
    aligned = est[:, cols] * np.sign(cong[rows, cols])
    return aligned, np.abs(cong[rows, cols])


class Factorability(AnalysisEstimator):
    """KMO, Bartlett, PCA shares (complete rows) and mean pairwise Spearman (all rows).

    Attributes
    ----------
    n_complete_ : int
    kmo_ : float
    kmo_per_item_ : Series
    bartlett_ : BartlettResult
    pca_shares_ : ndarray
    mean_spearman_ : float
    """

    kind = "factorability"

    def fit(self, X: Any, y: Any = None) -> Factorability:
        """Compute the diagnostics on ``X`` (missing cells allowed; see each statistic)."""
        self._start()
        frame = as_float_frame(X)
        complete = frame.dropna()
        self.n_complete_ = len(complete)
        self.kmo_per_item_, self.kmo_ = kmo(complete)
        self.bartlett_ = bartlett_sphericity(complete)
        self.pca_shares_ = pca_variance_shares(complete)
        self.mean_spearman_ = mean_offdiag_spearman(frame)
        self._finish(
            X,
            n_complete=self.n_complete_,
            kmo=self.kmo_,
            bartlett_log10_p=self.bartlett_.log10_p_value,
            pc1_share=float(self.pca_shares_[0]),
            mean_spearman=self.mean_spearman_,
        )
        return self
