"""One-sided matrix completion (Cao, Liang & Valiant 2023) as paper 002 uses it (Appendix G.1).

When cells are too sparse to complete, the benchmark-side structure may still be recoverable. The
estimator targets ``Theta = Z'Z / n`` over the models: each product ``z_ij z_ij'`` of two observed
standardised scores in one row estimates ``Theta_jj'``, and ``Theta = V V'`` (``V`` p x r) is fitted
to all such products by squared loss, the off-diagonal and the diagonal terms each averaged over
their own count across rows::

    L(V) = sum_{i, j != j'} (z_ij z_ij' - v_j.v_j')^2 / N_off + sum_{i, j} (z_ij^2 - |v_j|^2)^2 / N_diag

The sums over rows collapse to per-pair statistics (count, sum and sum of squares of the products),
so a fit costs O(p^2 r) per step whatever the number of models. The paper minimises ``L`` with Adam;
here L-BFGS (scipy) from the leading eigenvectors of the pairwise covariance — the same minimiser.
Cells are predicted by the conditional-Gaussian predictor ``z_j = v_j' V_S^+ z_S``, solved in the
r-dimensional factor space. ``correlation_`` (``Theta`` scaled to a unit diagonal) is what the
factor grid factors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from evalhouse.analytics.matrix.impute import Imputer, standardise
from evalhouse.errors import InputError


def product_statistics(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair of columns: how many rows observe both, the sum of the products, the sum of their squares."""
    observed = ~np.isnan(Z)
    z = np.where(observed, Z, 0.0)
    o = observed.astype(float)
    return o.T @ o, z.T @ z, (z * z).T @ (z * z)


def osmc_loss(V: np.ndarray, stats: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[float, np.ndarray]:
    """``L(V)`` of the module docstring and its gradient, from :func:`product_statistics`."""
    N, S, Q = stats
    diag = np.eye(len(N), dtype=bool)
    n_off, n_diag = max(N[~diag].sum(), 1.0), max(np.trace(N), 1.0)
    weight = np.where(diag, 1.0 / n_diag, 1.0 / n_off)
    theta = V @ V.T
    loss = float(np.sum(weight * (N * theta * theta - 2.0 * S * theta + Q)))
    G = weight * (2.0 * N * theta - 2.0 * S)
    return loss, 2.0 * G @ V


def _predict(Z: np.ndarray, V: np.ndarray) -> np.ndarray:
    out = Z.copy()
    missing = np.isnan(Z)
    patterns, inverse = np.unique(missing, axis=0, return_inverse=True)
    for k, pattern in enumerate(patterns):
        if not pattern.any():
            continue
        rows = np.flatnonzero(inverse.ravel() == k)
        seen = ~pattern
        if not seen.any():
            out[np.ix_(rows, pattern)] = 0.0
            continue
        scores = np.linalg.pinv(V[seen]) @ Z[np.ix_(rows, seen)].T  # r x rows
        out[np.ix_(rows, pattern)] = (V[pattern] @ scores).T
    return out


class OneSidedMC(Imputer):
    """One-sided matrix completion: ``Theta = V V'`` fitted to the observed pairwise products.

    Parameters
    ----------
    rank : int
        Columns of ``V`` (paper 002 sweeps 1...10), capped at the number of benchmarks (``rank_``).
    max_iter : int
        L-BFGS iterations at most.
    tol : float
        L-BFGS tolerance on the relative change of the loss.

    Attributes
    ----------
    components_ : ndarray
        ``V`` (p x rank) on the standardised scale.
    covariance_, correlation_ : DataFrame
        ``V V'`` and the same scaled to a unit diagonal.
    loss_ : float
        ``L(V)`` at the solution; ``converged_`` whether L-BFGS reported success.
    """

    def __init__(self, rank: int = 2, *, max_iter: int = 2000, tol: float = 1e-12) -> None:
        self.rank = rank
        self.max_iter = max_iter
        self.tol = tol

    def _fit(self, frame: pd.DataFrame) -> np.ndarray:
        Z, self.mean_, self.scale_ = standardise(frame)
        p = Z.shape[1]
        if int(self.rank) < 1:
            raise InputError(f"rank={self.rank!r} must be >= 1")
        r = self.rank_ = min(int(self.rank), p)  # capped at the number of columns
        stats = product_statistics(Z)
        N, S, _ = stats
        start = np.where(N > 0, S / np.maximum(N, 1.0), 0.0)
        w, vecs = np.linalg.eigh((start + start.T) / 2)
        order = np.argsort(w)[::-1][:r]
        V0 = vecs[:, order] * np.sqrt(np.clip(w[order], 1e-3, None))
        result = minimize(
            lambda v: osmc_loss(v.reshape(p, r), stats),
            V0.ravel(),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": int(self.max_iter), "ftol": float(self.tol), "gtol": 1e-10},
        )
        V = result.x.reshape(p, r)
        self.components_, self.loss_, self.converged_ = V, float(result.fun), bool(result.success)
        theta = V @ V.T
        d = np.sqrt(np.clip(np.diag(theta), 1e-12, None))
        self.covariance_ = pd.DataFrame(theta, index=frame.columns, columns=frame.columns)
        self.correlation_ = pd.DataFrame(theta / np.outer(d, d), index=frame.columns, columns=frame.columns)
        return _predict(Z, V) * self.scale_ + self.mean_

    def _transform(self, frame: pd.DataFrame) -> np.ndarray:
        Z = (frame.to_numpy(dtype=float) - self.mean_) / self.scale_
        return _predict(Z, self.components_) * self.scale_ + self.mean_

    def _diagnostics(self) -> dict[str, Any]:
        return {"loss": self.loss_, "converged": self.converged_, "rank": self.rank_}
