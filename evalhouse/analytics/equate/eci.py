"""A capabilities index on Epoch's scale: a joint 2PL fit of models and benchmarks, with intervals.

Model (Epoch's published method): ``p(m, b) = σ(α_b (C_m − D_b))`` on baseline-normalised
proportions (:mod:`evalhouse.analytics.equate.eci_data`), fitted by regularised least squares,
Winogrande fixed at ``D = 0, α = 1``, then mapped linearly so two anchor models read 130 and 150.

The penalty is Epoch's, in Epoch's units: the loss is the sum of squared cell residuals plus
``λ · mean(θ²)`` over the free parameters θ (every ``C``, every free ``D``, and the slopes as
``log α`` — shrunk towards α = 1 — or, ``alpha_penalty="raw"``, as ``α`` itself, shrunk towards 0
as in Epoch's code). Objectives:

* ``"stable"`` (the default) — ``λ = 1e-3``, the largest penalty of the region where the fit no
  longer depends on it (Epoch's own regularisation analysis puts its stable region at ``λ ≤ 1e-3``;
  ``analyze eci --sensitivity`` shows it on the data at hand).
* ``"epoch"`` — Epoch's code as published: ``λ = 0.1`` with the raw-α penalty.
* ``"cv"`` — λ chosen from :data:`LAMBDA_GRID` by 3-fold cross-validation over the training cells.
* ``"cv_hierarchical"`` — as ``cv``, with difficulties and log-slopes shrunk to their own estimated
  means instead of 0 and 1.

The fit is Levenberg-Marquardt on the normal equations (assembled from the cells with
``np.bincount``) until no ability moves by more than ``xtol`` in a step.

Intervals: a bootstrap over observation cells (``n_bootstrap`` resamples, seeded, warm-started)
at the fit's penalty; every resample is re-anchored (the ECI is defined by its two anchors) and the
interval is the resamples' 5th-95th percentiles. Their coverage is measured by
``benchmarks/eci.py``, which simulates the hub's own observation pattern from the fitted model and
reports how often the 90% intervals hold the planted ECIs. The anchors read 130 and 150 by
definition; their uncertain places relative to the reference benchmark are ``anchor_position_``.
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
from evalhouse.common import progress
from evalhouse.errors import InputError, RunFailed

OBJECTIVES: tuple[str, ...] = ("stable", "cv", "cv_hierarchical", "epoch")
ALPHA_PENALTIES: tuple[str, ...] = ("log", "raw")
#: The largest λ (Epoch's units) of the stable region: the default penalty.
STABLE_PENALTY = 1e-3
#: Epoch's published ``regularization_strength`` (with the raw-α penalty).
EPOCH_PENALTY = 0.1
#: The penalties cross-validation chooses from (Epoch's units), descending for warm starts.
LAMBDA_GRID: tuple[float, ...] = (3.0, 1.0, 0.3, 0.1, 0.03, 0.01, 1e-3, 1e-4)
LOG_SLOPE_BOUND = float(np.log(20.0))


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

    def with_p(self, p: np.ndarray) -> Problem:
        return Problem(self.g, self.b, p, self.n_g, self.n_b, self.anchor)

    @property
    def n_free(self) -> int:
        """Free parameters the penalty averages over: every C, and D and α of every free benchmark."""
        return self.n_g + 2 * (self.n_b - 1)


def _unpack(x: np.ndarray, pr: Problem, hierarchical: bool) -> tuple[np.ndarray, ...]:
    C = x[: pr.n_g]
    D = x[pr.n_g : pr.n_g + pr.n_b].copy()
    A = x[pr.n_g + pr.n_b : pr.n_g + 2 * pr.n_b].copy()
    mu = x[pr.n_g + 2 * pr.n_b :] if hierarchical else np.zeros(2)
    D[pr.anchor], A[pr.anchor] = 0.0, 0.0
    return C, D, A, mu


def _normal_equations(
    x: np.ndarray, pr: Problem, penalty: float, hierarchical: bool, raw_alpha: bool = False
) -> tuple[np.ndarray, ...]:
    """Residual vector, gradient ``Jᵀr`` and Gauss-Newton matrix ``JᵀJ``, assembled from the cells.

    Each cell depends on three parameters (``C_g``, ``D_b``, ``log α_b``), so ``JᵀJ`` is built with
    ``np.bincount`` over cells instead of forming the (cells x parameters) Jacobian. ``penalty`` is
    λ in Epoch's units: each free parameter carries the weight ``λ / n_free``.
    """
    C, D, A, mu = _unpack(x, pr, hierarchical)
    free = np.ones(pr.n_b, dtype=bool)
    free[pr.anchor] = False
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
    w = float(penalty) / pr.n_free
    ig = np.arange(pr.n_g)
    grad[ig] += w * C
    H[ig, ig] += w
    fb = np.flatnonzero(free)
    pen = [r, np.sqrt(w) * C]
    # Difficulties: sqrt(w) (D - mu_D); log-slopes: sqrt(w) (log α - mu_A), or sqrt(w) α (raw).
    for offset, values, m, k in ((pr.n_g, D, mu[0], -2), (pr.n_g + pr.n_b, A, mu[1], -1)):
        if raw_alpha and offset != pr.n_g:
            a = np.exp(values[fb])
            grad[offset + fb] += w * a * a
            H[offset + fb, offset + fb] += w * a * a
            pen.append(np.sqrt(w) * a)
            continue
        dev = values[fb] - m
        grad[offset + fb] += w * dev
        H[offset + fb, offset + fb] += w
        if hierarchical:
            grad[k] -= w * dev.sum()
            H[k, k] += w * len(fb)
            H[offset + fb, k] -= w
            H[k, offset + fb] -= w
        pen.append(np.sqrt(w) * dev)
    # The anchor's D and log-alpha are not parameters: pin them.
    for k in (pr.n_g + pr.anchor, pr.n_g + pr.n_b + pr.anchor):
        H[k, :] = H[:, k] = 0.0
        H[k, k] = 1.0
        grad[k] = 0.0
    return np.concatenate(pen), grad, H


def _damped_step(H: np.ndarray, grad: np.ndarray, damping: float, n_g: int) -> np.ndarray:
    """Solve ``(H + damping diag(H)) step = -grad`` through the Schur complement of the abilities.

    Every cell touches one ability, so the abilities' block of ``H`` is diagonal: eliminating it
    leaves a system the size of the benchmark parameters (80 x 80 instead of 260 x 260 here).
    """
    diag = np.maximum(np.diag(H), 1e-12)
    a = diag[:n_g] * (1.0 + damping)
    B = H[:n_g, n_g:]
    S = H[n_g:, n_g:] + np.diag(damping * diag[n_g:])
    Ba = B / a[:, None]
    S = S - B.T @ Ba
    gc, gb = grad[:n_g], grad[n_g:]
    xb = np.linalg.solve(S, -(gb - Ba.T @ gc))
    xc = -(gc + B @ xb) / a
    return np.concatenate([xc, xb])


def fit_problem(
    pr: Problem,
    penalty: float,
    *,
    hierarchical: bool = False,
    raw_alpha: bool = False,
    x0: np.ndarray | None = None,
    xtol: float = 1e-10,
    ftol: float = 1e-14,
    max_iter: int = 500,
) -> tuple[np.ndarray, int, float]:
    """Levenberg-Marquardt on the normal equations until no ability C moves by more than ``xtol``
    in a step (or an accepted step lowers the loss by less than ``ftol`` relative).

    Returns ``(x, iterations, largest |ΔC| of the last accepted step)``.
    """
    if hierarchical and raw_alpha:
        raise InputError("hierarchical shrinkage needs the log-slope penalty (alpha_penalty='log')")
    n = pr.n_g + 2 * pr.n_b + (2 if hierarchical else 0)
    x = np.zeros(n) if x0 is None else x0.copy()
    res, grad, H = _normal_equations(x, pr, penalty, hierarchical, raw_alpha)
    cost, mu_damp, change = float(res @ res), 1e-3, np.inf
    a0 = pr.n_g + pr.n_b
    for it in range(1, max_iter + 1):
        trial = x + _damped_step(H, grad, mu_damp, pr.n_g)
        # Slopes stay within [1/20, 20] (log scale): a benchmark whose cells a step function separates
        # would otherwise drift towards an infinite slope without changing the fit.
        trial[a0 : a0 + pr.n_b] = np.clip(trial[a0 : a0 + pr.n_b], -LOG_SLOPE_BOUND, LOG_SLOPE_BOUND)
        step = trial - x
        res_t, grad_t, H_t = _normal_equations(trial, pr, penalty, hierarchical, raw_alpha)
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


def predict(x: np.ndarray, pr: Problem, hierarchical: bool = False) -> np.ndarray:
    C, D, A, _ = _unpack(x, pr, hierarchical)
    return expit(np.exp(A)[pr.b] * (C[pr.g] - D[pr.b]))


def choose_lambda(
    pr: Problem,
    *,
    hierarchical: bool = False,
    raw_alpha: bool = False,
    grid: tuple[float, ...] = LAMBDA_GRID,
    random_state: int = 0,
) -> float:
    """The λ of ``grid`` with the lowest 3-fold cross-validated cell RMSE on ``pr`` (inner folds only).

    Each fold walks the grid from the largest λ down, warm-starting every fit from the previous one.
    """
    order = sorted(grid, reverse=True)
    folds = list(KFold(3, shuffle=True, random_state=random_state).split(pr.p))
    se = np.zeros(len(order))
    with progress.task("ECI: choosing the penalty (3 folds)", total=len(folds) * len(order)) as step:
        for tr, te in folds:
            x = None
            for i, lam in enumerate(order):
                x, _, _ = fit_problem(
                    pr.subset(tr), lam, hierarchical=hierarchical, raw_alpha=raw_alpha, x0=x, xtol=1e-3, max_iter=100
                )
                se[i] += float(((predict(x, pr.subset(te), hierarchical) - pr.p[te]) ** 2).sum())
                step.advance()
    return float(order[int(np.argmin(se))])


class CapabilitiesIndex(AnalysisEstimator):
    """Joint 2PL fit of model groups and benchmarks, on Epoch's ECI scale, with bootstrap intervals.

    Parameters
    ----------
    objective : {"stable", "cv", "cv_hierarchical", "epoch"}
        How the penalty is set (module docstring).
    penalty : float or None
        λ in Epoch's units (the weight of the mean squared parameter); None: the objective's.
    alpha_penalty : {"log", "raw"} or None
        Slopes penalised as ``log α`` (towards α = 1) or as ``α`` (towards 0, Epoch's code);
        None: ``raw`` for ``objective="epoch"``, else ``log``.
    n_bootstrap : int
        Bootstrap resamples of the observation cells for the intervals (0: none).
    ci_level : float
        Coverage the intervals aim at (0.90: the 5th and 95th percentiles).
    heldout_folds : int
        Folds over cells for the held-out RMSE (0: not computed).
    xtol : float
        Convergence tolerance of Levenberg-Marquardt (largest change of an ability in a step).
    random_state : int
        Seed of the folds and the bootstrap.
    """

    kind = "capabilities_index"

    def __init__(
        self,
        objective: str = "stable",
        *,
        penalty: float | None = None,
        alpha_penalty: str | None = None,
        n_bootstrap: int = 100,
        ci_level: float = 0.90,
        heldout_folds: int = 5,
        xtol: float = 1e-10,
        random_state: int = 0,
    ) -> None:
        self.objective = objective
        self.penalty = penalty
        self.alpha_penalty = alpha_penalty
        self.n_bootstrap = n_bootstrap
        self.ci_level = ci_level
        self.heldout_folds = heldout_folds
        self.xtol = xtol
        self.random_state = random_state

    @property
    def hierarchical(self) -> bool:
        return self.objective == "cv_hierarchical"

    @property
    def raw_alpha(self) -> bool:
        choice = self.alpha_penalty or ("raw" if self.objective == "epoch" else "log")
        return choice == "raw"

    def _lambda(self, pr: Problem) -> float:
        if self.penalty is not None:
            return float(self.penalty)
        if self.objective == "stable":
            return STABLE_PENALTY
        if self.objective == "epoch":
            return EPOCH_PENALTY
        return choose_lambda(
            pr, hierarchical=self.hierarchical, raw_alpha=self.raw_alpha, random_state=self.random_state
        )

    def _fit_x(self, pr: Problem, lam: float, **kw: object) -> tuple[np.ndarray, int, float]:
        return fit_problem(pr, lam, hierarchical=self.hierarchical, raw_alpha=self.raw_alpha, **kw)  # type: ignore[arg-type]

    def fit(self, cells: pd.DataFrame, *, anchor: str, scale_anchors: dict[str, float]) -> Self:
        """Fit on ``cells`` (``group, benchmark, p``); ``scale_anchors`` maps two groups to their ECI."""
        self._start()
        check_choice("objective", self.objective, OBJECTIVES)
        if self.alpha_penalty is not None:
            check_choice("alpha_penalty", self.alpha_penalty, ALPHA_PENALTIES)
        if not 0 < float(self.ci_level) < 1:
            raise InputError(f"ci_level={self.ci_level!r} must be in (0, 1)")
        if self.penalty is not None and float(self.penalty) < 0:
            raise InputError(f"penalty={self.penalty!r} must be >= 0")
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
        self.alpha_penalty_ = "raw" if self.raw_alpha else "log"
        x, self.iterations_, change = self._fit_x(pr, self.penalty_, xtol=self.xtol)
        self.groups_, self.benchmarks_, self.anchor_ = groups, benchmarks, anchor
        anchors = [(groups.get_loc(g), v) for g, v in scale_anchors.items()]
        self.scale_ = self._rescale(x, pr, anchors)
        self.final_change_ = change * abs(self.scale_[1])
        C, D, A, _ = _unpack(x, pr, self.hierarchical)
        a, s = self.scale_
        self.x_, self.problem_ = x, pr
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
            alpha_penalty=self.alpha_penalty_,
            heldout_rmse=self.heldout_rmse_,
            n_groups=len(groups),
            n_benchmarks=len(benchmarks),
            n_cells=len(cells),
        )
        return self

    @staticmethod
    def _rescale(x: np.ndarray, pr: Problem, anchors: list[tuple[int, float]]) -> tuple[float, float]:
        C = x[: pr.n_g]
        (i, vi), (j, vj) = anchors
        if C[i] == C[j]:
            raise RunFailed("the two scale anchors have the same capability: the scale is undefined")
        s = (vj - vi) / (C[j] - C[i])
        return vi - s * C[i], s

    def _bootstrap(self, pr: Problem, x: np.ndarray, anchors: list[tuple[int, float]]) -> tuple[pd.Series, pd.Series]:
        """Percentile intervals of the cell bootstrap, every resample re-anchored (the ECI is defined
        by its anchors).

        Their coverage of simulated data at a nominal 0.90 is measured by ``benchmarks/eci.py``
        (docs/analyses-eci-and-factor-grid.md has the figures). The anchors read 130 and 150 in
        every resample (they define the scale); their places relative to the reference benchmark,
        on the point fit's map, are in ``anchor_position_``.
        """
        if not self.n_bootstrap:
            nan = pd.Series(np.nan, index=self.groups_)
            self.anchor_position_, self.bootstrap_eci_ = {}, np.empty((0, pr.n_g))
            return nan, nan.copy()
        rng = np.random.default_rng(self.random_state)
        draws = np.empty((int(self.n_bootstrap), pr.n_g))
        with progress.task("ECI: bootstrap", total=int(self.n_bootstrap)) as step:
            for k in range(int(self.n_bootstrap)):
                idx = rng.integers(0, len(pr.p), len(pr.p))
                xb, _, _ = self._fit_x(pr.subset(idx), self.penalty_, x0=x, xtol=1e-3, max_iter=60)
                draws[k] = xb[: pr.n_g]
                step.advance()
        (i, vi), (j, vj) = anchors
        gap = draws[:, j] - draws[:, i]
        ok = gap != 0
        self.bootstrap_eci_ = vi + (vj - vi) * (draws[ok] - draws[ok, i][:, None]) / gap[ok][:, None]
        tail = 100 * (1 - float(self.ci_level)) / 2
        lo, hi = np.percentile(self.bootstrap_eci_, [tail, 100 - tail], axis=0)
        a, s = self.scale_
        fixed = np.sort(a + s * np.percentile(draws[:, [i, j]], [tail, 100 - tail], axis=0), axis=0)
        self.anchor_position_ = {
            str(self.groups_[k]): (float(fixed[0, n]), float(fixed[1, n])) for n, k in enumerate((i, j))
        }
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
            x, _, _ = self._fit_x(train, self._lambda(train), xtol=1e-4)
            se += float(((predict(x, pr.subset(te), self.hierarchical) - pr.p[te]) ** 2).sum())
        return float(np.sqrt(se / len(pr.p)))

    def place(self, cells: pd.DataFrame) -> pd.DataFrame:
        """ECI of groups kept out of the fit, read off the fitted benchmark curves (they move nothing).

        Each group's ability minimises its own squared residuals on the fitted benchmarks plus the
        fit's penalty on C; cells of benchmarks the fit does not have are ignored. Returns one row
        per group: ``group, eci, n_benchmarks`` (benchmarks used).
        """
        known = cells[cells["benchmark"].isin(self.benchmarks_)]
        groups = pd.Index(sorted(cells["group"].unique()), name="group")
        out = pd.DataFrame({"group": groups, "eci": np.nan, "n_benchmarks": 0})
        if known.empty:
            return out
        pr = self.problem_
        _, D, A, _ = _unpack(self.x_, pr, self.hierarchical)
        bi = self.benchmarks_.get_indexer(known["benchmark"])
        gi = groups.get_indexer(known["group"])
        p = known["p"].to_numpy(dtype=float)
        alpha, d = np.exp(A)[bi], D[bi]
        w = self.penalty_ / pr.n_free
        C = np.zeros(len(groups))
        for _ in range(200):  # one-dimensional Gauss-Newton per group, all groups at once
            s = expit(alpha * (C[gi] - d))
            j = s * (1 - s) * alpha
            g = np.bincount(gi, j * (s - p), minlength=len(C)) + w * C
            h = np.bincount(gi, j * j, minlength=len(C)) + w + 1e-9
            step = np.clip(g / h, -2.0, 2.0)
            C -= step
            if np.max(np.abs(step)) < 1e-8:
                break
        a, sc = self.scale_
        n = np.bincount(gi, minlength=len(C))
        out["eci"] = np.where(n > 0, a + sc * C, np.nan)
        out["n_benchmarks"] = known.groupby("group")["benchmark"].nunique().reindex(groups).fillna(0).astype(int).values
        return out
