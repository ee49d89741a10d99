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

Information weights (``information``), from the cell information
``I_mi = f_i'(θ_m)² / max(σ_i², 1e-6)``: ``"mean"`` (default) weights each benchmark by its mean
item information ``Ī_i`` over the observed models, one weight per benchmark; ``"cell"`` uses each
cell's ``I_mi`` (the model's local information); ``"normalised"`` uses ``I_mi / Ī_i``; ``"none"``
drops information. Why ``"mean"``: the paper lists "mean item information" among the quantities
every aggregation rule shares (App. F.2) and names weighting "by local information" only for its
first-order latent-offset alternative (App. I.1, "Residual-to-ability scale"), so local
information is not the main rule. And
local information misleads: ``z`` is already divided by ``σ_i``, raw ``I_mi`` divides by ``σ_i²``
again and peaks where a curve is steep, so for the strongest models a floor-dominated benchmark
with a tiny residual scale (AA's CritPt: most models score 0) outweighs every benchmark near the
task — for Claude Opus 4.7 (max effort) CritPt carried 54% of its residual weight for "agentic
coding in a terminal" under ``"cell"``, 7% under ``"mean"``. ``reproduce paper-004`` prints every
mode as a control.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from evalhouse.errors import InputError

Shrinkage = Literal["support", "constant", "none"]
SHRINKAGES: tuple[str, ...] = ("support", "constant", "none")
Information = Literal["mean", "normalised", "cell", "none"]
INFORMATION_MODES: tuple[str, ...] = ("mean", "normalised", "cell", "none")
DensityMode = Literal["inverse", "flat"]
DENSITY_MODES: tuple[str, ...] = ("inverse", "flat")
BANDWIDTHS: tuple[float, ...] = (0.30, 0.45, 0.60)


# ---------------------------------------------------------------------- density
def median_pairwise_distance(D: np.ndarray) -> float:
    """Median of the off-diagonal upper-triangle distances."""
    n = D.shape[0]
    if n < 2:
        raise InputError("a median pairwise distance needs at least two benchmarks")
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
        raise InputError(f"density mode {mode!r} is not one of {list(DENSITY_MODES)}")
    D = np.asarray(D, dtype=float)
    med = median_pairwise_distance(D) if D.shape[0] >= 2 else float("nan")
    h_dens = float(h) if h is not None else scale * med
    if mode == "flat":
        u = np.ones(D.shape[0])
    else:
        if not h_dens > 0:
            raise InputError(f"density kernel scale must be positive, got {h_dens}")
        u = 1.0 / np.exp(-(D**2) / (2 * h_dens**2)).sum(axis=1)
    total = float(u.sum())
    return DensityWeights(u=u, v=u / total, h=h_dens, total=total, median_distance=med)


# ---------------------------------------------------------------------- field
def relevance(query_distances: np.ndarray, u: np.ndarray, h: float) -> np.ndarray:
    """``g_i = exp(-d(q, x_i)² / (2h²)) · u_i``."""
    return np.exp(-(np.asarray(query_distances) ** 2) / (2 * h**2)) * u


def mean_information(info: np.ndarray, Wt: np.ndarray) -> np.ndarray:
    """``Ī_i``: each benchmark's cell information averaged over its observed models (``Wt > 0``)."""
    obs = Wt > 0
    return np.where(obs, info, 0.0).sum(axis=0) / np.maximum(obs.sum(axis=0), 1)


def information_weights(info: np.ndarray, Wt: np.ndarray, mode: Information = "mean") -> np.ndarray | None:
    """Information weights for the residual mean (see module docstring); ``None`` for ``"none"``."""
    if mode == "none":
        return None
    if mode == "cell":
        return info
    if mode == "mean":
        return np.broadcast_to(mean_information(info, Wt)[None, :], info.shape)
    if mode == "normalised":
        mean = mean_information(info, Wt)
        return np.divide(info, mean[None, :], out=np.zeros_like(info), where=mean[None, :] > 0)
    raise InputError(f"information={mode!r} is not one of {list(INFORMATION_MODES)}")


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
        raise InputError(f"shrinkage={shrinkage!r} is not one of {list(SHRINKAGES)}")
    y = np.where(support > 0, theta + beta * rbar, theta)
    return {"y": y, "support": support, "beta": beta, "rbar": rbar}
