"""A capabilities index on Epoch's scale: a joint 2PL fit of models and benchmarks, with CIs.

Model (Epoch's published method): ``p(m, b) = σ(α_b (C_m − D_b))`` on baseline-normalised
proportions (:mod:`evalhouse.analytics.equate.eci_data`), fitted by regularised least squares,
Winogrande fixed at ``D = 0, α = 1``, then rescaled linearly so two anchor models read 130 and 150.

Two objectives share one vectorised loss and gradient (``bincount`` over cells):

* ``objective="epoch"`` — Epoch's plain objective as published: squared error plus a fixed ridge
  ``λ (Σ C² + Σ D² + Σ (log α)²)`` shrinking difficulties to 0 and slopes to 1.
* ``objective="cv"`` (the default) — the same ridge, but its weights for abilities and for items are
  chosen separately by 3-fold cross-validation over cells inside the training data (never on the
  cells that are scored);
* ``objective="cv_hierarchical"`` — as ``cv``, with difficulties and log-slopes shrunk to their own
  estimated means instead of 0 and 1 (hierarchical shrinkage). On the 2025-11 hub export it scores
  a higher held-out RMSE than ``cv``, so ``cv`` is the default (``analyze eci`` prints all three).

The fit is Levenberg-Marquardt on the normal equations (assembled from the cells with ``np.bincount``)
until no ability moves by more than ``xtol`` in a step; ``iterations_`` and ``final_change_`` (the largest
change of any C over the last step, in ECI points) are reported. CIs come from a
bootstrap over observation cells (``n_bootstrap`` resamples, seeded, warm-started, re-anchored).
The EDI of a benchmark is its difficulty ``D`` on the ECI scale; ``slope`` is ``α`` per ECI point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_limits

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.checks import check_choice
from evalhouse.errors import InputError, RunFailed

OBJECTIVES: tuple[str, ...] = ("cv", "cv_hierarchical", "epoch")
LOG_SLOPE_BOUND = float(np.log(20.0))
# (abilities, items) penalty pairs the cross-validation chooses from; Epoch's plain objective is (0.01, 0.01).
LAMBDA_GRID: tuple[tuple[float, float], ...] = tuple(
    (c, i) for c in (0.0003, 0.001, 0.003, 0.01) for i in (0.001, 0.003, 0.01)
)


@dataclass
class Problem:
    """Cells as integer codes: group ``g``, benchmark ``b``, proportion ``p``; the anchor benchmark."""

    g: np.ndarray
    b: np.ndarray
    p: np.ndarray
    n_g: int
    n_b: int
    anchor: int  # benchmark fixed at D = 0, alpha = 1

    def subset(self, idx: np.ndarray) -> Problem:
        return Problem(self.g[idx], self.b[idx], self.p[idx], self.n_g, self.n_b, self.anchor)


def _unpack(x: np.ndarray, pr: Problem, hierarchical: bool) -> tuple[np.ndarray, ...]:
    C = x[: pr.n_g]
    D = x[pr.n_g : pr.n_g + pr.n_b].copy()
    A = x[pr.n_g + pr.n_b : pr.n_g + 2 * pr.n_b].copy()
    mu = x[pr.n_g + 2 * pr.n_b :] if hierarchical else np.zeros(2)
    D[pr.anchor], A[pr.anchor] = 0.0, 0.0
    return C, D, A, mu


def _free(pr: Problem) -> np.ndarray:
    free = np.ones(pr.n_b, dtype=bool)
    free[pr.anchor] = False
    return free


def _normal_equations(
    x: np.ndarray, pr: Problem, lam: tuple[float, float], hierarchical: bool
) -> tuple[np.ndarray, ...]:
    """Residual vector, gradient ``Jᵀr`` and Gauss-Newton matrix ``JᵀJ``, assembled from the cells.

    Each cell depends on three parameters (``C_g``, ``D_b``, ``log α_b``), so ``JᵀJ`` is built with
    ``np.bincount`` over cells instead of forming the (cells x parameters) Jacobian.
    """
    C, D, A, mu = _unpack(x, pr, hierarchical)
    free = _free(pr)
    alpha = np.exp(A)[pr.b]
    diff = C[pr.g] - D[pr.b]
    s = expit(alpha * diff)
    ds = s * (1.0 - s)
    r = s - pr.p
    n = len(x)
    keep = free[pr.b]
    cols = np.stack([pr.g, pr.n_g + pr.b, pr.n_g + pr.n_b + pr.b], axis=1)
    vals = np.stack([ds * alpha, np.where(keep, -ds * alpha, 0.0), np.where(keep, ds * alpha * diff, 0.0)], axis=1)
    grad = np.bincount(cols.ravel(), (vals * r[:, None]).ravel(), minlength=n)
    flat = (np.repeat(cols, 3, axis=1) * n + np.tile(cols, (1, 3))).ravel()
    outer = (vals[:, :, None] * vals[:, None, :]).reshape(len(r), -1).ravel()
    H = np.bincount(flat, outer, minlength=n * n).reshape(n, n)
    # Penalty rows: sqrt(lc) C, sqrt(li) (D - mu_D), sqrt(li) (A - mu_A) over the free benchmarks.
    lc, li = lam
    ig = np.arange(pr.n_g)
    grad[ig] += lc * C
    H[ig, ig] += lc
    fb = np.flatnonzero(free)
    pen = [r, np.sqrt(lc) * C]
    for offset, values, m, k in ((pr.n_g, D, mu[0], -2), (pr.n_g + pr.n_b, A, mu[1], -1)):
        dev = values[fb] - m
        grad[offset + fb] += li * dev
        H[offset + fb, offset + fb] += li
        if hierarchical:
            grad[k] -= li * dev.sum()
            H[k, k] += li * len(fb)
            H[offset + fb, k] -= li
            H[k, offset + fb] -= li
        pen.append(np.sqrt(li) * dev)
    # The anchor's D and log-alpha are not parameters: pin them.
    for k in (pr.n_g + pr.anchor, pr.n_g + pr.n_b + pr.anchor):
        H[k, :] = H[:, k] = 0.0
        H[k, k] = 1.0
        grad[k] = 0.0
    return np.concatenate(pen), grad, H


def fit_problem(
    pr: Problem,
    lam: tuple[float, float],
    hierarchical: bool,
    *,
    x0: np.ndarray | None = None,
    xtol: float = 1e-10,
    ftol: float = 1e-14,
    max_iter: int = 500,
) -> tuple[np.ndarray, int, float]:
    """Levenberg-Marquardt on the normal equations until no ability C moves by more than ``xtol``
    in a step (or an accepted step lowers the loss by less than ``ftol`` relative).

    Returns ``(x, iterations, largest |ΔC| of the last accepted step)``.
    """
    n = pr.n_g + 2 * pr.n_b + (2 if hierarchical else 0)
    x = np.zeros(n) if x0 is None else x0.copy()
    res, grad, H = _normal_equations(x, pr, lam, hierarchical)
    cost, mu_damp, change = float(res @ res), 1e-3, np.inf
    for it in range(1, max_iter + 1):
        scale = np.maximum(np.diag(H), 1e-12)
        step = -np.linalg.solve(H + mu_damp * np.diag(scale), grad)
        trial = x + step
        # Slopes stay within [1/20, 20] (log scale): a benchmark whose cells a step function separates
        # would otherwise drift towards an infinite slope without changing the fit.
        a0 = pr.n_g + pr.n_b
        trial[a0 : a0 + pr.n_b] = np.clip(trial[a0 : a0 + pr.n_b], -LOG_SLOPE_BOUND, LOG_SLOPE_BOUND)
        step = trial - x
        res_t, grad_t, H_t = _normal_equations(trial, pr, lam, hierarchical)
        cost_t = float(res_t @ res_t)
        if np.isfinite(cost_t) and cost_t <= cost:
            change = float(np.max(np.abs(step[: pr.n_g])))
            drop = (cost - cost_t) / max(cost, 1e-300)
            x, grad, H, cost = trial, grad_t, H_t, cost_t
            mu_damp = max(mu_damp / 10.0, 1e-12)
            if change < xtol or drop < ftol:
                return x, it, change
        else:
            mu_damp *= 10.0
            if mu_damp > 1e12:
                break
    if not np.isfinite(cost):
        raise RunFailed("the ECI fit diverged")
    return x, max_iter, change


def predict(x: np.ndarray, pr: Problem, hierarchical: bool) -> np.ndarray:
    C, D, A, _ = _unpack(x, pr, hierarchical)
    return expit(np.exp(A)[pr.b] * (C[pr.g] - D[pr.b]))


def choose_lambda(
    pr: Problem, hierarchical: bool, grid: tuple[tuple[float, float], ...], random_state: int
) -> tuple[float, float]:
    """The penalty pair with the lowest 3-fold cross-validated cell RMSE on ``pr`` (inner folds only)."""
    folds = list(KFold(3, shuffle=True, random_state=random_state).split(pr.p))
    scores = []
    for lam in grid:
        se = 0.0
        for tr, te in folds:
            x, _, _ = fit_problem(pr.subset(tr), lam, hierarchical, xtol=1e-5)
            se += float(((predict(x, pr.subset(te), hierarchical) - pr.p[te]) ** 2).sum())
        scores.append(se)
    return grid[int(np.argmin(scores))]


class CapabilitiesIndex(AnalysisEstimator):
    """Joint 2PL fit of model groups and benchmarks, on Epoch's ECI scale, with bootstrap CIs.

    Parameters
    ----------
    objective : {"cv", "cv_hierarchical", "epoch"}
        Penalties chosen by inner cross-validation (shrinking to 0 and 1, or to estimated means),
        or Epoch's plain fixed ridge.
    penalty : float or None
        Ridge weight λ; None chooses it by inner cross-validation (``objective="evalhouse"``) or
        uses ``epoch_penalty`` (``objective="epoch"``).
    epoch_penalty : float
        The fixed λ of Epoch's plain objective.
    n_bootstrap : int
        Bootstrap resamples of the observation cells for the 90% CIs (0: none).
    heldout_folds : int
        Folds over cells for the held-out RMSE (0: not computed).
    xtol : float
        Convergence tolerance of Levenberg-Marquardt (relative change of the parameters).
    random_state : int
        Seed of the folds and the bootstrap.
    """

    kind = "capabilities_index"

    def __init__(
        self,
        objective: str = "cv",
        *,
        penalty: float | None = None,
        epoch_penalty: float = 0.01,
        n_bootstrap: int = 100,
        heldout_folds: int = 5,
        xtol: float = 1e-10,
        random_state: int = 0,
    ) -> None:
        self.objective = objective
        self.penalty = penalty
        self.epoch_penalty = epoch_penalty
        self.n_bootstrap = n_bootstrap
        self.heldout_folds = heldout_folds
        self.xtol = xtol
        self.random_state = random_state

    @property
    def hierarchical(self) -> bool:
        return self.objective == "cv_hierarchical"

    def _lambda(self, pr: Problem) -> tuple[float, float]:
        if self.penalty is not None:
            return (float(self.penalty), float(self.penalty))
        if self.objective == "epoch":
            return (float(self.epoch_penalty), float(self.epoch_penalty))
        return choose_lambda(pr, self.hierarchical, LAMBDA_GRID, self.random_state)

    def fit(self, cells: pd.DataFrame, *, anchor: str, scale_anchors: dict[str, float]) -> Self:
        """Fit on ``cells`` (``group, benchmark, p``); ``scale_anchors`` maps two groups to their ECI."""
        self._start()
        check_choice("objective", self.objective, OBJECTIVES)
        # The systems are small (a few hundred parameters): BLAS threads only add overhead (30x here).
        with threadpool_limits(1):
            return self._fit(cells, anchor=anchor, scale_anchors=scale_anchors)

    def _fit(self, cells: pd.DataFrame, *, anchor: str, scale_anchors: dict[str, float]) -> Self:
        groups = pd.Index(sorted(cells["group"].unique()), name="group")
        benchmarks = pd.Index(sorted(cells["benchmark"].unique()), name="benchmark")
        if anchor not in benchmarks:
            raise InputError(f"the anchor benchmark {anchor!r} has no cells to fit")
        missing = [g for g in scale_anchors if g not in groups]
        if missing or len(scale_anchors) != 2:
            raise InputError(f"the two scale anchors must be fitted model groups; missing {missing}")
        pr = Problem(
            groups.get_indexer(cells["group"]),
            benchmarks.get_indexer(cells["benchmark"]),
            cells["p"].to_numpy(dtype=float),
            len(groups),
            len(benchmarks),
            int(benchmarks.get_loc(anchor)),
        )
        self.penalty_ = self._lambda(pr)
        x, self.iterations_, change = fit_problem(pr, self.penalty_, self.hierarchical, xtol=self.xtol)
        self.groups_, self.benchmarks_ = groups, benchmarks
        anchors = [(groups.get_loc(g), v) for g, v in scale_anchors.items()]
        self.scale_ = self._rescale(x, pr, anchors)
        self.final_change_ = change * abs(self.scale_[1])
        C, D, A, _ = _unpack(x, pr, self.hierarchical)
        a, s = self.scale_
        self.eci_ = pd.Series(a + s * C, index=groups, name="eci")
        self.edi_ = pd.Series(a + s * D, index=benchmarks, name="edi")
        self.slope_ = pd.Series(np.exp(A) / s, index=benchmarks, name="slope")
        self.n_benchmarks_ = cells.groupby("group")["benchmark"].nunique().reindex(groups)
        self.residual_rmse_ = float(np.sqrt(np.mean((predict(x, pr, self.hierarchical) - pr.p) ** 2)))
        self.ci_low_, self.ci_high_ = self._bootstrap(pr, x, anchors)
        self.heldout_rmse_ = self.heldout_rmse(pr) if self.heldout_folds else None
        wide = cells.pivot(index="group", columns="benchmark", values="p")
        wide.attrs = dict(cells.attrs)
        self._finish(
            wide,
            iterations=self.iterations_,
            final_change=self.final_change_,
            penalty=self.penalty_,
            heldout_rmse=self.heldout_rmse_,
            n_groups=len(groups),
            n_benchmarks=len(benchmarks),
            n_cells=len(cells),
        )
        return self

    def _rescale(self, x: np.ndarray, pr: Problem, anchors: list[tuple[int, float]]) -> tuple[float, float]:
        C = x[: pr.n_g]
        (i, vi), (j, vj) = anchors
        if C[i] == C[j]:
            raise RunFailed("the two scale anchors have the same capability: the scale is undefined")
        s = (vj - vi) / (C[j] - C[i])
        return vi - s * C[i], s

    def _bootstrap(self, pr: Problem, x: np.ndarray, anchors: list[tuple[int, float]]) -> tuple[pd.Series, pd.Series]:
        if not self.n_bootstrap:
            nan = pd.Series(np.nan, index=self.groups_)
            return nan, nan.copy()
        rng = np.random.default_rng(self.random_state)
        draws = np.empty((int(self.n_bootstrap), pr.n_g))
        for k in range(int(self.n_bootstrap)):
            idx = rng.integers(0, len(pr.p), len(pr.p))
            xb, _, _ = fit_problem(pr.subset(idx), self.penalty_, self.hierarchical, x0=x, xtol=1e-4, max_iter=60)
            a, s = self._rescale(xb, pr, anchors)
            draws[k] = a + s * xb[: pr.n_g]
        lo, hi = np.percentile(draws, [5, 95], axis=0)
        return pd.Series(lo, index=self.groups_), pd.Series(hi, index=self.groups_)

    def heldout_rmse(self, pr: Problem) -> float:
        """RMSE on proportions of ``heldout_folds``-fold held-out cells (folds over cells, seeded).

        Each training fold chooses its own penalty when the objective cross-validates it, so the
        scored cells never inform the choice.
        """
        folds = KFold(int(self.heldout_folds), shuffle=True, random_state=self.random_state).split(pr.p)
        se = 0.0
        for tr, te in folds:
            train = pr.subset(tr)
            x, _, _ = fit_problem(train, self._lambda(train), self.hierarchical, xtol=1e-5)
            se += float(((predict(x, pr.subset(te), self.hierarchical) - pr.p[te]) ** 2).sum())
        return float(np.sqrt(se / len(pr.p)))
