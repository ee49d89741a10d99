"""Optimal aggregation weights v* (paper 003, Eq. 1), which the paper leaves as future work.

The model (paper 003 §2): item scores y = A a + eps, eps ~ N(0, Sigma); the lab's effort a on the
K training activities costs a'Ca/2; the designer publishes s = v'y; the lab is CARA with risk
aversion r. The lab answers a*(v) = C^-1 A'v, so with the improvability matrix M = A C^-1 A' the
designer's welfare is W(v) = w'Mv - v'Mv/2 - (r/2) v'Sigma v and its maximiser is

    v* = (M + r Sigma)^-1 M w                                   (Eq. 1)

Here A is the items' per-axis slopes (m x K, K = the training axes the panel has: PT, SFT, RL),
C = diag(kappa) from the named cost scenario and Sigma the seed variance (diagonal; or the full
sample covariance of the seed deviations when the seeds allow it). M = B B' with B = A C^-1/2 has
rank K and, because every item loads on the same K activities, large off-diagonal entries: the
items are improved jointly, which is the paper's multitask point. Eq. 1 is solved exactly without
forming M: with D = r Sigma diagonal, the push-through identity gives

    v* = D^-1 B (I_K + B' D^-1 B)^-1 B' w,

one Cholesky factorisation of a K x K matrix, O(m K^2): 10^6 items cost milliseconds. A full
Sigma is solved densely (it is only allowed for panels small enough to estimate it).

The diagonal rule v_i = M_ii w_i / (M_ii + r sigma2_i) (M_ii = sum_k beta_ik^2 / kappa_k) is
kept as a comparison: it is Eq. 1 only when M is diagonal, which shared training axes rule out.

Modelling assumptions, stated wherever v* is reported (:data:`ASSUMPTIONS`): C = diag(kappa)
reads the cost scenario's linear prices ($ per unit of effort) as the coefficients of a quadratic
cost ($ per unit of effort squared); then M_ii = sum_k beta_ik^2 / kappa_k is in p^2 per dollar,
sigma2 in p^2, and r, the lab's CARA coefficient, is per dollar. r is reported both per dollar and
as a multiple of r0 = median_i M_ii / sigma2_i over the items weighted, the risk aversion at
which the typical item's improvability and noise balance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.linalg import cho_factor, cho_solve

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.errors import InputError

AXES = ("PT", "SFT", "RL")
R_UNITS = ("r0", "per-dollar")
SIGMA_MODES = ("diagonal", "full")
DEFAULT_SWEEP = (0.1, 1.0, 10.0, 100.0)

ASSUMPTIONS = (
    "C = diag(kappa): the cost scenario's linear prices ($ per token, pair or prompt) are read as the "
    "coefficients of the quadratic effort cost a'Ca/2 (paper 003 section 2); effort is measured in those units",
    "A = the per-item OLS slopes per training axis (p per unit of effort), negative slopes included as estimated",
    "r is the lab's CARA coefficient per dollar of payoff; r0 = median over the weighted items of M_ii / sigma2_i "
    "(per dollar) is the scale at which the typical item's improvability and seed noise balance",
    "Sigma = seed variance (diagonal) unless --sigma full; evaluation noise other than seeds is not in it",
    "w = the item welfare score of the chosen framing (1-5); items without one, or excluded by a rule, get v = 0",
    "uniform = the best equal weighting alpha * 1 over the weighted items (alpha chosen optimally)",
    "welfare shares are scored under the estimated M and Sigma (the estimates are taken as the truth)",
)


@dataclass(frozen=True)
class ItemModel:
    """Eq. 1's primitives on the weighted items: M = B B' (B = A C^-1/2), Sigma, w.

    ``sigma`` is a vector (diagonal Sigma, every entry > 0) or an m x m matrix (positive definite).
    """

    B: np.ndarray
    sigma: np.ndarray
    w: np.ndarray

    @classmethod
    def from_slopes(cls, slopes: np.ndarray, kappa: Sequence[float], sigma: np.ndarray, w: np.ndarray) -> ItemModel:
        a = np.asarray(slopes, dtype=float)
        return cls(a / np.sqrt(np.asarray(kappa, dtype=float))[None, :], np.asarray(sigma, dtype=float),
                   np.asarray(w, dtype=float))  # fmt: skip

    @property
    def n_items(self) -> int:
        return len(self.w)

    @property
    def m_diag(self) -> np.ndarray:
        return np.einsum("ik,ik->i", self.B, self.B)

    @property
    def sigma_diag(self) -> np.ndarray:
        return self.sigma if self.sigma.ndim == 1 else np.diag(self.sigma)

    def improve(self, v: np.ndarray) -> np.ndarray:
        """M v (the induced performance), without forming M."""
        return self.B @ (self.B.T @ v)

    def noise(self, v: np.ndarray) -> np.ndarray:
        return self.sigma * v if self.sigma.ndim == 1 else self.sigma @ v

    def welfare(self, v: np.ndarray, r: float) -> float:
        """W(v) = w'Mv - v'Mv/2 - (r/2) v'Sigma v."""
        v = np.asarray(v, dtype=float)
        mv = self.improve(v)
        return float(self.w @ mv - 0.5 * v @ mv - 0.5 * r * v @ self.noise(v))

    def first_best(self) -> float:
        """W(w) with no noise: w'Mw / 2, the welfare no r > 0 reaches."""
        return 0.5 * float(self.w @ self.improve(self.w))

    def r0(self) -> float:
        return float(np.median(self.m_diag / self.sigma_diag))

    def v_star(self, r: float) -> np.ndarray:
        """Eq. 1 exactly: (M + r Sigma)^-1 M w."""
        _check_r(r)
        bw = self.B.T @ self.w
        if self.sigma.ndim == 1:
            d = r * self.sigma
            bd = self.B / d[:, None]
            k = self.B.shape[1]
            small = np.eye(k) + self.B.T @ bd
            return bd @ cho_solve(cho_factor(small), bw)
        return cho_solve(cho_factor(self.B @ self.B.T + r * self.sigma), self.B @ bw)

    def diagonal_rule(self, r: float) -> np.ndarray:
        """v_i = M_ii w_i / (M_ii + r sigma2_i): Eq. 1 if M and Sigma were diagonal."""
        _check_r(r)
        m = self.m_diag
        return m * self.w / (m + r * self.sigma_diag)

    def uniform(self, r: float) -> np.ndarray:
        """The best equal weighting alpha * 1: alpha = w'M1 / (1'M1 + r 1'Sigma 1)."""
        _check_r(r)
        ones = np.ones(self.n_items)
        m1 = self.improve(ones)
        alpha = (self.w @ m1) / (ones @ m1 + r * ones @ self.noise(ones))
        return alpha * ones


def _check_r(r: float) -> None:
    if not (np.isfinite(r) and r > 0):
        raise InputError(f"risk aversion r must be positive, got {r!r} (at r = 0 any v with Mv = Mw is optimal)")


def sweep(estimate: ItemModel, rs: Sequence[float], truth: ItemModel | None = None) -> pd.DataFrame:
    """Per r: the welfare of Eq. 1's v*, the diagonal rule and the best uniform weights, all computed
    from ``estimate`` and scored under ``truth`` (default: the estimate itself), as shares of the
    attainable welfare W(v*_truth) at that r; also W(v*_truth) as a share of the first best."""
    score = truth or estimate
    rows = []
    for r in rs:
        best = score.welfare(score.v_star(r), r)
        values = {
            "eq1": score.welfare(estimate.v_star(r), r),
            "diagonal": score.welfare(estimate.diagonal_rule(r), r),
            "uniform": score.welfare(estimate.uniform(r), r),
        }
        row: dict[str, float] = {"r": float(r), "attainable_welfare": best}
        row |= {f"share_{k}": (v / best if best > 0 else float("nan")) for k, v in values.items()}
        first = score.first_best()
        row["attainable_of_first_best"] = best / first if first > 0 else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def weight_summary(v: np.ndarray) -> dict[str, Any]:
    """How many weights are negative and how much of the weight mass they carry."""
    v = np.asarray(v, dtype=float)
    mass = float(np.abs(v).sum())
    neg = v < 0
    return {
        "n": len(v),
        "n_negative": int(neg.sum()),
        "negative_mass_share": float(np.abs(v[neg]).sum() / mass) if mass > 0 else 0.0,
        "min": float(v.min()) if len(v) else float("nan"),
        "max": float(v.max()) if len(v) else float("nan"),
        "sum": float(v.sum()),
    }


def seed_covariance(seed_obs: pd.DataFrame, item_ids: Sequence[str]) -> np.ndarray:
    """The full sample covariance of the items' seed deviations (paper 003 §4.3 pooled form).

    Each response's deviation from its checkpoint's across-seed mean; Sigma_ij = sum over
    (checkpoint, seed) of e_i e_j / (N - |PP|), whose diagonal is sigma2_i. Positive definite
    only when the items are fewer than N - |PP|; otherwise :class:`InputError`.
    """
    obs = seed_obs[seed_obs["item_id"].isin(set(item_ids))]
    wide = obs.pivot_table(index=["ckpt", "seed"], columns="item_id", values="y", aggfunc="mean")
    wide = wide.reindex(columns=list(item_ids))
    if wide.isna().to_numpy().any():
        missing = int(wide.isna().any().sum())
        raise InputError(f"--sigma full needs every weighted item on every (checkpoint, seed): {missing} items are not")
    dev = wide - wide.groupby(level="ckpt").transform("mean")
    n, k = len(wide), wide.index.get_level_values("ckpt").nunique()
    df = n - k
    if len(item_ids) >= df:
        raise InputError(
            f"--sigma full: {n} responses over {k} checkpoints leave {df} degrees of freedom, so a sample covariance "
            f"of {len(item_ids):,} items is singular (at most {df - 1} items); use --sigma diagonal"
        )
    e = dev.to_numpy(dtype=float)
    return e.T @ e / df


class OptimalWeights(AnalysisEstimator):
    """Eq. 1's v* over the items an audit keeps, with the comparison weightings and an r sweep.

    Parameters: ``r`` and ``r_sweep`` in ``r_unit`` (``"r0"``: multiples of r0, ``"per-dollar"``:
    absolute); ``kappa`` the cost scenario's prices per axis; ``sigma`` ``"diagonal"`` or ``"full"``
    (then ``fit`` needs ``seed_obs``). ``fit(items, w)`` takes the audit's items (slope_pt/sft/rl,
    sigma2, excluded) and the welfare per item (a Series indexed by item_id) and sets ``weights_``
    (per item: v_star, v_star_diagonal, v_star_reason), ``model_`` (the :class:`ItemModel`),
    ``r_`` (per dollar), ``r0_``, ``sweep_`` and ``summary_``.
    """

    kind = "item_optimal_weights"

    def __init__(  # noqa: PLR0913 - an estimator's parameters (sklearn style)
        self,
        *,
        kappa: dict[str, float] | None = None,
        r: float = 1.0,
        r_unit: str = "r0",
        r_sweep: tuple[float, ...] = DEFAULT_SWEEP,
        sigma: str = "diagonal",
        random_state: int = 0,
    ) -> None:
        self.kappa = kappa
        self.r = r
        self.r_unit = r_unit
        self.r_sweep = r_sweep
        self.sigma = sigma
        self.random_state = random_state

    def fit(self, items: pd.DataFrame, w: pd.Series, seed_obs: pd.DataFrame | None = None) -> OptimalWeights:
        self._start()
        if self.r_unit not in R_UNITS:
            raise InputError(f"r unit {self.r_unit!r}: choose one of {', '.join(R_UNITS)}")
        if self.sigma not in SIGMA_MODES:
            raise InputError(f"sigma {self.sigma!r}: choose one of {', '.join(SIGMA_MODES)}")
        if self.kappa is None:
            raise InputError("OptimalWeights needs the cost scenario's kappa per axis")
        axes = [a for a in AXES if f"slope_{a.lower()}" in items and items[f"slope_{a.lower()}"].notna().any()]
        if not axes:
            raise InputError("no training axis has slopes: v* needs an improvability suite")
        frame = items.set_index("item_id")
        welfare = pd.Series(w).reindex(frame.index)
        slopes = frame[[f"slope_{a.lower()}" for a in axes]]
        sigma2 = frame["sigma2"].astype(float)
        reason = pd.Series(pd.NA, index=frame.index, dtype=object)
        reason = reason.mask(frame["excluded"].notna(), "excluded: " + frame["excluded"].astype(str))
        reason = reason.mask(reason.isna() & welfare.isna(), "no welfare score")
        reason = reason.mask(reason.isna() & slopes.isna().any(axis=1), "a slope is missing on an axis of the panel")
        reason = reason.mask(reason.isna() & ~(sigma2 > 0), "no positive seed variance")
        kept = reason.isna().to_numpy()
        if not kept.any():
            raise InputError("no item is left to weight (every item is excluded or lacks a welfare score)")
        ids = frame.index[kept]
        if self.sigma == "full":
            if seed_obs is None:
                raise InputError("--sigma full needs the seed observations of the noise suite")
            sig = seed_covariance(seed_obs, list(ids))
        else:
            sig = sigma2.to_numpy()[kept]
        model = ItemModel.from_slopes(slopes.to_numpy(dtype=float)[kept], [self.kappa[a] for a in axes], sig,
                                      welfare.to_numpy(dtype=float)[kept])  # fmt: skip
        r0 = model.r0()
        scale = r0 if self.r_unit == "r0" else 1.0
        r = float(self.r) * scale
        v = model.v_star(r)
        vd = model.diagonal_rule(r)
        out = pd.DataFrame({"item_id": frame.index, "v_star": 0.0, "v_star_diagonal": 0.0, "v_star_reason": reason})
        out.loc[kept, "v_star"] = v
        out.loc[kept, "v_star_diagonal"] = vd
        rs = [float(x) * scale for x in self.r_sweep]
        table = sweep(model, rs)
        table.insert(1, "r_over_r0", table["r"] / r0)
        eig = np.linalg.eigvalsh(model.B.T @ model.B)  # the nonzero eigenvalues of M
        self.model_ = model
        self.r_, self.r0_ = r, r0
        self.weights_ = out.reset_index(drop=True)
        self.sweep_ = table
        self.axes_ = axes
        self.summary_ = {
            "r_per_dollar": r,
            "r0_per_dollar": r0,
            "r_over_r0": r / r0,
            "r_unit": self.r_unit,
            "sigma": self.sigma,
            "axes": axes,
            "kappa": {a: self.kappa[a] for a in axes},
            "n_weighted": int(kept.sum()),
            "n_unweighted": {str(k): int(n) for k, n in reason.dropna().str.split(":").str[0].value_counts().items()},
            "weights": weight_summary(v),
            "weights_diagonal_rule": weight_summary(vd),
            "welfare": {
                "eq1": model.welfare(v, r),
                "diagonal": model.welfare(vd, r),
                "uniform": model.welfare(model.uniform(r), r),
                "first_best": model.first_best(),
            },
            "m_top_eigenvalue_over_median_m_ii": float(eig.max() / np.median(model.m_diag)),
            "sweep": table.to_dict("records"),
            "assumptions": list(ASSUMPTIONS),
        }
        self._finish(slopes.loc[ids], diagnostics={k: v for k, v in self.summary_.items() if k != "assumptions"})
        return self
