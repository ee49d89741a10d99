"""Semantic inverse-density weights and task-conditioned Balance of Benchmarks (paper 004 §3.2–3.3).

Density: with angular distances ``d_ij`` between description embeddings and
``h_dens = density_scale × median pairwise distance`` (paper: 0.25),
``u_i = 1 / Σ_j exp(-d_ij² / (2 h_dens²))`` (``j`` runs over the list *including* ``i``),
``W = Σ_i u_i`` and ``v_i = u_i / W``.

Exact copies: if a group ``G`` of ``c`` identical descriptions has kernel mass ``S_i`` from the
rest of the list (``S = Σ_{j∉G} K(d_ij)``), each copy gets ``u = 1 / (c + S)``; a lone copy gets
``1 / (1 + S)``. So at a fixed ``h_dens`` the copies share exactly one unit of mass
(``1/c`` each of the lone copy's weight) when the group is isolated (``S = 0``); with neighbours
the group's mass ``c/(c + S)`` lies between the lone weight and 1. (Adding copies also lowers the
median distance and hence ``h_dens``; the paper's "approximate invariance".)

Task field for a query ``q`` embedded like a description: relevance
``g_i(q) = exp(-d(q, x_i)² / (2h²)) · u_i`` with ``h = bandwidth × median distance``; support
``P_m = Σ_i g_i w_mi``; residual mean ``r̄_m = Σ g_i w_mi I_mi z_mi / Σ g_i w_mi I_mi`` over observed
cells (relevance, robust weight and item information); prediction ``y_m = θ_m + β_m r̄_m`` with
``β = λP/(P + α)`` (BoB–Support, ``λ = α = 1``), ``β = c`` (BoB–Constant) or ``β = 1`` (no
shrinkage); ``y = θ`` at zero support.

Information weights (``information``): ``"normalised"`` (default) divides each cell's
``I_mi = f_i'(θ_m)² / max(σ_i², 1e-6)`` by the mean information of its benchmark over the observed
models, the paper's "normalized"/"mean item information"; ``"cell"`` uses ``I_mi`` as is;
``"none"`` drops it. Why not ``"cell"`` by default: ``z`` is already divided by ``σ_i``, and raw
``I_mi`` divides by ``σ_i²`` again, so a floor-dominated benchmark with a tiny residual scale
(AA's CritPt: most models score 0, ``σ = 0.011``) outweighs every other benchmark by two to three
orders of magnitude and the residual mean becomes that one benchmark's noise. On the AA snapshot
``"cell"`` makes BoB's LOBO profile no better than ``θ`` alone; ``paper004`` reports both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Self

import numpy as np
import pandas as pd

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.embed import Encoder, angular_distance, embed_benchmarks, l2_normalise
from evalhouse.analytics.equate import CharacteristicCurveEquating, as_wide
from evalhouse.analytics.texts import TextStore

Shrinkage = Literal["support", "constant", "none"]
SHRINKAGES: tuple[str, ...] = ("support", "constant", "none")
Information = Literal["normalised", "cell", "none"]
INFORMATION_MODES: tuple[str, ...] = ("normalised", "cell", "none")
DensityMode = Literal["inverse", "flat"]
DENSITY_MODES: tuple[str, ...] = ("inverse", "flat")
BANDWIDTHS: tuple[float, ...] = (0.30, 0.45, 0.60)


# ---------------------------------------------------------------------- density
def median_pairwise_distance(D: np.ndarray) -> float:
    """Median of the off-diagonal upper-triangle distances."""
    n = D.shape[0]
    if n < 2:
        raise ValueError("a median pairwise distance needs at least two benchmarks")
    return float(np.median(D[np.triu_indices(n, 1)]))


@dataclass(frozen=True)
class DensityWeights:
    """Inverse-density weights of one benchmark list."""

    u: np.ndarray
    v: np.ndarray
    h: float
    total: float
    median_distance: float


def density_weights(
    D: np.ndarray,
    scale: float = 0.25,
    *,
    h: float | None = None,
    mode: DensityMode = "inverse",
) -> DensityWeights:
    """Inverse-density weights ``u`` (and normalised ``v``) from a distance matrix.

    Parameters
    ----------
    D : array (n, n)
        Pairwise angular distances, zero diagonal.
    scale : float
        ``h_dens = scale × median pairwise distance`` (paper: 0.25).
    h : float, optional
        A fixed kernel scale instead of ``scale × median``.
    mode : {"inverse", "flat"}
        ``"flat"`` is the paper's ``u ≡ 1`` control.
    """
    if mode not in DENSITY_MODES:
        raise ValueError(f"density mode {mode!r} is not one of {list(DENSITY_MODES)}")
    D = np.asarray(D, dtype=float)
    med = median_pairwise_distance(D) if D.shape[0] >= 2 else float("nan")
    h_dens = float(h) if h is not None else scale * med
    if mode == "flat":
        u = np.ones(D.shape[0])
    else:
        if not h_dens > 0:
            raise ValueError(f"density kernel scale must be positive, got {h_dens}")
        u = 1.0 / np.exp(-(D**2) / (2 * h_dens**2)).sum(axis=1)
    total = float(u.sum())
    return DensityWeights(u=u, v=u / total, h=h_dens, total=total, median_distance=med)


# ---------------------------------------------------------------------- field
def relevance(query_distances: np.ndarray, u: np.ndarray, h: float) -> np.ndarray:
    """``g_i = exp(-d(q, x_i)² / (2h²)) · u_i``."""
    return np.exp(-(np.asarray(query_distances) ** 2) / (2 * h**2)) * u


def information_weights(info: np.ndarray, Wt: np.ndarray, mode: Information = "normalised") -> np.ndarray | None:
    """Information weights for the residual mean (see module docstring); ``None`` for ``"none"``."""
    if mode == "none":
        return None
    if mode == "cell":
        return info
    if mode == "normalised":
        obs = Wt > 0
        n = obs.sum(axis=0)
        mean = np.where(obs, info, 0.0).sum(axis=0) / np.maximum(n, 1)
        return np.divide(info, mean[None, :], out=np.zeros_like(info), where=mean[None, :] > 0)
    raise ValueError(f"information={mode!r} is not one of {list(INFORMATION_MODES)}")


def bob_field(
    theta: np.ndarray,
    Z: np.ndarray,
    Wt: np.ndarray,
    g: np.ndarray,
    info: np.ndarray | None = None,
    *,
    shrinkage: Shrinkage = "support",
    lam: float = 1.0,
    alpha: float = 1.0,
    constant: float | None = None,
) -> dict[str, np.ndarray]:
    """Task-conditioned prediction for every model at once.

    Parameters
    ----------
    theta : (M,)
        Abilities.
    Z, Wt, info : (M, I)
        Standardised residuals (NaN = missing), robust weights (0 = missing), item information.
    g : (I,) or (M, I)
        Relevance per benchmark (or per cell, for hard-rule controls).
    constant : float, optional
        BoB–Constant coefficient; ``None`` = median support factor ``P/(P+1)`` over models
        (the paper's AA control).

    Returns
    -------
    dict with ``y`` (prediction), ``support`` (P), ``beta``, ``rbar``.
    """
    G = np.broadcast_to(g, Wt.shape) * Wt
    support = G.sum(axis=1)
    A = G if info is None else G * info
    Zf = np.where(np.isnan(Z), 0.0, Z)
    den = A.sum(axis=1)
    num = (A * Zf).sum(axis=1)
    rbar = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    if shrinkage == "support":
        beta = lam * support / (support + alpha)
    elif shrinkage == "constant":
        c = float(np.median(support / (support + 1.0))) if constant is None else float(constant)
        beta = np.full_like(support, c)
    elif shrinkage == "none":
        beta = np.ones_like(support)
    else:
        raise ValueError(f"shrinkage={shrinkage!r} is not one of {list(SHRINKAGES)}")
    y = np.where(support > 0, theta + beta * rbar, theta)
    return {"y": y, "support": support, "beta": beta, "rbar": rbar}


# ---------------------------------------------------------------------- estimator
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
    information : {"normalised", "cell", "none"}
        Item-information weights in ``r̄`` (module docstring says why "normalised").
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
        information: Information = "normalised",
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
            raise ValueError(f"shrinkage={self.shrinkage!r} is not one of {list(SHRINKAGES)}")
        if self.information not in INFORMATION_MODES:
            raise ValueError(f"information={self.information!r} is not one of {list(INFORMATION_MODES)}")
        if self.density not in DENSITY_MODES:
            raise ValueError(f"density={self.density!r} is not one of {list(DENSITY_MODES)}")
        if not self.bandwidth > 0 or not self.density_scale > 0:
            raise ValueError("bandwidth and density_scale must be positive")
        if not hasattr(equating, "theta_"):
            raise ValueError("equating must be a fitted CharacteristicCurveEquating")
        benchmarks = equating.benchmarks_
        missing = [b for b in benchmarks if b not in embeddings.index]
        if missing:
            raise ValueError(f"no embedding for fitted benchmark(s) {missing}")
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
            raise ValueError("empty query: pass a non-zero embedding of a non-empty task text")
        if q.size != self.vectors_.shape[1]:
            raise ValueError(
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
        raise ValueError(f"no embedding for benchmark(s) {missing}")
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


def compare_task(
    query: str,
    wide: pd.DataFrame,
    texts: TextStore,
    encoder: Encoder,
    top: int = 10,
    *,
    cache: Any = None,
    bandwidth: float = 0.45,
    shrinkage: Shrinkage = "support",
    min_observed: int = 3,
) -> dict[str, Any]:
    """Rank models for a task described in words (``evalhouse compare --task``).

    The query should be written in the description register (paper §L.5: "This task measures
    …"); it is embedded exactly like the benchmark descriptions.

    Returns a JSON-ready dict: encoder identity, nearest benchmarks, median support, the top
    models by task score with their θ ranks, and the biggest movers relative to θ.
    """
    if not isinstance(query, str) or not query.strip():
        raise ValueError("empty query: describe the task in one or more sentences")
    wide = as_wide(wide)
    emb = embed_benchmarks(texts, list(wide.columns), encoder, cache=cache)
    eq, bob = fit_bob(
        wide,
        emb,
        equating_params={"min_observed": min_observed},
        bandwidth=bandwidth,
        shrinkage=shrinkage,
    )
    qvec = (cache or encoder).encode([query])[0]
    result = bob.predict(qvec, top=top)
    out = result.to_dict(top=top)
    out.update(
        {
            "query": query,
            "encoder": encoder.identity,
            "shrinkage": shrinkage,
            "n_models": len(eq.models_),
            "n_benchmarks": len(eq.benchmarks_),
            "excluded_models": len(eq.excluded_models_),
            "normalisation": eq.normalisation_,
            "run_id": bob.record_.run_id,
        }
    )
    return out


def uniform_mean(wide: pd.DataFrame) -> pd.Series:
    """Uniform mean of per-benchmark z-scores over each model's observed benchmarks."""
    z = (wide - wide.mean()) / wide.std(ddof=0).replace(0, np.nan)
    return z.mean(axis=1)


__all__ = [
    "BANDWIDTHS",
    "DENSITY_MODES",
    "INFORMATION_MODES",
    "SHRINKAGES",
    "BalanceOfBenchmarks",
    "DensityWeights",
    "TaskComparison",
    "bob_field",
    "compare_task",
    "density_weights",
    "fit_bob",
    "information_weights",
    "median_pairwise_distance",
    "relevance",
    "uniform_mean",
]
