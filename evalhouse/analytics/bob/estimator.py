"""The Balance of Benchmarks estimator (paper 004 §3.3): a task-conditioned field on fitted curves.

The density weights, relevance and field arithmetic are in :mod:`evalhouse.analytics.bob.density`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
import pandas as pd

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.bob.density import (
    DENSITY_MODES,
    INFORMATION_MODES,
    SHRINKAGES,
    DensityMode,
    Information,
    Shrinkage,
    bob_field,
    density_weights,
    information_weights,
    relevance,
)
from evalhouse.analytics.bob.encoders import Encoder, angular_distance, l2_normalise
from evalhouse.analytics.equate.curves import CharacteristicCurveEquating
from evalhouse.analytics.equate.io import as_wide
from evalhouse.errors import InputError


@dataclass
class TaskComparison:
    """Result of :meth:`BalanceOfBenchmarks.predict`."""

    table: pd.DataFrame
    nearest: pd.DataFrame
    movers: pd.DataFrame
    bandwidth: float
    h: float

    def to_dict(self, top: int = 10) -> dict[str, Any]:
        cols = ["model", "task_score", "theta", "support", "rank_task", "rank_theta"]
        return {
            "bandwidth_multiple": self.bandwidth,
            "h": self.h,
            "median_support": float(self.table["support"].median()),
            "nearest_benchmarks": self.nearest.round(6).to_dict("records"),
            "ranking": self.table.head(top).reset_index()[cols].round(6).to_dict("records"),
            "movers": self.movers.head(top).reset_index()[cols].round(6).to_dict("records"),
        }


class BalanceOfBenchmarks(AnalysisEstimator):
    """Task-conditioned comparison on top of fitted characteristic curves.

    Parameters
    ----------
    bandwidth : float
        Field scale ``h`` as a multiple of the median pairwise description distance
        (paper candidates 0.30, 0.45, 0.60; all AA folds selected 0.45).
    density_scale : float
        ``h_dens`` as a multiple of the median distance (paper: 0.25).
    shrinkage : {"support", "constant", "none"}
        BoB–Support ``β = λP/(P+α)``, BoB–Constant ``β = c``, or ``β = 1``.
    lam, alpha : float
        BoB–Support constants (paper: 1, 1).
    constant : float, optional
        BoB–Constant coefficient; ``None`` = median support factor per query.
    information : {"mean", "cell", "normalised", "none"}
        Item-information weights in ``r̄``: each benchmark's mean item information (default, the
        paper's), the cell's own ``I_mi = f_i'(θ_m)²/σ_i²``, that divided by the benchmark mean,
        or none (see :mod:`evalhouse.analytics.bob.density`).
    density : {"inverse", "flat"}
        Inverse-density ``u`` or the flat ``u ≡ 1`` control in the relevance.

    Attributes
    ----------
    benchmarks_ : pd.Index
    distances_ : pd.DataFrame
        Angular distances between benchmark descriptions.
    median_distance_, h_dens_, h_, total_mass_ : float
    u_, v_ : pd.Series
        Inverse-density weights and their normalised form.
    encoder_ : dict
        Identity of the encoder that made the embeddings.
    """

    kind = "bob"

    def __init__(
        self,
        bandwidth: float = 0.45,
        density_scale: float = 0.25,
        *,
        shrinkage: Shrinkage = "support",
        lam: float = 1.0,
        alpha: float = 1.0,
        constant: float | None = None,
        information: Information = "mean",
        density: DensityMode = "inverse",
    ) -> None:
        self.bandwidth = bandwidth
        self.density_scale = density_scale
        self.shrinkage = shrinkage
        self.lam = lam
        self.alpha = alpha
        self.constant = constant
        self.information = information
        self.density = density

    def fit(
        self,
        equating: CharacteristicCurveEquating,
        embeddings: pd.DataFrame,
        *,
        encoder: Encoder | Mapping[str, Any] | None = None,
        snapshot_id: str | None = None,
    ) -> Self:
        """Attach description embeddings to a fitted equating.

        Parameters
        ----------
        equating : CharacteristicCurveEquating
            Fitted; ideally with ``benchmark_weights = u`` (see :func:`fit_bob`).
        embeddings : pd.DataFrame
            Unit vectors, index = benchmark ids covering ``equating.benchmarks_``;
            ``attrs["encoder"]`` (set by :func:`embed_benchmarks`) names the encoder.
        encoder : Encoder or mapping, optional
            Encoder identity, when the frame does not carry it.
        """
        self._start()
        if self.shrinkage not in SHRINKAGES:
            raise InputError(f"shrinkage={self.shrinkage!r} is not one of {list(SHRINKAGES)}")
        if self.information not in INFORMATION_MODES:
            raise InputError(f"information={self.information!r} is not one of {list(INFORMATION_MODES)}")
        if self.density not in DENSITY_MODES:
            raise InputError(f"density={self.density!r} is not one of {list(DENSITY_MODES)}")
        if not self.bandwidth > 0 or not self.density_scale > 0:
            raise InputError("bandwidth and density_scale must be positive")
        if not hasattr(equating, "theta_"):
            raise InputError("equating must be a fitted CharacteristicCurveEquating")
        benchmarks = equating.benchmarks_
        missing = [b for b in benchmarks if b not in embeddings.index]
        if missing:
            raise InputError(f"no embedding for fitted benchmark(s) {missing}")
        X = l2_normalise(embeddings.loc[list(benchmarks)].to_numpy(dtype=float))
        D = angular_distance(X)
        dens = density_weights(D, self.density_scale, mode=self.density)
        self.benchmarks_ = benchmarks
        self.vectors_ = X
        self.distances_ = pd.DataFrame(D, index=benchmarks, columns=benchmarks)
        self.median_distance_ = dens.median_distance
        self.h_dens_ = dens.h
        self.h_ = self.bandwidth * dens.median_distance
        self.total_mass_ = dens.total
        self.u_ = pd.Series(dens.u, index=benchmarks, name="u")
        self.v_ = pd.Series(dens.v, index=benchmarks, name="v")
        if isinstance(encoder, Encoder):
            ident: dict[str, Any] = encoder.identity
        elif encoder is not None:
            ident = dict(encoder)
        else:
            ident = dict(embeddings.attrs.get("encoder", {}))
        self.encoder_ = ident
        self.equating_ = equating
        weighted = not np.allclose(equating.benchmark_weights_.to_numpy(), 1.0)
        self._finish(
            embeddings.loc[list(benchmarks)],
            snapshot_id=snapshot_id or equating.record_.snapshot_id,
            encoder=ident,
            equating_run_id=equating.record_.run_id,
            theta_density_weighted=bool(weighted),
            median_distance=self.median_distance_,
            h_dens=self.h_dens_,
            h=self.h_,
            total_mass=self.total_mass_,
        )
        return self

    def field(self, query_vec: np.ndarray) -> dict[str, np.ndarray]:
        """Raw arrays (``y``, ``support``, ``beta``, ``rbar``, ``distance``, ``g``) for a query vector."""
        q = np.asarray(query_vec, dtype=float).ravel() if query_vec is not None else np.zeros(0)
        if q.size == 0 or not np.isfinite(q).all() or not np.linalg.norm(q) > 0:
            raise InputError("empty query: pass a non-zero embedding of a non-empty task text")
        if q.size != self.vectors_.shape[1]:
            raise InputError(
                f"query vector has dimension {q.size}, embeddings have {self.vectors_.shape[1]} "
                f"(encoder {self.encoder_})"
            )
        q = q / np.linalg.norm(q)
        dist = angular_distance(q[None, :], self.vectors_)[0]
        g = relevance(dist, self.u_.to_numpy(), self.h_)
        eq = self.equating_
        models = eq.models_
        Wt = eq.weights_.to_numpy()
        out = bob_field(
            eq.theta_.loc[models].to_numpy(),
            eq.residuals_.to_numpy(),
            Wt,
            g,
            information_weights(eq.information_.to_numpy(), Wt, self.information),
            shrinkage=self.shrinkage,
            lam=self.lam,
            alpha=self.alpha,
            constant=self.constant,
        )
        out["distance"] = dist
        out["g"] = g
        return out

    def predict(self, query_vec: np.ndarray, top: int = 10) -> TaskComparison:
        """Per-model θ, task score, support, ranks; nearest benchmarks; biggest movers vs θ."""
        out = self.field(query_vec)
        eq = self.equating_
        table = pd.DataFrame(
            {
                "theta": eq.theta_.loc[eq.models_].to_numpy(),
                "task_score": out["y"],
                "support": out["support"],
                "beta": out["beta"],
                "residual_mean": out["rbar"],
            },
            index=eq.models_,
        )
        table["rank_theta"] = table["theta"].rank(ascending=False, method="min").astype(int)
        table["rank_task"] = table["task_score"].rank(ascending=False, method="min").astype(int)
        table["rank_change"] = table["rank_theta"] - table["rank_task"]
        table = table.sort_values(["task_score", "theta"], ascending=False)
        nearest = (
            pd.DataFrame(
                {
                    "benchmark": self.benchmarks_,
                    "distance": out["distance"],
                    "relevance": out["g"],
                    "u": self.u_.to_numpy(),
                }
            )
            .sort_values("distance")
            .head(top)
            .reset_index(drop=True)
        )
        movers = table.reindex(table["rank_change"].abs().sort_values(ascending=False, kind="stable").index)
        return TaskComparison(table=table, nearest=nearest, movers=movers, bandwidth=self.bandwidth, h=self.h_)

    def explain(self, query_vec: np.ndarray, model: str) -> tuple[dict[str, Any], pd.DataFrame]:
        """Why ``model`` lands where it does for a query: its summary and one row per benchmark.

        Rows: observed, raw and normalised score, fitted curve value f(θ), residual scale σ,
        standardised residual z, robust weight w, information weight, distance to the query,
        relevance g (with u), the cell's share of the residual mean's weight (g w I / Σ g w I),
        and its contribution β · share · z to the task score, so θ + Σ contributions = task score
        (θ alone at zero support).
        """
        eq = self.equating_
        if model not in eq.models_:
            raise InputError(f"{model!r} is not among the fitted models")
        out = self.field(query_vec)
        i = eq.models_.get_loc(model)
        Wt = eq.weights_.to_numpy()
        info_all = information_weights(eq.information_.to_numpy(), Wt, self.information)
        info = np.ones(Wt.shape[1]) if info_all is None else np.asarray(info_all)[i]
        w = Wt[i]
        z = eq.residuals_.to_numpy()[i]
        g = out["g"]
        a = g * w * info
        share = a / a.sum() if a.sum() > 0 else np.zeros_like(a)
        beta = float(out["beta"][i])
        theta = float(eq.theta_.loc[model])
        span = (eq.score_max_ - eq.score_min_).to_numpy()
        s = eq.scores_.to_numpy()[i]
        rows = pd.DataFrame(
            {
                "observed": w > 0,
                "raw": eq.score_min_.to_numpy() + s * span,
                "score": s,
                "fitted": eq.curve(theta).to_numpy().ravel(),
                "sigma": eq.sigma_.to_numpy(),
                "z": z,
                "robust_weight": w,
                "information": info,
                "distance": out["distance"],
                "relevance": g,
                "u": self.u_.to_numpy(),
                "share": share,
                "contribution": np.where(w > 0, beta * share * np.nan_to_num(z), 0.0),
            },
            index=eq.benchmarks_,
        ).sort_values("share", ascending=False)
        ranks = pd.Series(out["y"], index=eq.models_).rank(ascending=False, method="min")
        theta_ranks = eq.theta_.loc[eq.models_].rank(ascending=False, method="min")
        summary = {
            "model": str(model),
            "theta": theta,
            "rank_theta": int(theta_ranks.loc[model]),
            "task_score": float(out["y"][i]),
            "rank_task": int(ranks.loc[model]),
            "n_models": len(eq.models_),
            "support": float(out["support"][i]),
            "beta": beta,
            "residual_mean": float(out["rbar"][i]),
            "n_observed": int((w > 0).sum()),
            "information": self.information,
            "shrinkage": self.shrinkage,
        }
        return summary, rows


def fit_bob(
    wide: pd.DataFrame,
    embeddings: pd.DataFrame,
    *,
    equating_params: Mapping[str, Any] | None = None,
    snapshot_id: str | None = None,
    **bob_params: Any,
) -> tuple[CharacteristicCurveEquating, BalanceOfBenchmarks]:
    """The full BoB fit: density weights from the descriptions, then density-weighted equating.

    The density weights enter the ability objective as ``ω_i = u_i`` (the paper's duplication
    analysis and ``u ≡ 1`` control only make sense if they do), then the field is attached.
    """
    if snapshot_id is None:
        snapshot_id = wide.attrs.get("snapshot_id")  # as_wide returns a frame without attrs
    wide = as_wide(wide)
    bob = BalanceOfBenchmarks(**bob_params)
    cols = [c for c in wide.columns if c in embeddings.index]
    missing = [c for c in wide.columns if c not in embeddings.index]
    if missing:
        raise InputError(f"no embedding for benchmark(s) {missing}")
    X = l2_normalise(embeddings.loc[cols].to_numpy(dtype=float))
    dens = density_weights(angular_distance(X), bob.density_scale, mode=bob.density)
    eq = CharacteristicCurveEquating(**dict(equating_params or {}))
    eq.fit(wide, benchmark_weights=pd.Series(dens.u, index=cols), snapshot_id=snapshot_id)
    # Benchmarks the equating excluded (constant, too sparse) leave the list, which changes the
    # median distance and so u; one refit on the fitted list keeps u and θ consistent (pruning
    # depends on the scores only, so the refit keeps the same list).
    if len(eq.benchmarks_) != len(cols):
        X2 = l2_normalise(embeddings.loc[list(eq.benchmarks_)].to_numpy(dtype=float))
        dens = density_weights(angular_distance(X2), bob.density_scale, mode=bob.density)
        eq = CharacteristicCurveEquating(**dict(equating_params or {})).fit(
            wide[list(eq.benchmarks_)],
            benchmark_weights=pd.Series(dens.u, index=eq.benchmarks_),
            snapshot_id=snapshot_id,
        )
    bob.fit(eq, embeddings)
    return eq, bob


def uniform_mean(wide: pd.DataFrame) -> pd.Series:
    """Uniform mean of per-benchmark z-scores over each model's observed benchmarks."""
    z = (wide - wide.mean()) / wide.std(ddof=0).replace(0, np.nan)
    return z.mean(axis=1)
