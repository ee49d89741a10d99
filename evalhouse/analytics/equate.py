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
from pathlib import Path
from typing import Any, Literal, Self

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import rankdata

from evalhouse.analytics.base import AnalysisEstimator

Normalisation = Literal["minmax", "identity"]
NORMALISATIONS: tuple[str, ...] = ("minmax", "identity")
LONG_COLUMNS: tuple[str, str, str] = ("model", "benchmark", "score")
_MISSING_TOKENS = frozenset({"", "NA", "NAN", "N/A", "NULL"})  # long-CSV score cells read as "not observed"

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
_CHUNK_BYTES = 32 * 2**20


class EquatingInputError(ValueError):
    """The score matrix cannot be equated (empty, constant, malformed)."""


def as_wide(X: pd.DataFrame) -> pd.DataFrame:
    """Return ``X`` as a wide float frame (rows = models, columns = benchmarks, NaN = missing).

    A frame whose columns include ``model``, ``benchmark`` and ``score`` is taken as long and
    pivoted; any other frame is taken as already wide. Zero is an observed value.

    Raises
    ------
    EquatingInputError
        Duplicate (model, benchmark) rows in a long frame, non-numeric or infinite scores.
    """
    if not isinstance(X, pd.DataFrame):
        raise EquatingInputError(f"expected a pandas DataFrame, got {type(X).__name__}")
    if set(LONG_COLUMNS) <= set(X.columns):
        dup = X.duplicated(subset=["model", "benchmark"], keep=False)
        if dup.any():
            first = X.loc[dup, ["model", "benchmark"]].iloc[0].tolist()
            raise EquatingInputError(
                f"{int(dup.sum())} duplicate (model, benchmark) rows in the long frame, "
                f"e.g. {first}; resolve conflicts before equating"
            )
        scores = pd.to_numeric(X["score"], errors="coerce")
        wide = X.assign(score=scores).dropna(subset=["score"]).pivot(index="model", columns="benchmark", values="score")
        wide.index = wide.index.astype(str)
        wide.columns = wide.columns.astype(str)
        wide.index.name, wide.columns.name = "model", "benchmark"
    else:
        wide = X.apply(pd.to_numeric, errors="coerce")
        bad = X.notna() & wide.isna()
        if bad.to_numpy().any():
            col = bad.any().idxmax()
            raise EquatingInputError(f"non-numeric score in benchmark column {col!r}")
    values = wide.to_numpy(dtype=float, na_value=np.nan)
    if np.isinf(values).any():
        raise EquatingInputError("infinite scores in the input")
    return pd.DataFrame(values, index=wide.index, columns=wide.columns)


def _midrank_percentiles(S: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Within-column mid-rank percentiles ``(rank - 0.5) / n`` with average ranks for ties."""
    filled = np.where(obs, S, np.nan)
    # rankdata with nan_policy="omit" ranks each column over its observed cells only.
    ranks = rankdata(filled, axis=0, method="average", nan_policy="omit")
    n = obs.sum(axis=0)
    return np.where(obs, (ranks - 0.5) / np.maximum(n, 1), np.nan)


def robust_weights(z: np.ndarray, cap: float = 3.0, floor: float = 1e-3) -> np.ndarray:
    """Robust cell weights ``max(floor, min(1, (cap/|z|)²))``; NaN (missing) cells get 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.minimum(1.0, (cap / np.abs(z)) ** 2)
    w = np.maximum(floor, w)
    return np.where(np.isnan(z), 0.0, w)


class CharacteristicCurveEquating(AnalysisEstimator):
    """Two-parameter characteristic curves per benchmark and one ability per model.

    Parameters
    ----------
    n_rounds : int
        Alternating curve/ability rounds (paper: 6).
    min_observed : int
        Models with fewer observed (retained) benchmarks get ``θ = NaN`` and a reason.
    min_models : int
        Benchmarks observed for fewer fitted models are excluded with a reason.
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
        n_rounds: int = 6,
        min_observed: int = 3,
        *,
        min_models: int = 3,
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
            raise ValueError(f"normalisation={self.normalisation!r} is not one of {list(NORMALISATIONS)}")
        if int(self.n_rounds) < 1:
            raise ValueError(f"n_rounds must be >= 1, got {self.n_rounds}")
        if int(self.min_observed) < 1:
            raise ValueError(f"min_observed must be >= 1, got {self.min_observed}")
        if int(self.min_models) < 2:
            raise ValueError(f"min_models must be >= 2 (a curve needs two points), got {self.min_models}")
        for name in ("a_bounds", "b_bounds", "theta_range"):
            lo, hi = getattr(self, name)
            if not lo < hi:
                raise ValueError(f"{name} must be (low, high) with low < high, got {(lo, hi)}")
        if self.a_bounds[0] <= 0:
            raise ValueError("a_bounds must be positive: curves increase with ability")
        if not 0 < self.grid_step < (self.theta_range[1] - self.theta_range[0]) / 2:
            raise ValueError(f"grid_step={self.grid_step} does not fit theta_range")

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
        lo = np.nanmin(raw, axis=0)
        hi = np.nanmax(raw, axis=0)
        if self.normalisation == "minmax":
            S = (raw - lo) / (hi - lo)
        else:
            if np.nanmin(raw) < 0 or np.nanmax(raw) > 1:
                raise EquatingInputError("normalisation='identity' needs scores in [0, 1]; use 'minmax'")
            S = raw.copy()

        omega = self._benchmark_weights(benchmark_weights, benchmarks)
        result = self._fit_arrays(S, obs, omega)

        self.models_ = pd.Index(models, name="model")
        self.benchmarks_ = pd.Index(benchmarks, name="benchmark")
        theta_all = pd.Series(np.nan, index=wide.index, name="theta", dtype=float)
        theta_all.loc[models] = result["theta"]
        self.theta_ = theta_all
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
        )
        return self

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
            raise ValueError(f"benchmark_weights lacks fitted benchmarks: {missing}")
        omega = series.loc[benchmarks].to_numpy(dtype=float)
        if not (np.isfinite(omega).all() and (omega > 0).all()):
            raise ValueError("benchmark_weights must be finite and positive")
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
        pct = _midrank_percentiles(S, obs)
        theta = np.nanmean(pct, axis=1)
        theta = _standardise(theta)

        a, b = _logit_start(theta[rows], s_cells, cols, n_i, a_bounds=self.a_bounds, b_bounds=self.b_bounds)
        sigma = np.ones(n_i)
        w_cells = np.ones_like(s_cells)
        log: list[dict[str, Any]] = []
        for rnd in range(1, int(self.n_rounds) + 1):
            if rnd >= 2:
                f_cells = expit(a[cols] * (theta[rows] - b[cols]))
                z_cells = (s_cells - f_cells) / sigma[cols]
                w_cells = _robust_cells(z_cells, self.robust_cap, self.robust_floor)
            a_prev, b_prev, theta_prev = a.copy(), b.copy(), theta.copy()
            a, b, status, n_iter = _fit_curves_batched(
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
            sigma = _residual_sd(s_cells - f_cells, cols, n_i, self.sigma_floor)
            theta, edge = _fit_theta_grid(
                S,
                obs,
                w_cells,
                rows,
                cols,
                a=a,
                b=b,
                sigma=sigma,
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
                {
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
                    "robust_weighted_cells": int(np.sum(w_cells < 1.0)),
                }
            )

        f_cells = expit(a[cols] * (theta[rows] - b[cols]))
        r_cells = s_cells - f_cells
        z = np.full((n_m, n_i), np.nan)
        z[rows, cols] = r_cells / sigma[cols]
        w = np.zeros((n_m, n_i))
        w[rows, cols] = w_cells
        F = expit(a[None, :] * (theta[:, None] - b[None, :]))
        info = (a[None, :] * F * (1 - F)) ** 2 / np.maximum(sigma**2, _INFO_SIGMA2_FLOOR)[None, :]
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
        }


# ---------------------------------------------------------------------- numerical kernels
def _standardise(x: np.ndarray) -> np.ndarray:
    sd = float(np.std(x))
    if not sd > 0:
        raise EquatingInputError("all initial abilities are equal: every model has the same within-benchmark ranks")
    return (x - float(np.mean(x))) / sd


def _robust_cells(z: np.ndarray, cap: float, floor: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.maximum(floor, np.minimum(1.0, (cap / np.abs(z)) ** 2))


def _residual_sd(r: np.ndarray, cols: np.ndarray, n_i: int, floor: float) -> np.ndarray:
    """Population SD of the observed residuals per benchmark, floored."""
    n = np.bincount(cols, minlength=n_i).astype(float)
    mean = np.bincount(cols, r, minlength=n_i) / n
    var = np.bincount(cols, (r - mean[cols]) ** 2, minlength=n_i) / n
    return np.maximum(np.sqrt(var), floor)


def _logit_start(
    t: np.ndarray,
    s: np.ndarray,
    cols: np.ndarray,
    n_i: int,
    *,
    a_bounds: tuple[float, float],
    b_bounds: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray]:
    """Per-benchmark linear regression of logit(s) on θ as a starting point (a = slope)."""
    y = np.log(np.clip(s, 0.02, 0.98) / (1 - np.clip(s, 0.02, 0.98)))
    n = np.bincount(cols, minlength=n_i).astype(float)
    mt = np.bincount(cols, t, minlength=n_i) / n
    my = np.bincount(cols, y, minlength=n_i) / n
    ctt = np.bincount(cols, (t - mt[cols]) ** 2, minlength=n_i)
    cty = np.bincount(cols, (t - mt[cols]) * (y - my[cols]), minlength=n_i)
    slope = np.where(ctt > 0, cty / np.where(ctt > 0, ctt, 1), 1.0)
    a = np.clip(slope, *a_bounds)
    b = np.clip(mt - my / a, *b_bounds)
    return a, b


def _fit_curves_batched(
    t: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    cols: np.ndarray,
    n_i: int,
    *,
    a0: np.ndarray,
    b0: np.ndarray,
    a_bounds: tuple[float, float],
    b_bounds: tuple[float, float],
    max_iter: int,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Bounded weighted least squares for all curves at once (projected Levenberg–Marquardt).

    Minimises ``Σ_m w_mi (s_mi - f(θ_m; a_i, b_i))²`` per benchmark. The 2×2 normal equations of
    every benchmark are accumulated with ``bincount`` over observed cells and solved in closed
    form; a parameter sitting on a bound whose descent direction points outward is held fixed
    (active set), the others take the damped Gauss–Newton step, and the trial point is
    projected onto the box. Status per benchmark: 1 converged, 2 hit ``max_iter``.
    """
    a, b = a0.astype(float).copy(), b0.astype(float).copy()
    a_lo, a_hi = a_bounds
    b_lo, b_hi = b_bounds

    def loss_of(a_: np.ndarray, b_: np.ndarray) -> np.ndarray:
        r = s - expit(a_[cols] * (t - b_[cols]))
        return np.bincount(cols, w * r * r, minlength=n_i)

    loss = loss_of(a, b)
    mu = np.full(n_i, 1e-3)
    done = np.zeros(n_i, dtype=bool)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        ac, bc = a[cols], b[cols]
        d = t - bc
        f = expit(ac * d)
        r = s - f
        dfd = f * (1 - f)
        ja = dfd * d
        jb = -ac * dfd
        ga = np.bincount(cols, w * ja * r, minlength=n_i)
        gb = np.bincount(cols, w * jb * r, minlength=n_i)
        haa = np.bincount(cols, w * ja * ja, minlength=n_i)
        hab = np.bincount(cols, w * ja * jb, minlength=n_i)
        hbb = np.bincount(cols, w * jb * jb, minlength=n_i)
        # Active set: on a bound with the (descent) gradient pointing out of the box.
        act_a = ((a <= a_lo) & (ga < 0)) | ((a >= a_hi) & (ga > 0))
        act_b = ((b <= b_lo) & (gb < 0)) | ((b >= b_hi) & (gb > 0))
        daa = haa * (1 + mu) + 1e-12
        dbb = hbb * (1 + mu) + 1e-12
        det = daa * dbb - hab * hab
        det = np.where(det > 0, det, 1e-300)
        step_a = (dbb * ga - hab * gb) / det
        step_b = (daa * gb - hab * ga) / det
        step_a = np.where(act_b & ~act_a, ga / daa, step_a)
        step_b = np.where(act_a & ~act_b, gb / dbb, step_b)
        step_a = np.where(act_a | done, 0.0, step_a)
        step_b = np.where(act_b | done, 0.0, step_b)
        a_new = np.clip(a + step_a, a_lo, a_hi)
        b_new = np.clip(b + step_b, b_lo, b_hi)
        new_loss = loss_of(a_new, b_new)
        accept = (new_loss <= loss) & ~done
        small = (loss - new_loss) <= tol * (loss + tol)
        moved = np.maximum(np.abs(a_new - a), np.abs(b_new - b))
        # Converged when an accepted step no longer lowers the loss, the projected step is
        # (numerically) zero, or damping has grown so large that no descent is left.
        newly_done = ~done & ((accept & small) | (moved < 1e-12) | (mu > 1e12))
        a = np.where(accept, a_new, a)
        b = np.where(accept, b_new, b)
        loss = np.where(accept, new_loss, loss)
        mu = np.where(accept, np.maximum(mu * 0.3, 1e-12), mu * 10.0)
        done |= newly_done
        if done.all():
            break
    status = np.where(done, 1, 2)
    return a, b, status, it


def _fit_theta_grid(
    S: np.ndarray,
    obs: np.ndarray,
    w_cells: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    *,
    a: np.ndarray,
    b: np.ndarray,
    sigma: np.ndarray,
    omega: np.ndarray,
    grid: np.ndarray,
    step: float,
) -> tuple[np.ndarray, int]:
    """Grid search plus parabolic refinement of every ability, batched over models.

    ``L_m(g) = Σ_i B_mi (s_mi - f_i(g))² = const - 2 (A F)_mg + (B F²)_mg`` with
    ``B = ω w / σ²`` and ``A = B s``: the (models × grid × benchmarks) contraction is two matrix
    products per row chunk. The three losses around each minimum are then recomputed exactly
    from the observed cells (no cancellation) for the parabola.
    """
    n_m, n_i = S.shape
    k = grid.size
    F = expit(a[:, None] * (grid[None, :] - b[:, None]))  # benchmarks × grid
    F2 = F * F
    Wd = np.zeros((n_m, n_i))
    Wd[rows, cols] = w_cells
    scale = omega / sigma**2
    chunk = max(1, int(_CHUNK_BYTES // (8 * (3 * n_i + 2 * k))))
    best = np.empty(n_m, dtype=np.int64)
    for start in range(0, n_m, chunk):
        stop = min(n_m, start + chunk)
        B = Wd[start:stop] * scale[None, :]
        A = B * np.where(obs[start:stop], S[start:stop], 0.0)
        L = B @ F2 - 2.0 * (A @ F)
        best[start:stop] = np.argmin(L, axis=1)
    idx = np.clip(best, 1, k - 2)
    # Exact losses at idx-1, idx, idx+1 from the observed cells.
    cb = scale[cols] * w_cells
    s_cells = S[rows, cols]
    losses = np.empty((3, n_m))
    for j, off in enumerate((-1, 0, 1)):
        g = grid[idx[rows] + off]
        r = s_cells - expit(a[cols] * (g - b[cols]))
        losses[j] = np.bincount(rows, cb * r * r, minlength=n_m)
    lm, l0, lp = losses
    denom = lm - 2 * l0 + lp
    with np.errstate(divide="ignore", invalid="ignore"):
        offset = 0.5 * step * (lm - lp) / denom
    interior = (best > 0) & (best < k - 1)
    ok = interior & (denom > 0) & np.isfinite(offset)
    offset = np.where(ok, np.clip(offset, -step, step), 0.0)
    theta = grid[best] + np.where(best == idx, offset, 0.0)
    edge = int(np.sum(~interior))
    return theta, edge


# ---------------------------------------------------------------------- CSV API
def equate_long_csv(
    path: str | Path,
    min_observed: int = 3,
    *,
    n_rounds: int = 6,
) -> dict[str, Any]:
    """Equate a long CSV (``model, benchmark, score``; higher-is-better) for the CLI.

    Returns ``{"models": [{"model", "theta", "n_observed"[, "reason"]}], "benchmarks":
    [{"benchmark", "a", "b", "sigma"}], "excluded_benchmarks": [...], "normalisation": str,
    "rounds": [...]}``; models below ``min_observed`` carry ``theta: None`` and a ``reason``.

    A blank (or ``NA``, ``NaN``, ``N/A``, ``null``) ``score`` means "not observed" and the row
    is skipped; a score that is not a
    number, a blank ``model`` or ``benchmark``, or a file with no rows raises
    :class:`EquatingInputError` naming the CSV line.
    """
    try:
        frame = pd.read_csv(path, dtype={"model": str, "benchmark": str, "score": str}, keep_default_na=False)
    except pd.errors.EmptyDataError as exc:
        raise EquatingInputError(f"{path}: empty file; need a header {','.join(LONG_COLUMNS)} and rows") from exc
    missing = [c for c in LONG_COLUMNS if c not in frame.columns]
    if missing:
        raise EquatingInputError(f"{path}: long CSV lacks columns {missing}; need {list(LONG_COLUMNS)}")
    for col in ("model", "benchmark"):
        blank = frame[col].str.strip() == ""
        if blank.any():
            line = int(np.flatnonzero(blank.to_numpy())[0]) + 2  # header is line 1
            raise EquatingInputError(f"{path}: blank {col} on line {line} ({int(blank.sum())} such rows)")
    text = frame["score"].str.strip()
    absent = text.str.upper().isin(_MISSING_TOKENS)
    scores = pd.to_numeric(text.where(~absent), errors="coerce")
    bad = ~absent & scores.isna()
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        raise EquatingInputError(
            f"{path}: non-numeric score {frame['score'].iloc[first]!r} on line {first + 2} "
            f"({int(bad.sum())} such rows); scores must be numbers (blank or NA = not observed)"
        )
    frame = frame.assign(score=scores).dropna(subset=["score"])
    if frame.empty:
        raise EquatingInputError(f"{path}: no observed scores")
    est = CharacteristicCurveEquating(n_rounds=n_rounds, min_observed=min_observed).fit(frame)
    out = est.to_dict()
    out["run_id"] = est.record_.run_id
    return out


def simulate_2pl(
    n_models: int,
    n_benchmarks: int,
    density: float = 1.0,
    noise: float = 0.03,
    random_state: int | None = 0,
) -> tuple[pd.DataFrame, pd.Series, pd.DataFrame]:
    """Synthetic scores from known 2PL curves (for tests and the benchmark script).

    Returns ``(wide, theta, params)`` with ``params`` holding true ``a`` and ``b`` per benchmark.
    Each model keeps at least three observed cells so it stays fittable at any density.
    """
    rng = np.random.default_rng(random_state)
    theta = rng.standard_normal(n_models)
    a = rng.uniform(0.6, 3.0, n_benchmarks)
    b = rng.uniform(-1.5, 1.5, n_benchmarks)
    P = expit(a[None, :] * (theta[:, None] - b[None, :]))
    P = np.clip(P + noise * rng.standard_normal(P.shape), 0.0, 1.0)
    mask = rng.random(P.shape) < density
    keep = np.argsort(rng.random(P.shape), axis=1)[:, :3]
    mask[np.arange(n_models)[:, None], keep] = True
    P[~mask] = np.nan
    idx = pd.Index([f"m{i:05d}" for i in range(n_models)], name="model")
    cols = pd.Index([f"b{j:04d}" for j in range(n_benchmarks)], name="benchmark")
    params = pd.DataFrame({"a": a, "b": b}, index=cols)
    return pd.DataFrame(P, index=idx, columns=cols), pd.Series(theta, index=idx), params


__all__ = [
    "LONG_COLUMNS",
    "NORMALISATIONS",
    "CharacteristicCurveEquating",
    "EquatingInputError",
    "as_wide",
    "equate_long_csv",
    "robust_weights",
    "simulate_2pl",
]
