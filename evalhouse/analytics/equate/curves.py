"""Characteristic-curve equating of benchmark scores (paper 004, §3.1 and App. L.1, L.9).

Each benchmark ``i`` gets a two-parameter logistic curve ``f_i(θ) = 1/(1 + exp(-a_i(θ - b_i)))``
that maps a shared latent ability ``θ`` to the expected score on that benchmark, after the
benchmark's scores are normalised to ``[0, 1]``. Curves and abilities are fitted alternately:

1. ``θ`` starts at the standardised mean of each model's within-benchmark mid-rank percentiles
   (average ranks for ties).
2. Each round fits every ``(a_i, b_i)`` by bounded weighted least squares on its observed column
   (one batched projected Levenberg–Marquardt over all benchmarks at once), sets ``σ_i`` to the
   population SD of the observed fitted residuals, then fits every ``θ_m`` by a grid search over
   ``[-3.5, 3.5)`` in steps of 0.02 refined by a parabola through the best grid point and its
   neighbours, minimising ``Σ_i ω_i w_mi (s_mi - f_i(θ))² / σ_i²``; ``ω_i`` are optional benchmark
   weights (BoB passes its semantic inverse-density weights, 1 otherwise). ``θ`` is standardised
   to mean 0, variance 1 and the curves are re-expressed on the standardised scale.
3. From round 2 on, robust cell weights ``w = max(1e-3, min(1, (3/|z|)²))`` are computed from the
   previous round's standardised residuals ``z``; missing cells have weight 0.

Everything is vectorised over cells: the grid search is a chunked (models × grid × benchmarks)
contraction written as two matrix products, the curve fit accumulates its 2×2 normal equations
with ``np.bincount`` over observed cells. There is no Python loop over models, benchmarks or
cells; the only loops are over rounds, optimiser iterations and row chunks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

import numpy as np
import pandas as pd
from scipy.special import expit

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.equate.io import EquatingInputError, as_wide
from evalhouse.analytics.equate.kernels import (
    fit_curves_batched,
    fit_theta_grid,
    logit_start,
    midrank_percentiles,
    residual_sd,
    robust_cells,
    standardise,
)
from evalhouse.errors import InputError

WEIGHTINGS: tuple[str, ...] = ("unweighted", "inverse_variance")
Normalisation = Literal["minmax", "identity"]
NORMALISATIONS: tuple[str, ...] = ("minmax", "identity")
_NORMALISATION_TEXT = {
    "minmax": (
        "min-max per benchmark over the observed scores of the fitted models: "
        "s = (x - min) / (max - min), so 0 is the lowest and 1 the highest observed score; "
        "scores must already be oriented higher-is-better"
    ),
    "identity": "scores used as given; they must already lie in [0, 1] and be higher-is-better",
}
_INFO_SIGMA2_FLOOR = 1e-6
# Bytes of float64 working memory per row chunk of the grid search (models x grid and
# models x benchmarks blocks); keeps 10^4 x 500 inputs well below a gigabyte.


class CharacteristicCurveEquating(AnalysisEstimator):
    """Two-parameter characteristic curves per benchmark and one ability per model.

    Parameters
    ----------
    n_rounds : int
        Most alternating curve/ability rounds (paper: a fixed 6). The fit stops earlier once no
        ability moves by more than ``theta_tol`` in a round (``converged_``).
    theta_tol : float
        Convergence tolerance: the largest change of any θ over one round (0: run ``n_rounds``).
    weighting : {"unweighted", "inverse_variance"}
        How benchmarks weigh in each ability's objective: equally (default), or by ``1/σ_i²`` with
        the ``sigma_floor`` (the paper's; it gives a benchmark with a tiny residual scale, e.g. one
        observed by four models, a weight of up to 10⁸).
    min_observed : int
        Models with fewer observed (retained) benchmarks get ``θ = NaN`` and a reason (default 4).
    min_models : int
        Benchmarks observed for fewer fitted models are excluded with a reason (default 5).
    normalisation : {"minmax", "identity"}
        How raw scores become ``[0, 1]`` scores (see ``normalisation_`` after ``fit``).
    a_bounds, b_bounds : tuple of float
        Box constraints of discrimination and difficulty (paper: [0.2, 20], [-4, 4]).
    theta_range : tuple of float
        Half-open ability grid ``[lo, hi)``.
    grid_step : float
        Grid spacing (paper: 0.02).
    robust_cap, robust_floor : float
        Robust weight ``max(floor, min(1, (cap/|z|)²))`` applied from round 2.
    sigma_floor : float
        Lower bound of each residual scale ``σ_i``.
    max_iter : int
        Levenberg–Marquardt iterations per curve fit and round.
    tol : float
        Relative loss decrease below which a curve counts as converged.

    Attributes
    ----------
    theta_ : pd.Series
        Standardised ability for every input model (NaN for excluded models).
    theta_se_ : pd.Series
        Its standard error ``1 / sqrt(Σ_i f_i'(θ)² / σ_i²)`` over the model's observed benchmarks
        (the curvature of the least-squares objective at the optimum, curves held fixed).
    n_rounds_, converged_ : int, bool
        Rounds run, and whether the last one moved no θ by more than ``theta_tol``.
    a_, b_, sigma_, r2_ : pd.Series
        Curve parameters, residual scales and curve R² per fitted benchmark.
    scores_, residuals_, weights_, information_ : pd.DataFrame
        Normalised scores, standardised residuals ``z``, robust weights (0 = missing) and
        item information ``f'(θ)²/max(σ², 1e-6)`` over fitted models × benchmarks.
    excluded_models_, excluded_benchmarks_ : dict
        Identifier → reason for everything that was not fitted.
    round_log_ : list of dict
        Per round: largest parameter and ability change, boundary hits, optimiser status.
    normalisation_ : str
        How the scores were put on ``[0, 1]``.
    """

    kind = "equating"

    def __init__(
        self,
        n_rounds: int = 200,
        min_observed: int = 4,
        *,
        theta_tol: float = 1e-3,
        weighting: str = "unweighted",
        min_models: int = 5,
        normalisation: Normalisation = "minmax",
        a_bounds: tuple[float, float] = (0.2, 20.0),
        b_bounds: tuple[float, float] = (-4.0, 4.0),
        theta_range: tuple[float, float] = (-3.5, 3.5),
        grid_step: float = 0.02,
        robust_cap: float = 3.0,
        robust_floor: float = 1e-3,
        sigma_floor: float = 1e-4,
        max_iter: int = 100,
        tol: float = 1e-10,
    ) -> None:
        self.n_rounds = n_rounds
        self.min_observed = min_observed
        self.theta_tol = theta_tol
        self.weighting = weighting
        self.min_models = min_models
        self.normalisation = normalisation
        self.a_bounds = a_bounds
        self.b_bounds = b_bounds
        self.theta_range = theta_range
        self.grid_step = grid_step
        self.robust_cap = robust_cap
        self.robust_floor = robust_floor
        self.sigma_floor = sigma_floor
        self.max_iter = max_iter
        self.tol = tol

    # ------------------------------------------------------------------ validation
    def _validate(self) -> None:
        if self.normalisation not in NORMALISATIONS:
            raise InputError(f"normalisation={self.normalisation!r} is not one of {list(NORMALISATIONS)}")
        if self.weighting not in WEIGHTINGS:
            raise InputError(f"weighting={self.weighting!r} is not one of {list(WEIGHTINGS)}")
        if int(self.n_rounds) < 1:
            raise InputError(f"n_rounds must be >= 1, got {self.n_rounds}")
        if int(self.min_observed) < 1:
            raise InputError(f"min_observed must be >= 1, got {self.min_observed}")
        if int(self.min_models) < 2:
            raise InputError(f"min_models must be >= 2 (a curve needs two points), got {self.min_models}")
        for name in ("a_bounds", "b_bounds", "theta_range"):
            lo, hi = getattr(self, name)
            if not lo < hi:
                raise InputError(f"{name} must be (low, high) with low < high, got {(lo, hi)}")
        if self.a_bounds[0] <= 0:
            raise InputError("a_bounds must be positive: curves increase with ability")
        if not 0 < self.grid_step < (self.theta_range[1] - self.theta_range[0]) / 2:
            raise InputError(f"grid_step={self.grid_step} does not fit theta_range")

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        X: pd.DataFrame,
        y: None = None,
        *,
        benchmark_weights: Mapping[str, float] | pd.Series | None = None,
        snapshot_id: str | None = None,
    ) -> Self:
        """Fit curves and abilities on a wide or long score frame.

        Parameters
        ----------
        X : pd.DataFrame
            Wide (models × benchmarks, NaN = missing) or long (``model, benchmark, score``),
            higher-is-better.
        benchmark_weights : mapping, optional
            Positive per-benchmark weights ``ω_i`` in the ability objective (BoB passes its
            inverse-density weights ``u_i``); 1 for every benchmark when omitted.
        snapshot_id : str, optional
            Recorded in ``record_``.
        """
        self._start()
        self._validate()
        if snapshot_id is None and isinstance(X, pd.DataFrame):
            snapshot_id = X.attrs.get("snapshot_id")  # as_wide returns a fresh frame without attrs
        wide = as_wide(X)
        if wide.shape[0] == 0 or wide.shape[1] == 0 or not np.isfinite(wide.to_numpy()).any():
            raise EquatingInputError("empty input: no observed scores to equate")
        if wide.index.has_duplicates or wide.columns.has_duplicates:
            raise EquatingInputError("duplicate model or benchmark labels in the wide frame")

        models, benchmarks, excl_m, excl_b = self._prune(wide)
        if len(benchmarks) == 0:
            raise EquatingInputError(
                "no benchmark can be fitted: every benchmark has fewer than two distinct "
                f"observed values or fewer than {self.min_models} models "
                f"(reasons: {dict(list(excl_b.items())[:5])})"
            )
        if len(models) < 2:
            raise EquatingInputError(
                f"fewer than two models have >= {self.min_observed} observed benchmarks; "
                "abilities cannot be standardised"
            )
        raw = wide.loc[models, benchmarks].to_numpy(dtype=float)
        obs = np.isfinite(raw)
        S, lo, hi = self._normalise(raw)

        omega = self._benchmark_weights(benchmark_weights, benchmarks)
        result = self._fit_arrays(S, obs, omega)

        self.models_ = pd.Index(models, name="model")
        self.benchmarks_ = pd.Index(benchmarks, name="benchmark")
        theta_all = pd.Series(np.nan, index=wide.index, name="theta", dtype=float)
        theta_all.loc[models] = result["theta"]
        self.theta_ = theta_all
        self.theta_se_ = pd.Series(np.nan, index=wide.index, name="theta_se", dtype=float)
        self.theta_se_.loc[models] = result["theta_se"]
        self.n_rounds_ = len(result["log"])
        self.converged_ = bool(result["log"][-1]["max_abs_delta_theta"] < float(self.theta_tol))
        # Counted over the fitted benchmarks: the count that min_observed was checked against.
        self.n_observed_ = wide[benchmarks].notna().sum(axis=1).astype(int).rename("n_observed")
        self.excluded_models_ = excl_m
        self.excluded_benchmarks_ = excl_b
        self.a_ = pd.Series(result["a"], index=self.benchmarks_, name="a")
        self.b_ = pd.Series(result["b"], index=self.benchmarks_, name="b")
        self.sigma_ = pd.Series(result["sigma"], index=self.benchmarks_, name="sigma")
        self.r2_ = pd.Series(result["r2"], index=self.benchmarks_, name="r2")
        self.score_min_ = pd.Series(lo, index=self.benchmarks_, name="min")
        self.score_max_ = pd.Series(hi, index=self.benchmarks_, name="max")
        self.benchmark_weights_ = pd.Series(omega, index=self.benchmarks_, name="weight")

        def frame(values: np.ndarray) -> pd.DataFrame:
            return pd.DataFrame(values, index=self.models_, columns=self.benchmarks_)

        self.scores_ = frame(np.where(obs, S, np.nan))
        self.residuals_ = frame(result["z"])
        self.weights_ = frame(result["w"])
        self.information_ = frame(result["info"])
        self.round_log_ = result["log"]
        self.normalisation_ = _NORMALISATION_TEXT[self.normalisation]
        last = self.round_log_[-1]
        self._finish(
            wide,
            snapshot_id=snapshot_id,
            n_models_fitted=len(models),
            n_benchmarks_fitted=len(benchmarks),
            n_models_excluded=len(excl_m),
            benchmarks_excluded=excl_b,
            normalisation=self.normalisation_,
            final_round=last,
            converged=self.converged_,
            rounds=self.n_rounds_,
        )
        return self

    def _normalise(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Scores on [0, 1] (see ``normalisation``) and the per-benchmark observed minimum and maximum."""
        lo = np.nanmin(raw, axis=0)
        hi = np.nanmax(raw, axis=0)
        if self.normalisation == "minmax":
            return (raw - lo) / (hi - lo), lo, hi
        if np.nanmin(raw) < 0 or np.nanmax(raw) > 1:
            raise EquatingInputError("normalisation='identity' needs scores in [0, 1]; use 'minmax'")
        return raw.copy(), lo, hi

    # ------------------------------------------------------------------ pruning
    def _prune(self, wide: pd.DataFrame) -> tuple[list[str], list[str], dict[str, str], dict[str, str]]:
        """Iteratively drop models below ``min_observed`` and unfittable benchmarks, with reasons."""
        obs = wide.notna().to_numpy()
        vals = wide.to_numpy(dtype=float)
        rows = np.ones(obs.shape[0], dtype=bool)
        cols = np.ones(obs.shape[1], dtype=bool)
        excl_m: dict[str, str] = {}
        excl_b: dict[str, str] = {}
        while True:
            sub = obs & rows[:, None] & cols[None, :]
            n_col = sub.sum(axis=0)
            # Distinct observed values per column, vectorised: sort each column (NaN last) and
            # count value changes among the observed prefix.
            masked = np.where(sub, vals, np.nan)
            srt = np.sort(masked, axis=0)
            changes = np.diff(srt, axis=0) != 0
            valid_pair = np.isfinite(srt[1:]) & np.isfinite(srt[:-1])
            n_distinct = np.where(n_col > 0, 1 + (changes & valid_pair).sum(axis=0), 0)
            drop_c = cols & ((n_col < self.min_models) | (n_distinct < 2))
            for j in np.flatnonzero(drop_c):
                name = str(wide.columns[j])
                if n_col[j] == 0:
                    excl_b[name] = "no observed score among fitted models"
                elif n_distinct[j] < 2:
                    value = float(srt[0, j])
                    excl_b[name] = (
                        f"one distinct observed value ({value:g}) over {int(n_col[j])} models: "
                        "a characteristic curve needs variation"
                    )
                else:
                    excl_b[name] = f"observed for {int(n_col[j])} models < min_models={self.min_models}"
            cols &= ~drop_c
            n_row = (obs & cols[None, :]).sum(axis=1)
            drop_r = rows & (n_row < self.min_observed)
            for i in np.flatnonzero(drop_r):
                excl_m[str(wide.index[i])] = f"{int(n_row[i])} observed benchmark(s) < min_observed={self.min_observed}"
            rows &= ~drop_r
            if not drop_c.any() and not drop_r.any():
                break
        models = [str(m) for m in wide.index[rows]]
        benchmarks = [str(b) for b in wide.columns[cols]]
        return models, benchmarks, excl_m, excl_b

    @staticmethod
    def _benchmark_weights(weights: Mapping[str, float] | pd.Series | None, benchmarks: list[str]) -> np.ndarray:
        if weights is None:
            return np.ones(len(benchmarks))
        series = pd.Series(weights, dtype=float)
        missing = [b for b in benchmarks if b not in series.index]
        if missing:
            raise InputError(f"benchmark_weights lacks fitted benchmarks: {missing}")
        omega = series.loc[benchmarks].to_numpy(dtype=float)
        if not (np.isfinite(omega).all() and (omega > 0).all()):
            raise InputError("benchmark_weights must be finite and positive")
        return omega

    # ------------------------------------------------------------------ core
    def _fit_arrays(self, S: np.ndarray, obs: np.ndarray, omega: np.ndarray) -> dict[str, Any]:
        """Alternating fit on dense normalised scores ``S`` with observed mask ``obs``."""
        n_m, n_i = S.shape
        rows, cols = np.nonzero(obs)
        s_cells = S[rows, cols]
        grid = np.arange(self.theta_range[0], self.theta_range[1] - 1e-12, self.grid_step)
        a_lo, a_hi = self.a_bounds
        b_lo, b_hi = self.b_bounds

        # Initialisation: mean within-benchmark mid-rank percentile, standardised.
        pct = midrank_percentiles(S, obs)
        theta = np.nanmean(pct, axis=1)
        theta = standardise(theta)

        a, b = logit_start(theta[rows], s_cells, cols, n_i, a_bounds=self.a_bounds, b_bounds=self.b_bounds)
        sigma = np.ones(n_i)
        w_cells = np.ones_like(s_cells)
        log: list[dict[str, Any]] = []
        for rnd in range(1, int(self.n_rounds) + 1):
            if rnd >= 2:
                f_cells = expit(a[cols] * (theta[rows] - b[cols]))
                z_cells = (s_cells - f_cells) / sigma[cols]
                w_cells = robust_cells(z_cells, self.robust_cap, self.robust_floor)
            a_prev, b_prev, theta_prev = a.copy(), b.copy(), theta.copy()
            a, b, status, n_iter = fit_curves_batched(
                theta[rows],
                s_cells,
                w_cells,
                cols,
                n_i,
                a0=a,
                b0=b,
                a_bounds=self.a_bounds,
                b_bounds=self.b_bounds,
                max_iter=int(self.max_iter),
                tol=float(self.tol),
            )
            f_cells = expit(a[cols] * (theta[rows] - b[cols]))
            sigma = residual_sd(s_cells - f_cells, cols, n_i, self.sigma_floor)
            theta, edge = fit_theta_grid(
                S,
                obs,
                w_cells,
                rows,
                cols,
                a=a,
                b=b,
                sigma=sigma if self.weighting == "inverse_variance" else np.ones_like(sigma),
                omega=omega,
                grid=grid,
                step=self.grid_step,
            )
            mu, sd = float(theta.mean()), float(theta.std())
            if not sd > 0:
                raise EquatingInputError("all fitted abilities are equal: the scores carry no ranking information")
            theta = (theta - mu) / sd
            # Re-express the curves on the standardised scale so f is unchanged (a'=a*sd,
            # b'=(b-mu)/sd); clipping to the box only matters if a curve sat on a bound.
            a = np.clip(a * sd, a_lo, a_hi)
            b = np.clip((b - mu) / sd, b_lo, b_hi)
            log.append(
                self._round_entry(
                    rnd, (a, b, theta), (a_prev, b_prev, theta_prev), status=status, n_iter=n_iter, edge=edge
                )
            )
            log[-1]["robust_weighted_cells"] = int(np.sum(w_cells < 1.0))
            if log[-1]["max_abs_delta_theta"] < float(self.theta_tol):
                break

        f_cells = expit(a[cols] * (theta[rows] - b[cols]))
        r_cells = s_cells - f_cells
        z = np.full((n_m, n_i), np.nan)
        z[rows, cols] = r_cells / sigma[cols]
        w = np.zeros((n_m, n_i))
        w[rows, cols] = w_cells
        F = expit(a[None, :] * (theta[:, None] - b[None, :]))
        info = (a[None, :] * F * (1 - F)) ** 2 / np.maximum(sigma**2, _INFO_SIGMA2_FLOOR)[None, :]
        theta_se = 1.0 / np.sqrt(np.where(obs, info, 0.0).sum(axis=1))
        ss_res = np.bincount(cols, r_cells**2, minlength=n_i)
        mean_s = np.bincount(cols, s_cells, minlength=n_i) / np.bincount(cols, minlength=n_i)
        ss_tot = np.bincount(cols, (s_cells - mean_s[cols]) ** 2, minlength=n_i)
        r2 = 1 - ss_res / np.where(ss_tot > 0, ss_tot, np.nan)
        return {
            "theta": theta,
            "a": a,
            "b": b,
            "sigma": sigma,
            "z": z,
            "w": w,
            "info": info,
            "r2": r2,
            "log": log,
            "theta_se": theta_se,
        }

    def _round_entry(
        self,
        rnd: int,
        now: tuple[np.ndarray, ...],
        before: tuple[np.ndarray, ...],
        *,
        status: np.ndarray,
        n_iter: int,
        edge: int,
    ) -> dict[str, Any]:
        (a, b, theta), (a_prev, b_prev, theta_prev) = now, before
        a_lo, a_hi = self.a_bounds
        b_lo, b_hi = self.b_bounds
        return {
            "round": rnd,
            "max_abs_delta_a": float(np.max(np.abs(a - a_prev))),
            "max_abs_delta_b": float(np.max(np.abs(b - b_prev))),
            "max_abs_delta_theta": float(np.max(np.abs(theta - theta_prev))),
            "a_at_bound": int(np.sum(np.isclose(a, a_lo) | np.isclose(a, a_hi))),
            "b_at_bound": int(np.sum(np.isclose(b, b_lo) | np.isclose(b, b_hi))),
            "theta_at_grid_edge": int(edge),
            "optimizer_converged": int(np.sum(status == 1)),
            "optimizer_max_iter": int(np.sum(status == 2)),
            "optimizer_iterations": int(n_iter),
        }

    # ------------------------------------------------------------------ use
    def curve(self, theta: np.ndarray | float, benchmarks: list[str] | None = None) -> pd.DataFrame:
        """Expected normalised score ``f_i(θ)`` on a grid of abilities (rows) per benchmark."""
        cols = list(self.benchmarks_ if benchmarks is None else benchmarks)
        t = np.atleast_1d(np.asarray(theta, dtype=float))
        a = self.a_.loc[cols].to_numpy()
        b = self.b_.loc[cols].to_numpy()
        return pd.DataFrame(expit(a * (t[:, None] - b)), index=t, columns=cols)

    def item_information(self, theta: np.ndarray | float) -> pd.DataFrame:
        """Item information ``I_i(θ) = f_i'(θ)² / max(σ_i², 1e-6)`` on a grid of abilities."""
        F = self.curve(theta)
        a = self.a_.to_numpy()
        s2 = np.maximum(self.sigma_.to_numpy() ** 2, _INFO_SIGMA2_FLOOR)
        return (a * F * (1 - F)) ** 2 / s2

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: models (θ or a reason), benchmarks (a, b, σ), normalisation."""
        models = []
        for model, theta in self.theta_.items():
            row: dict[str, Any] = {
                "model": str(model),
                "theta": None if not np.isfinite(theta) else round(float(theta), 6),
                "theta_se": None if not np.isfinite(self.theta_se_[model]) else round(float(self.theta_se_[model]), 6),
                "n_observed": int(self.n_observed_.get(model, 0)),
            }
            if str(model) in self.excluded_models_:
                row["reason"] = self.excluded_models_[str(model)]
            models.append(row)
        benchmarks = [
            {
                "benchmark": str(bid),
                "a": round(float(self.a_[bid]), 6),
                "b": round(float(self.b_[bid]), 6),
                "sigma": round(float(self.sigma_[bid]), 6),
            }
            for bid in self.benchmarks_
        ]
        excluded = [{"benchmark": k, "reason": v} for k, v in self.excluded_benchmarks_.items()]
        return {
            "models": models,
            "benchmarks": benchmarks,
            "excluded_benchmarks": excluded,
            "normalisation": self.normalisation_,
            "rounds": self.round_log_,
            "converged": self.converged_,
        }


def theta_rows(eq: CharacteristicCurveEquating) -> list[dict[str, Any]]:
    """``analysis_theta`` rows: every input model, θ or NULL with the reason."""
    rows = []
    for model, theta in eq.theta_.items():
        rows.append(
            {
                "model_key": str(model),
                "theta": float(theta) if np.isfinite(theta) else None,
                "n_observed": int(eq.n_observed_.get(model, 0)),
                "reason": eq.excluded_models_.get(str(model)),
            }
        )
    return rows


def curve_rows(eq: CharacteristicCurveEquating) -> list[dict[str, Any]]:
    """``analysis_curve`` rows: a, b, σ and the number of fitted models observed per benchmark."""
    counts = eq.scores_.notna().sum()
    return [
        {
            "benchmark_id": str(bid),
            "a": float(eq.a_[bid]),
            "b": float(eq.b_[bid]),
            "sigma": float(eq.sigma_[bid]),
            "n_observed": int(counts[bid]),
        }
        for bid in eq.benchmarks_
    ]
