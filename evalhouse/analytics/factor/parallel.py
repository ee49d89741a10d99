"""Horn's parallel analysis, principal-component flavour, vectorised.

Observed eigenvalues of the Pearson correlation matrix are compared position by position with
the ``percentile``-th percentile of the eigenvalues of correlation matrices of independent
standard-normal ``n x p`` data. The simulations are drawn in chunks of shape
``(chunk, n, p)``: centred, scaled to unit column norm so that ``Z'Z`` is the correlation matrix,
multiplied as one batched matmul and decomposed by one batched ``eigvalsh``. A chunk holds at
most ``max_chunk_mb`` of normals, so memory stays bounded for any ``n_simulations``. The draws
consume the generator exactly as a per-simulation loop would, so both give the same numbers.

Paper 000 used 2,000 simulations at 96 x 12 (cut-offs about 1.79 and 1.57); paper 002 used 100
with the bounds in :func:`bounded_n_factors`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.checks import as_float_frame, check_choice, check_matrix
from evalhouse.errors import InputError

COUNT_RULES = ("leading", "count")


def simulate_eigenvalues(
    n_samples: int,
    n_features: int,
    n_simulations: int,
    *,
    random_state: Any = None,
    max_chunk_mb: float = 16.0,
) -> np.ndarray:
    """Descending correlation eigenvalues of ``n_simulations`` random normal matrices.

    Returns an array of shape ``(n_simulations, n_features)``.
    """
    if n_samples < 3 or n_features < 2 or n_simulations < 1:
        raise InputError("need n_samples >= 3, n_features >= 2 and n_simulations >= 1")
    rng = np.random.default_rng(random_state)
    out = np.empty((n_simulations, n_features))
    per_sim = 8 * n_samples * n_features
    chunk = int(max(1, min(n_simulations, max_chunk_mb * 2**20 // per_sim)))
    for start in range(0, n_simulations, chunk):
        size = min(chunk, n_simulations - start)
        z = rng.standard_normal((size, n_samples, n_features))
        z -= z.mean(axis=1, keepdims=True)
        z /= np.sqrt(np.einsum("snp,snp->sp", z, z))[:, None, :]
        corr = np.matmul(z.transpose(0, 2, 1), z)
        out[start : start + size] = np.linalg.eigvalsh(corr)[:, ::-1]
    return out


def simulate_eigenvalues_loop(
    n_samples: int, n_features: int, n_simulations: int, *, random_state: Any = None
) -> np.ndarray:
    """Reference implementation: one ``corrcoef`` + ``eigvalsh`` per simulation.

    Kept for tests and ``benchmarks/factor.py``; same draws as :func:`simulate_eigenvalues`.
    """
    rng = np.random.default_rng(random_state)
    out = np.empty((n_simulations, n_features))
    for i in range(n_simulations):
        data = rng.standard_normal((n_samples, n_features))
        out[i] = np.linalg.eigvalsh(np.corrcoef(data, rowvar=False))[::-1]
    return out


def count_factors(observed: np.ndarray, thresholds: np.ndarray, rule: str = "leading") -> int:
    """Number of factors retained: all positions above the cut-off, or the leading run."""
    check_choice("count_rule", rule, COUNT_RULES)
    above = np.asarray(observed) > np.asarray(thresholds)
    if rule == "count":
        return int(above.sum())
    return int(np.argmin(above)) if not above.all() else len(above)


def bounded_n_factors(
    n_parallel: int,
    *,
    n_samples: int,
    n_features: int,
    rank: int,
    min_factors: int = 2,
    max_factors: int = 20,
) -> int:
    """Paper-002 factor count: at least ``min_factors``, at most ``max_factors`` and
    ``min(p - 1, n - 1, rank(R) - 1)``; never below 1."""
    k = max(int(n_parallel), min_factors)
    k = min(k, max_factors, n_features - 1, n_samples - 1, rank - 1)
    return max(k, 1)


class ParallelAnalysis(AnalysisEstimator):
    """Horn parallel analysis (PC flavour) with a seeded, vectorised simulation.

    Parameters
    ----------
    n_simulations : int
        Random matrices drawn (2000 in paper 000, 100 in paper 002).
    percentile : float
        Percentile of the simulated eigenvalues used as the cut-off.
    random_state : int, numpy Generator or None
        Seed of the simulation.
    count_rule : {"leading", "count"}
        ``"leading"`` retains factors up to the first position that fails its cut-off (Horn;
        ``psych::fa.parallel``). ``"count"`` counts every position above its cut-off, the
        formula both papers print; on pure noise it retains a spurious factor far more often
        than 5% (about half of 300 x 10 noise matrices in our check), because each of the p
        positions gets its own 5% chance. On paper 000's data both rules give 1.
    max_chunk_mb : float
        Memory bound of one batch of simulated normals.

    Attributes
    ----------
    observed_ : ndarray
        Descending eigenvalues of the observed correlation matrix.
    simulated_ : ndarray
        Simulated eigenvalues, shape ``(n_simulations, p)``.
    thresholds_ : ndarray
        Cut-offs per position.
    n_factors_ : int
        Factors retained.
    """

    kind = "parallel_analysis"

    def __init__(
        self,
        n_simulations: int = 2000,
        *,
        percentile: float = 95.0,
        random_state: Any = None,
        count_rule: str = "leading",
        max_chunk_mb: float = 16.0,
    ) -> None:
        self.n_simulations = n_simulations
        self.percentile = percentile
        self.random_state = random_state
        self.count_rule = count_rule
        self.max_chunk_mb = max_chunk_mb

    def _check_params(self) -> None:
        check_choice("count_rule", self.count_rule, COUNT_RULES)
        if not 0 < self.percentile < 100:
            raise InputError(f"percentile={self.percentile!r} must be in (0, 100)")
        if int(self.n_simulations) < 1:
            raise InputError(f"n_simulations={self.n_simulations!r} must be >= 1")

    def fit(self, X: Any, y: Any = None) -> ParallelAnalysis:
        """Compare the eigenvalues of complete ``X`` with the simulated cut-offs."""
        self._start()
        self._check_params()
        frame = as_float_frame(X)
        check_matrix(frame)
        corr = np.corrcoef(frame.to_numpy(dtype=float), rowvar=False)
        self._fit_observed(np.linalg.eigvalsh(corr)[::-1], frame.shape[0], list(frame.columns))
        self._finish(X, n_factors=self.n_factors_, thresholds=self.thresholds_[:5].tolist())
        return self

    def fit_correlation(self, corr: Any, n_samples: int) -> ParallelAnalysis:
        """Same test for a correlation matrix (e.g. a completed correlation-level imputation)."""
        self._start()
        self._check_params()
        R = np.asarray(corr, dtype=float)
        if R.ndim != 2 or R.shape[0] != R.shape[1]:
            raise InputError("corr must be a square matrix")
        names = list(corr.columns) if isinstance(corr, pd.DataFrame) else None
        self._fit_observed(np.linalg.eigvalsh((R + R.T) / 2)[::-1], int(n_samples), names)
        self._finish(R, n_factors=self.n_factors_, thresholds=self.thresholds_[:5].tolist())
        return self

    def _fit_observed(self, observed: np.ndarray, n: int, names: list[Any] | None) -> None:
        p = len(observed)
        self.simulated_ = simulate_eigenvalues(
            n, p, int(self.n_simulations), random_state=self.random_state, max_chunk_mb=self.max_chunk_mb
        )
        self.observed_ = observed
        self.thresholds_ = np.percentile(self.simulated_, self.percentile, axis=0)
        self.n_factors_ = count_factors(observed, self.thresholds_, self.count_rule)
        self.n_samples_ = n
        self.feature_names_ = names
