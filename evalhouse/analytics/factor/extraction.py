"""Unrotated factor extraction from a correlation matrix: ML (``stats::factanal``) or MINRES.

The objectives, the loadings each solution gives, the L-BFGS-B call and the final sign and order
conventions are factor_analyzer 0.5.1's (``FactorAnalyzer._fit_factor_analysis`` and ``fit``),
written out here so a fit needs neither its ``fit`` (which calls scikit-learn's ``check_array``
with a keyword scikit-learn 1.8 removed) nor a start value it has no parameter for. MINRES is the
same array factor_analyzer computes for the same start. ML is given its analytic gradient, as
R's ``factanal`` gives it (``FAgr``: ``diag(ΛΛ' + Ψ - R) / ψ²``), where factor_analyzer lets
L-BFGS-B difference the objective (p + 1 evaluations per gradient): the same optimum in a fifth
to a tenth of the time, equal to factor_analyzer's within its own convergence (or lower, where
its finite differences stop early) — tests/analytics/factor/test_extraction.py holds both.

Starts (paper 002, Appendix I.1): squared multiple correlations (``smc``), refused like R's
``solve`` refuses a computationally singular matrix, and the retry from a unity diagonal
(``unity``: communalities 1, ``psych::fa(SMC = FALSE)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.optimize import minimize

#: Uniquenesses are bounded as ``factanal`` bounds them.
UNIQUENESS_BOUNDS = (0.005, 1.0)
STARTS = ("smc", "unity")


@dataclass(frozen=True)
class Extraction:
    loadings: np.ndarray  # p x k, factors sorted by their sum of squared loadings
    uniquenesses: np.ndarray  # the optimiser's solution
    converged: bool  # L-BFGS-B's own verdict
    message: str


def strict_smc(corr: np.ndarray) -> np.ndarray:
    """Squared multiple correlations; a computationally singular matrix is refused, as R refuses it."""
    if 1.0 / np.linalg.cond(corr) < np.finfo(float).eps:
        raise np.linalg.LinAlgError("correlation matrix is computationally singular")
    return 1.0 - 1.0 / np.diag(np.linalg.inv(corr))


def start_values(corr: np.ndarray, start: str) -> np.ndarray:
    """Start uniquenesses: ``1 - SMC``, or ``1 - 1`` from a unity diagonal (clipped to the bound)."""
    communalities = strict_smc(corr) if start == "smc" else np.ones(corr.shape[0])
    return (np.diag(corr) - communalities.T).squeeze()


def ml_objective(psi: np.ndarray, corr: np.ndarray, k: int) -> float:
    sc = np.diag(1 / np.sqrt(psi))
    values = np.linalg.eigh(np.dot(np.dot(sc, corr), sc))[0][::-1][k:]
    return -(np.sum(np.log(values) - values) - k + corr.shape[0])


def ml_objective_and_gradient(psi: np.ndarray, corr: np.ndarray, k: int) -> tuple[float, np.ndarray]:
    """:func:`ml_objective` and its gradient in ``psi`` from one eigendecomposition (R's ``FAgr``)."""
    root = np.sqrt(psi)
    values, vectors = np.linalg.eigh(corr / np.outer(root, root))
    values, vectors = values[::-1], vectors[:, ::-1]
    rest = values[k:]
    objective = -(np.sum(np.log(rest) - rest) - k + corr.shape[0])
    loadings = root[:, None] * vectors[:, :k] * np.sqrt(np.maximum(values[:k] - 1, 0))
    return float(objective), (np.sum(loadings**2, axis=1) + psi - np.diag(corr)) / psi**2


def ml_loadings(psi: np.ndarray, corr: np.ndarray, k: int) -> np.ndarray:
    sc = np.diag(1 / np.sqrt(psi))
    values, vectors = np.linalg.eigh(np.dot(np.dot(sc, corr), sc))
    values = np.maximum(values[::-1][:k] - 1, 0)
    loadings = np.dot(vectors[:, ::-1][:, :k], np.diag(np.sqrt(values)))
    return np.dot(np.diag(np.sqrt(psi)), loadings)


def minres_objective(psi: np.ndarray, work: np.ndarray, k: int) -> float:
    """Sum of squared residuals of ``R - diag(psi)`` against its rank-k part (``work``'s diagonal is set)."""
    np.fill_diagonal(work, 1 - psi)
    values, vectors = scipy.linalg.eigh(work)
    values = np.maximum(values[::-1], np.finfo(float).eps * 100)[:k]
    vectors = vectors[:, ::-1][:, :k]
    loadings = np.dot(vectors, np.diag(np.sqrt(values))) if k > 1 else vectors * np.sqrt(values[0])
    return np.sum((work - np.dot(loadings, loadings.T)) ** 2)


def minres_loadings(psi: np.ndarray, work: np.ndarray, k: int) -> np.ndarray:
    np.fill_diagonal(work, 1 - psi)
    values, vectors = np.linalg.eigh(work)
    values = values[::-1][:k]
    return np.dot(vectors[:, ::-1][:, :k], np.diag(np.sqrt(np.maximum(values, 0))))


def extract(corr: np.ndarray, k: int, method: str, start: str) -> Extraction:
    """Fit ``k`` factors to ``corr`` by ``method`` ("ml" or "minres") from ``start``.

    Raises ``numpy.linalg.LinAlgError`` when the SMC start meets a singular matrix (the caller
    retries from a unity diagonal)."""
    work = np.array(corr, dtype=float, copy=True)  # MINRES writes the diagonal of its working copy
    x0 = start_values(work, start)
    if method == "ml":
        objective, jac, loadings_of = ml_objective_and_gradient, True, ml_loadings
    else:
        objective, jac, loadings_of = minres_objective, None, minres_loadings
    res = minimize(
        objective,
        x0,
        jac=jac,
        method="L-BFGS-B",
        bounds=[UNIQUENESS_BOUNDS] * work.shape[0],
        options={"maxiter": 1000},
        args=(work, k),
    )
    loadings = loadings_of(res.x, work, k)
    if k > 1:  # column signs follow the column sums (R's convention), then factors by variance
        signs = np.sign(loadings.sum(0))
        signs[signs == 0] = 1
        loadings = np.dot(loadings, np.diag(signs))
    order = list(reversed(np.argsort(np.sum(loadings**2, axis=0))))
    return Extraction(loadings[:, order].copy(), np.asarray(res.x), bool(res.success), str(res.message))
