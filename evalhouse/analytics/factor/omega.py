"""Schmid-Leiman transformation and McDonald's omega, following ``psych::schmid`` / ``psych::omega``.

Given oblique first-order pattern loadings ``Lambda`` (p x k) and factor correlations ``Phi``:

* second-order loadings ``gamma`` of the first-order factors on g: a one-factor MINRES fit of
  ``Phi`` for k >= 3; for k = 2 the model is not identified and psych's default
  ``option = "equal"`` sets both to ``sqrt(phi_12)``; for k = 1 the factor is g itself;
* g loadings ``Lambda gamma`` and group loadings ``Lambda diag(sqrt(1 - gamma^2))``;
* ``omega_h = (sum g)^2 / Vt`` and ``omega_total = (Vt - sum u2) / Vt`` with ``Vt`` the sum of
  all elements of the correlation matrix and ``u2 = 1 - h2`` from the Schmid-Leiman loadings.

No sign flipping (``flip = FALSE``): items with negative g loadings reduce ``sum g``, as in
paper 002. First-order variance per factor is ``diag(Phi Lambda' Lambda)`` (psych's "SS
loadings" for oblique solutions; they add up to the total communality), and AVE is the
cumulative proportion divided by k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.checks import check_choice
from evalhouse.analytics.factor.efa import EFA, METHODS
from evalhouse.errors import InputError

OBLIQUE_ROTATIONS = ("oblimin", "promax")


@dataclass(frozen=True)
class OmegaResult:
    """A Schmid-Leiman solution and the omega coefficients derived from it."""

    sl_loadings: pd.DataFrame
    second_order: pd.Series
    omega_h: float
    omega_total: float
    ecv: float
    variance: pd.Series
    proportions: pd.Series
    cumulative: float
    ave: float
    phi_mean_offdiag: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary."""
        return {
            "omega_h": self.omega_h,
            "omega_total": self.omega_total,
            "ecv": self.ecv,
            "cumulative": self.cumulative,
            "ave": self.ave,
            "phi_mean_offdiag": self.phi_mean_offdiag,
            "proportions": self.proportions.tolist(),
            "second_order": self.second_order.tolist(),
            "sl_loadings": self.sl_loadings.to_numpy().tolist(),
        }


def _second_order(phi: np.ndarray) -> np.ndarray:
    k = phi.shape[0]
    if k == 1:
        return np.ones(1)
    if k == 2:
        return np.full(2, np.sqrt(max(phi[0, 1], 0.0)))
    second = EFA(1, method="minres", rotation="none").fit_correlation(phi)
    return second.loadings_.to_numpy()[:, 0]


def schmid_leiman(loadings: Any, phi: Any, corr: Any = None) -> OmegaResult:
    """Schmid-Leiman loadings and omega from an oblique solution.

    Parameters
    ----------
    loadings : DataFrame or array (items x factors)
        First-order pattern loadings.
    phi : DataFrame or array (factors x factors)
        Factor correlations.
    corr : DataFrame or array, optional
        Correlation matrix analysed; ``Vt`` is its element sum. Without it the model-implied
        matrix (unit diagonal) is used.
    """
    L = np.asarray(loadings, dtype=float)
    P = np.asarray(phi, dtype=float)
    if L.ndim != 2 or P.shape != (L.shape[1], L.shape[1]):
        raise InputError(f"phi must be {L.shape[1]} x {L.shape[1]} for loadings of shape {L.shape}")
    items = list(loadings.index) if isinstance(loadings, pd.DataFrame) else [f"x{j}" for j in range(len(L))]
    k = L.shape[1]
    gamma = np.clip(_second_order(P), -1.0, 1.0)
    g = L @ gamma
    # A second-order Heywood case (|gamma| = 1) leaves that group factor no variance.
    groups = L * np.sqrt(np.clip(1.0 - gamma**2, 0.0, None)) if k > 1 else np.empty((len(L), 0))
    sl = np.column_stack([g, groups])
    h2 = (sl**2).sum(axis=1)
    if corr is None:
        R = L @ P @ L.T
        np.fill_diagonal(R, 1.0)
    else:
        R = np.asarray(corr, dtype=float)
    vt = float(R.sum())
    variance = np.diag(P @ L.T @ L)
    p = L.shape[0]
    off = ~np.eye(k, dtype=bool)
    names = [f"F{m + 1}" for m in range(k)]
    return OmegaResult(
        sl_loadings=pd.DataFrame(sl, index=items, columns=["g", *[f"G{m + 1}" for m in range(groups.shape[1])]]),
        second_order=pd.Series(gamma, index=names),
        omega_h=float(g.sum() ** 2 / vt),
        omega_total=float((vt - (1.0 - h2).sum()) / vt),
        ecv=float((g**2).sum() / h2.sum()),
        variance=pd.Series(variance, index=names),
        proportions=pd.Series(variance / p, index=names),
        cumulative=float(variance.sum() / p),
        ave=float(variance.sum() / p / k),
        phi_mean_offdiag=float(P[off].mean()) if k > 1 else float("nan"),
    )


class Omega(AnalysisEstimator):
    """Oblique EFA followed by the Schmid-Leiman transformation.

    Parameters
    ----------
    n_factors : int
        First-order factors.
    method : {"ml", "minres"}
    rotation : {"oblimin", "promax"}

    Attributes
    ----------
    efa_ : EFA
    result_ : OmegaResult
    omega_h_, omega_total_ : float
    sl_loadings_ : DataFrame
    """

    kind = "omega"

    def __init__(self, n_factors: int = 3, *, method: str = "minres", rotation: str = "oblimin") -> None:
        self.n_factors = n_factors
        self.method = method
        self.rotation = rotation

    def fit(self, X: Any, y: Any = None) -> Omega:
        """Fit the first-order EFA on complete ``X`` and transform it."""
        self._start()
        check_choice("method", self.method, METHODS)
        check_choice("rotation", self.rotation, OBLIQUE_ROTATIONS)
        self.efa_ = EFA(self.n_factors, method=self.method, rotation=self.rotation).fit(X)
        self.result_ = schmid_leiman(self.efa_.loadings_, self.efa_.phi_, self.efa_.correlation_)
        self.omega_h_ = self.result_.omega_h
        self.omega_total_ = self.result_.omega_total
        self.sl_loadings_ = self.result_.sl_loadings
        self._finish(X, omega_h=self.omega_h_, omega_total=self.omega_total_, ave=self.result_.ave)
        return self
