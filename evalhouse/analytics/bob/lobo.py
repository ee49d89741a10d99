"""Leave-one-benchmark-out evaluation of BoB against baselines (paper 004 §4.1, App. F).

For every target benchmark ``t`` the other benchmarks form the training pool: density weights,
the density-weighted equating, distances and the field are computed from the pool alone, the
held-out description is the query, and the prediction is scored on the models of the pool fit
that have an observed ``t``:

* **level** — Spearman correlation of prediction and held-out score;
* **profile** — the ranks of prediction and of held-out score are each residualised on a
  quadratic in training-pool ability ``θ`` (``[1, θ, θ²]`` least squares), and the residuals are
  correlated. It asks whether a method knows which models are unusually strong or weak on ``t``.

The field bandwidth is chosen per outer fold from :data:`~evalhouse.analytics.bob.estimator.BANDWIDTHS`
by inner leave-one-benchmark-out on the pool (nested; the target never enters), with the paper's
criterion: the mean of inner level and inner profile (App. J, "Field bandwidth";
``selection="profile"`` uses the inner profile alone). The hard-rule controls select their size
in the same inner folds by mean inner profile, as the paper's App. F.2: ``k`` of top-k from
:data:`TOP_K` and the radius of the radius rule from :data:`RADII` (multiples of the pool's
median distance). Pool fits are cached by column set, so the inner fits of fold ``t`` for target
``j`` and of fold ``j`` for target ``t`` are the same fit.

Baselines: ``θ`` alone, uniform mean of standardised pool scores, nearest benchmark (standardised
score on the model's closest observed pool benchmark in description space), first principal
component after column-mean fill (sign aligned with the mean score), GLS weights
``w ∝ (Σ + 0.05 I)⁻¹ 1`` with ``Σ`` the correlation of row-centred standardised pool scores, and a
published composite (the AA Intelligence Index) where given. BoB is compared with each by a
paired one-sided Wilcoxon signed-rank test over folds, Holm-adjusted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr, wilcoxon

from evalhouse.analytics.bob.density import BANDWIDTHS, bob_field, information_weights, relevance
from evalhouse.analytics.bob.encoders import angular_distance, l2_normalise
from evalhouse.analytics.bob.estimator import BalanceOfBenchmarks, fit_bob
from evalhouse.analytics.equate.curves import CharacteristicCurveEquating
from evalhouse.analytics.equate.io import EquatingInputError
from evalhouse.errors import InputError

BOB = "BoB-Support"
METHODS: tuple[str, ...] = (
    BOB,
    "BoB-Constant",
    "BoB no shrinkage",
    "BoB flat (u=1)",
    "BoB mean information",
    "BoB normalised information",
    "BoB cell information",
    "BoB no information",
    "top-k benchmarks",
    "benchmarks within radius",
    "support-matched top-k",
    "theta alone",
    "uniform mean",
    "nearest benchmark",
    "first PC",
    "GLS weights",
    "published index",
)
MIN_SCORED = 15  # paper App. A: a ranking target needs fifteen scored configurations
GLS_RIDGE = 0.05
TOP_K: tuple[int, ...] = (1, 2, 3, 4, 5)  # paper App. F.2's inner grid for top-k
RADII: tuple[float, ...] = (0.25, 0.40, 0.55, 0.70, 1.00)  # paper App. F.2's radii, x the pool's median distance
SELECTIONS: tuple[str, ...] = ("level+profile", "profile")
FIXED_K, FIXED_RADIUS = 3, 0.70  # the hard rules' sizes when inner selection is off


# ---------------------------------------------------------------------- metrics
def level_correlation(y: np.ndarray, s: np.ndarray) -> float:
    """Spearman correlation of prediction and held-out score."""
    if len(y) < 3 or np.ptp(y) == 0 or np.ptp(s) == 0:
        return float("nan")
    return float(spearmanr(y, s).statistic)


def profile_correlation(y: np.ndarray, s: np.ndarray, theta: np.ndarray) -> float:
    """Correlation of prediction and score ranks after removing a quadratic in ``θ`` from each."""
    if len(y) < 5 or np.ptp(y) == 0 or np.ptp(s) == 0:
        return float("nan")
    design = np.column_stack([np.ones_like(theta), theta, theta**2])
    ry, rs = rankdata(y), rankdata(s)
    res_y = ry - design @ np.linalg.lstsq(design, ry, rcond=None)[0]
    res_s = rs - design @ np.linalg.lstsq(design, rs, rcond=None)[0]
    if np.std(res_y) < 1e-12 or np.std(res_s) < 1e-12:
        return float("nan")
    return float(np.corrcoef(res_y, res_s)[0, 1])


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values (NaN entries stay NaN and are not counted)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok])]
    m = len(order)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        out[idx] = running
    return out


# ---------------------------------------------------------------------- pool fits
@dataclass
class PoolFit:
    """One training pool: density-weighted equating plus what the baselines need."""

    columns: tuple[str, ...]
    equating: CharacteristicCurveEquating
    bob: BalanceOfBenchmarks
    theta: np.ndarray
    Z: np.ndarray
    Wt: np.ndarray
    info: np.ndarray
    u: np.ndarray
    X: np.ndarray
    median: float
    zscores: np.ndarray  # standardised raw pool scores (NaN = missing), models × benchmarks

    @property
    def models(self) -> pd.Index:
        return self.equating.models_

    @property
    def benchmarks(self) -> pd.Index:
        return self.equating.benchmarks_


class PoolCache:
    """Fits keyed by (column set, density mode), shared across outer and inner folds."""

    def __init__(
        self,
        wide: pd.DataFrame,
        embeddings: pd.DataFrame,
        equating_params: Mapping[str, Any] | None = None,
        density_scale: float = 0.25,
    ) -> None:
        self.wide = wide
        self.embeddings = embeddings
        self.equating_params = dict(equating_params or {})
        self.density_scale = density_scale
        self._fits: dict[tuple[frozenset[str], str], PoolFit | None] = {}
        self.n_fits = 0

    def get(self, columns: Sequence[str], density: str = "inverse") -> PoolFit | None:
        key = (frozenset(columns), density)
        if key not in self._fits:
            self._fits[key] = self._fit(sorted(columns), density)
        return self._fits[key]

    def _fit(self, columns: list[str], density: str) -> PoolFit | None:
        sub = self.wide[columns]
        try:
            eq, bob = fit_bob(
                sub,
                self.embeddings,
                equating_params=self.equating_params,
                density_scale=self.density_scale,
                density=density,
            )
        except EquatingInputError:
            return None
        self.n_fits += 1
        raw = sub.loc[eq.models_, list(eq.benchmarks_)]
        z = ((raw - raw.mean()) / raw.std(ddof=0).replace(0, np.nan)).to_numpy(dtype=float)
        return PoolFit(
            columns=tuple(eq.benchmarks_),
            equating=eq,
            bob=bob,
            theta=eq.theta_.loc[eq.models_].to_numpy(),
            Z=eq.residuals_.to_numpy(),
            Wt=eq.weights_.to_numpy(),
            info=eq.information_.to_numpy(),
            u=bob.u_.to_numpy(),
            X=bob.vectors_,
            median=bob.median_distance_,
            zscores=z,
        )


# ---------------------------------------------------------------------- predictions
def _query_vector(embeddings: pd.DataFrame, target: str) -> np.ndarray:
    return l2_normalise(embeddings.loc[[target]].to_numpy(dtype=float))[0]


def bob_predict(
    fit: PoolFit,
    query: np.ndarray,
    bandwidth: float,
    shrinkage: str = "support",
    information: str = "mean",
) -> np.ndarray:
    """BoB prediction for every model of a pool fit."""
    dist = angular_distance(query[None, :], fit.X)[0]
    g = relevance(dist, fit.u, bandwidth * fit.median)
    info = information_weights(fit.info, fit.Wt, information)  # type: ignore[arg-type]
    return bob_field(fit.theta, fit.Z, fit.Wt, g, info, shrinkage=shrinkage)["y"]  # type: ignore[arg-type]


def hard_rule_predictions(  # noqa: PLR0913 - one control's settings
    fit: PoolFit,
    query: np.ndarray,
    bandwidth: float,
    information: str,
    *,
    k: int = FIXED_K,
    radius: float = FIXED_RADIUS,
) -> dict[str, np.ndarray]:
    """Hard-rule controls (paper 004 §4, App. F.2): the field replaced by a 0/1 choice of benchmarks.

    top-k: the ``k`` benchmarks nearest the query; radius: those within ``radius`` x the pool's
    median distance (none within: zero support, so the prediction is θ); support-matched top-k:
    k = round((Σg)² / Σg²) of the soft relevances at ``bandwidth`` (the field's effective number
    of benchmarks). Each uses BoB-Support's shrinkage on the chosen benchmarks.
    """
    dist = angular_distance(query[None, :], fit.X)[0]
    g = relevance(dist, fit.u, bandwidth * fit.median)
    order = np.argsort(dist, kind="stable")
    k_eff = max(1, round(float(g.sum() ** 2 / (g**2).sum())))
    masks = {
        "top-k benchmarks": np.isin(np.arange(len(dist)), order[:k]),
        "benchmarks within radius": dist <= radius * fit.median,
        "support-matched top-k": np.isin(np.arange(len(dist)), order[:k_eff]),
    }
    info = information_weights(fit.info, fit.Wt, information)  # type: ignore[arg-type]
    return {
        label: bob_field(fit.theta, fit.Z, fit.Wt, mask.astype(float), info, shrinkage="support")["y"]
        for label, mask in masks.items()
    }


def _hard_rule(fit: PoolFit, query: np.ndarray, information: str, rule: str, size: float) -> np.ndarray:
    if rule == "top-k benchmarks":
        return hard_rule_predictions(fit, query, 0.45, information, k=int(size))[rule]
    return hard_rule_predictions(fit, query, 0.45, information, radius=float(size))[rule]


def baseline_predictions(fit: PoolFit, query: np.ndarray) -> dict[str, np.ndarray]:
    """θ alone, uniform mean, nearest benchmark, first PC and GLS for every model of a pool."""
    Z = fit.zscores
    obs = np.isfinite(Z)
    Zf = np.where(obs, Z, 0.0)  # column-mean fill: standardised columns have mean 0
    out = {"theta alone": fit.theta.copy()}
    out["uniform mean"] = np.nanmean(np.where(obs, Z, np.nan), axis=1)
    dist = angular_distance(query[None, :], fit.X)[0]
    order = np.argsort(dist, kind="stable")
    first = np.argmax(obs[:, order], axis=1)
    out["nearest benchmark"] = Z[np.arange(len(Z)), order[first]]
    # First principal component of the filled standardised matrix.
    _, _, vt = np.linalg.svd(Zf - Zf.mean(axis=0), full_matrices=False)
    pc = Zf @ vt[0]
    if np.corrcoef(pc, out["uniform mean"])[0, 1] < 0:
        pc = -pc
    out["first PC"] = pc
    out["GLS weights"] = Zf @ gls_weights(Z)
    return out


def gls_weights(Z: np.ndarray, ridge: float = GLS_RIDGE) -> np.ndarray:
    """``w ∝ (Σ + ridge·I)⁻¹ 1`` with Σ the correlation of row-centred standardised scores."""
    obs = np.isfinite(Z)
    row_mean = np.nanmean(np.where(obs, Z, np.nan), axis=1, keepdims=True)
    centred = pd.DataFrame(np.where(obs, Z - row_mean, np.nan))
    corr = centred.corr(min_periods=3).to_numpy()
    corr = np.where(np.isfinite(corr), corr, 0.0)
    np.fill_diagonal(corr, 1.0)
    w = np.linalg.solve(corr + ridge * np.eye(len(corr)), np.ones(len(corr)))
    return w / w.sum()


# ---------------------------------------------------------------------- LOBO
@dataclass
class LoboResult:
    """Per-fold metrics, summaries, paired tests and selections of one LOBO run."""

    folds: pd.DataFrame  # index target; columns MultiIndex (method, metric)
    summary: pd.DataFrame  # index method; level, level_se, profile, profile_se, n_folds
    tests: pd.DataFrame  # index baseline; mean_diff, p_wilcoxon, p_holm
    selected_bandwidth: pd.Series
    benchmarks: list[str]
    n_rows: int
    n_fits: int
    selected: pd.DataFrame = field(default_factory=pd.DataFrame)  # per target: bandwidth, k, radius, n_within_radius

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmarks": self.benchmarks,
            "n_rows": self.n_rows,
            "summary": self.summary.round(4).reset_index(names="method").to_dict("records"),
            "tests": self.tests.round(5).reset_index(names="baseline").to_dict("records"),
            "selected_bandwidth": {k: float(v) for k, v in self.selected_bandwidth.items()},
            "selected": {t: {k: float(v) for k, v in row.items()} for t, row in self.selected.iterrows()},
        }


def eligible_rows(wide: pd.DataFrame, min_numeric: int = 5) -> pd.DataFrame:
    """Rows with at least ``min_numeric`` observed benchmarks among the columns used."""
    return wide.loc[wide.notna().sum(axis=1) >= min_numeric]


@dataclass
class InnerSelection:
    """What the inner folds of one outer fold chose, and the criteria they chose it by."""

    bandwidth: float
    k: int
    radius: float
    bandwidth_criteria: dict[float, float]
    k_profiles: dict[int, float]
    radius_profiles: dict[float, float]


def _best(scores: Mapping[Any, float], default: Any) -> Any:
    finite = {key: v for key, v in scores.items() if np.isfinite(v)}
    return max(finite, key=finite.__getitem__) if finite else default


def inner_selection(  # noqa: PLR0913 - keyword-only settings of one selection
    cache: PoolCache,
    pool: Sequence[str],
    bandwidths: Sequence[float] = BANDWIDTHS,
    *,
    embeddings: pd.DataFrame | None = None,
    information: str = "mean",
    selection: str = "level+profile",
    hard_rules: bool = True,
) -> InnerSelection:
    """Inner LOBO on ``pool``: the bandwidth by ``selection`` (the paper's mean of level and profile,
    or profile), and the top-k ``k`` and the radius by mean inner profile (paper App. F.2)."""
    if selection not in SELECTIONS:
        raise InputError(f"selection={selection!r} is not one of {list(SELECTIONS)}")
    emb = cache.embeddings if embeddings is None else embeddings
    crit: dict[float, list[float]] = {float(h): [] for h in bandwidths}
    by_k: dict[int, list[float]] = {k: [] for k in TOP_K}
    by_r: dict[float, list[float]] = {r: [] for r in RADII}
    for j in pool:
        inner = [c for c in pool if c != j]
        fit = cache.get(inner)
        if fit is None:
            continue
        y_true, keep = _target(cache.wide, fit, j)
        if keep.sum() < MIN_SCORED:
            continue
        q = _query_vector(emb, j)
        th = fit.theta[keep]
        for h in bandwidths:
            y = bob_predict(fit, q, h, "support", information)[keep]
            profile = profile_correlation(y, y_true, th)
            value = profile if selection == "profile" else (level_correlation(y, y_true) + profile) / 2
            crit[float(h)].append(value)
        if hard_rules:
            for k in TOP_K:
                y = _hard_rule(fit, q, information, "top-k benchmarks", k)[keep]
                by_k[k].append(profile_correlation(y, y_true, th))
            for r in RADII:
                y = _hard_rule(fit, q, information, "benchmarks within radius", r)[keep]
                by_r[r].append(profile_correlation(y, y_true, th))

    def means(d: Mapping[Any, list[float]]) -> dict[Any, float]:
        return {key: float(np.nanmean(v)) if v and np.isfinite(v).any() else float("nan") for key, v in d.items()}

    crit_m, k_m, r_m = means(crit), means(by_k), means(by_r)
    return InnerSelection(
        bandwidth=float(_best(crit_m, 0.45)),
        k=int(_best(k_m, FIXED_K)),
        radius=float(_best(r_m, FIXED_RADIUS)),
        bandwidth_criteria=crit_m,
        k_profiles=k_m,
        radius_profiles=r_m,
    )


def select_bandwidth(  # noqa: PLR0913 - keyword-only settings of one selection
    cache: PoolCache,
    pool: Sequence[str],
    bandwidths: Sequence[float] = BANDWIDTHS,
    *,
    embeddings: pd.DataFrame | None = None,
    information: str = "mean",
    selection: str = "level+profile",
) -> tuple[float, dict[float, float]]:
    """Inner LOBO on ``pool``: the bandwidth with the best mean inner criterion (``selection``)."""
    sel = inner_selection(
        cache, pool, bandwidths, embeddings=embeddings, information=information, selection=selection, hard_rules=False
    )
    return sel.bandwidth, sel.bandwidth_criteria


def _target(wide: pd.DataFrame, fit: PoolFit, target: str) -> tuple[np.ndarray, np.ndarray]:
    s = wide.loc[fit.models, target].to_numpy(dtype=float)
    keep = np.isfinite(s)
    return s[keep], keep


def lobo_evaluate(  # noqa: PLR0913 - keyword-only settings of one analysis
    wide: pd.DataFrame,
    embeddings: pd.DataFrame,
    *,
    reference: pd.Series | None = None,
    bandwidths: Sequence[float] = BANDWIDTHS,
    inner: bool = True,
    fixed_bandwidth: float = 0.45,
    min_numeric: int = 5,
    equating_params: Mapping[str, Any] | None = None,
    density_scale: float = 0.25,
    controls: bool = True,
    information: str = "mean",
    selection: str = "level+profile",
    cache: PoolCache | None = None,
) -> LoboResult:
    """Leave-one-benchmark-out level and profile for BoB and the baselines.

    Parameters
    ----------
    wide : pd.DataFrame
        Models × benchmarks (the benchmarks to use), NaN = missing.
    embeddings : pd.DataFrame
        Description vectors, index covering the columns.
    reference : pd.Series, optional
        A published composite per model (AA Intelligence Index) scored as a baseline.
    inner : bool
        Select the bandwidth (and the hard rules' k and radius) per fold by nested inner LOBO;
        otherwise use ``fixed_bandwidth`` (and k = 3, radius 0.70).
    min_numeric : int
        Row eligibility: observed benchmarks among the columns (paper: 5).
    controls : bool
        Also run the flat ``u ≡ 1`` control (one extra fit per fold), the other information
        weightings of BoB–Support and the hard rules.
    information : {"mean", "normalised", "cell", "none"}
        Information weights of the residual mean (see :mod:`evalhouse.analytics.bob.density`).
    selection : {"level+profile", "profile"}
        The inner criterion for the bandwidth: the paper's mean of level and profile, or profile.
    """
    wide = eligible_rows(wide, min_numeric)
    benchmarks = [str(c) for c in wide.columns]
    missing = [b for b in benchmarks if b not in embeddings.index]
    if missing:
        raise InputError(f"no embedding for benchmark(s) {missing}")
    cache = cache or PoolCache(wide, embeddings, equating_params, density_scale)
    rows: dict[str, dict[tuple[str, str], float]] = {}
    chosen: dict[str, dict[str, float]] = {}
    for target in benchmarks:
        pool = [c for c in benchmarks if c != target]
        fit = cache.get(pool)
        if fit is None:
            continue
        s, keep = _target(wide, fit, target)
        if keep.sum() < MIN_SCORED:
            continue
        if inner:
            sel = inner_selection(
                cache, pool, bandwidths, information=information, selection=selection, hard_rules=controls
            )
            h, k, radius = sel.bandwidth, sel.k, sel.radius
        else:
            h, k, radius = float(fixed_bandwidth), FIXED_K, FIXED_RADIUS
        q = _query_vector(embeddings, target)
        within = int((angular_distance(q[None, :], fit.X)[0] <= radius * fit.median).sum())
        chosen[target] = {"bandwidth": h, "k": float(k), "radius": radius, "n_within_radius": float(within)}
        rec = _fold_metrics(fit, q, s, keep, h=h, information=information, k=k, radius=radius, controls=controls)
        if controls:
            flat = cache.get(pool, density="flat")
            if flat is not None:
                fs, fkeep = _target(wide, flat, target)
                yf = bob_predict(flat, q, h, "support", information)[fkeep]
                rec[("BoB flat (u=1)", "level")] = level_correlation(yf, fs)
                rec[("BoB flat (u=1)", "profile")] = profile_correlation(yf, fs, flat.theta[fkeep])
        if reference is not None:
            ref = reference.reindex(fit.models).to_numpy(dtype=float)[keep]
            ok = np.isfinite(ref)
            if ok.sum() >= MIN_SCORED:
                th = fit.theta[keep]
                rec[("published index", "level")] = level_correlation(ref[ok], s[ok])
                rec[("published index", "profile")] = profile_correlation(ref[ok], s[ok], th[ok])
        rec[("n", "scored")] = float(keep.sum())
        rows[target] = rec
    folds = pd.DataFrame.from_dict(rows, orient="index")
    folds.columns = pd.MultiIndex.from_tuples(folds.columns, names=["method", "metric"])
    summary = summarise(folds)
    tests = paired_tests(folds)
    return LoboResult(
        folds=folds,
        summary=summary,
        tests=tests,
        selected_bandwidth=pd.Series({t: c["bandwidth"] for t, c in chosen.items()}, name="bandwidth"),
        benchmarks=benchmarks,
        n_rows=len(wide),
        n_fits=cache.n_fits,
        selected=pd.DataFrame.from_dict(chosen, orient="index"),
    )


def _fold_metrics(  # noqa: PLR0913 - one outer fold's settings
    fit: PoolFit,
    q: np.ndarray,
    s: np.ndarray,
    keep: np.ndarray,
    *,
    h: float,
    information: str,
    k: int,
    radius: float,
    controls: bool,
) -> dict[tuple[str, str], float]:
    """Level and profile of BoB, its variants, the controls and the baselines on one outer fold."""
    preds: dict[str, np.ndarray] = {
        BOB: bob_predict(fit, q, h, "support", information),
        "BoB-Constant": bob_predict(fit, q, h, "constant", information),
        "BoB no shrinkage": bob_predict(fit, q, h, "none", information),
    }
    if controls:
        # Same bandwidth, other information weightings: shows what the choice does.
        for label, mode in (
            ("BoB mean information", "mean"),
            ("BoB normalised information", "normalised"),
            ("BoB cell information", "cell"),
            ("BoB no information", "none"),
        ):
            if mode != information:
                preds[label] = bob_predict(fit, q, h, "support", mode)
        preds.update(hard_rule_predictions(fit, q, h, information, k=k, radius=radius))
    preds.update(baseline_predictions(fit, q))
    th = fit.theta[keep]
    rec: dict[tuple[str, str], float] = {}
    for name, y in preds.items():
        yk = y[keep]
        rec[(name, "level")] = level_correlation(yk, s)
        rec[(name, "profile")] = profile_correlation(yk, s, th)
    return rec


def summarise(folds: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error over folds of level and profile per method."""
    out = {}
    for method in [m for m in METHODS if m in folds.columns.get_level_values(0)]:
        lv = folds[(method, "level")].dropna()
        pr = folds[(method, "profile")].dropna()
        out[method] = {
            "level": lv.mean(),
            "level_se": lv.std(ddof=1) / np.sqrt(len(lv)) if len(lv) > 1 else np.nan,
            "profile": pr.mean(),
            "profile_se": pr.std(ddof=1) / np.sqrt(len(pr)) if len(pr) > 1 else np.nan,
            "n_folds": len(pr),
        }
    return pd.DataFrame.from_dict(out, orient="index")


def paired_tests(folds: pd.DataFrame, metric: str = "profile") -> pd.DataFrame:
    """BoB minus each other method per fold: mean, one-sided Wilcoxon p, Holm-adjusted p."""
    out = {}
    for method in [m for m in METHODS if m != BOB and m in folds.columns.get_level_values(0)]:
        pair = folds[[(BOB, metric), (method, metric)]].dropna()
        diff = (pair[(BOB, metric)] - pair[(method, metric)]).to_numpy()
        if len(diff) == 0:
            continue
        # All-zero differences: no evidence either way (wilcoxon would raise).
        p = 1.0 if np.allclose(diff, 0) else float(wilcoxon(diff, alternative="greater").pvalue)
        out[method] = {"mean_diff": float(diff.mean()), "n_folds": len(diff), "p_wilcoxon": p}
    tests = pd.DataFrame.from_dict(out, orient="index")
    if len(tests):
        tests["p_holm"] = holm(tests["p_wilcoxon"].to_numpy())
    return tests
