"""Optimal aggregation weights v* (paper 003, Eq. 1), which the paper leaves as future work.

With improvability M = A C^-1 A' and noise Sigma, a designer with item welfare weights w facing a
lab of risk aversion r publishes s = v'y with v* = (M + r Sigma)^-1 M w, maximising
W(v) = w'Mv - v'Mv/2 - (r/2) v'Sigma v. With per-item proxies the matrices are diagonal:
M_ii = sum_k beta_ik^2 / kappa_k (slopes per unit effort, C = diag(kappa)) and Sigma_ii = sigma2_i,
so v*_i = M_ii w_i / (M_ii + r sigma2_i).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def v_star_diagonal(m: np.ndarray, sigma2: np.ndarray, w: np.ndarray, r: float) -> np.ndarray:
    m, sigma2, w = (np.asarray(v, dtype=float) for v in (m, sigma2, w))
    return m * w / (m + r * sigma2)


def v_star(m: np.ndarray, sigma: np.ndarray, w: np.ndarray, r: float) -> np.ndarray:
    """General v* = (M + r Sigma)^-1 M w for full matrices."""
    m, sigma = np.asarray(m, dtype=float), np.asarray(sigma, dtype=float)
    return np.linalg.solve(m + r * sigma, m @ np.asarray(w, dtype=float))


def welfare(v: np.ndarray, m: np.ndarray, sigma: np.ndarray, w: np.ndarray, r: float) -> float:
    """W(v) = w'Mv - v'Mv/2 - (r/2) v'Sigma v (diagonal M, Sigma may be given as vectors)."""
    v, w = np.asarray(v, dtype=float), np.asarray(w, dtype=float)
    mv = m * v if np.ndim(m) == 1 else m @ v
    sv = sigma * v if np.ndim(sigma) == 1 else sigma @ v
    return float(w @ mv - 0.5 * v @ mv - 0.5 * r * v @ sv)


def improvability_matrix_diagonal(slopes: pd.DataFrame, kappa: dict[str, float]) -> np.ndarray:
    """M_ii = sum_k max(beta_ik, 0)^2 / kappa_k over the axes (a negative slope adds nothing)."""
    total = np.zeros(len(slopes))
    for axis, k in kappa.items():
        beta = slopes[f"slope_{axis.lower()}"].to_numpy(dtype=float)
        total += np.nan_to_num(np.clip(beta, 0, None)) ** 2 / k
    return total


def best_uniform(m: np.ndarray, sigma2: np.ndarray, w: np.ndarray, r: float) -> np.ndarray:
    """The best equal weighting alpha * 1 (a plain average, optimally scaled)."""
    ones = np.ones(len(w))
    alpha = (w @ (m * ones)) / (ones @ (m * ones) + r * ones @ (sigma2 * ones))
    return alpha * ones


def sweep(m: np.ndarray, sigma2: np.ndarray, w: np.ndarray, rs: list[float], *, truth=None) -> pd.DataFrame:
    """For each r: welfare of v* (from ``m, sigma2``) and of the best uniform weights, scored on
    ``truth = (m_true, sigma2_true)`` when given (how well estimated v* recovers the designer's
    welfare) relative to the welfare of the true v*."""
    m_t, s_t = truth if truth is not None else (m, sigma2)
    rows = []
    for r in rs:
        best = welfare(v_star_diagonal(m_t, s_t, w, r), m_t, s_t, w, r)
        est = welfare(v_star_diagonal(m, sigma2, w, r), m_t, s_t, w, r)
        uni = welfare(best_uniform(m, sigma2, w, r), m_t, s_t, w, r)
        rows.append({"r": r, "welfare_true_v_star": best, "welfare_v_star": est, "welfare_uniform": uni,
                     "share_v_star": est / best if best else np.nan,
                     "share_uniform": uni / best if best else np.nan})  # fmt: skip
    return pd.DataFrame(rows)
