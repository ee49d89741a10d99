"""Stress tests of Balance of Benchmarks (paper 004 §4.3): copied listings, shuffled descriptions, population shift."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from evalhouse.analytics.bob.estimator import fit_bob, uniform_mean
from evalhouse.analytics.bob.lobo import BOB, PoolCache, gls_weights, lobo_evaluate


def _rank_desc(x: pd.Series) -> pd.Series:
    return x.rank(ascending=False, method="average")


def copy_stress(
    wide: pd.DataFrame,
    embeddings: pd.DataFrame,
    benchmarks: Sequence[str] | None = None,
    n_copies: int = 4,
    equating_params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Rank displacement when one benchmark is listed ``n_copies`` more times (exact copies).

    For each scenario benchmark the column and its description vector are duplicated, the
    whole model is refitted (density weights, curves, abilities), and models' global ranks are
    compared with the unperturbed fit. Compared: BoB θ (inverse-density weights), the flat
    ``u ≡ 1`` control and the uniform mean of standardised scores ("equal weighting").
    """
    params = dict(equating_params or {})
    scenarios = list(benchmarks) if benchmarks is not None else [str(c) for c in wide.columns]

    def fit_rank(frame: pd.DataFrame, emb: pd.DataFrame, density: str) -> pd.Series:
        eq, _ = fit_bob(frame, emb, equating_params=params, density=density)
        return eq.theta_.dropna()

    base = {d: fit_rank(wide, embeddings, d) for d in ("inverse", "flat")}
    base_uniform = uniform_mean(wide).dropna()
    rows = {}
    for b in scenarios:
        names = [f"{b}#copy{k}" for k in range(1, n_copies + 1)]
        w2 = wide.assign(**{n: wide[b] for n in names})
        e2 = pd.concat(
            [
                embeddings,
                pd.DataFrame([embeddings.loc[b].to_numpy()] * n_copies, index=names, columns=embeddings.columns),
            ]
        )
        rec: dict[str, float] = {}
        for label, d in (("bob", "inverse"), ("flat", "flat")):
            after = fit_rank(w2, e2, d)
            common = base[d].index.intersection(after.index)
            disp = (_rank_desc(base[d].loc[common]) - _rank_desc(after.loc[common])).abs()
            rec[f"{label}_mean"] = float(disp.mean())
            rec[f"{label}_max"] = float(disp.max())
            rec[f"{label}_theta_shift"] = float((base[d].loc[common] - after.loc[common]).abs().max())
        after_u = uniform_mean(w2).dropna()
        common = base_uniform.index.intersection(after_u.index)
        disp = (_rank_desc(base_uniform.loc[common]) - _rank_desc(after_u.loc[common])).abs()
        rec["uniform_mean"] = float(disp.mean())
        rec["uniform_max"] = float(disp.max())
        rows[b] = rec
    table = pd.DataFrame.from_dict(rows, orient="index")
    return {"scenarios": table, "summary": table.mean().to_dict(), "n_copies": n_copies}


def shuffled_descriptions(  # noqa: PLR0913 - keyword-only settings of one analysis
    wide: pd.DataFrame,
    embeddings: pd.DataFrame,
    n_draws: int = 200,
    *,
    bandwidth: float = 0.45,
    inner: bool = False,
    random_state: int | None = 0,
) -> dict[str, Any]:
    """Mean BoB LOBO profile when descriptions are randomly reassigned among the benchmarks.

    Each draw permutes the description vectors over the columns and reruns the complete
    leave-one-benchmark-out procedure (density weights, refits, field). With ``inner=False``
    (default, for speed) the bandwidth is fixed at ``bandwidth`` instead of re-selected in inner
    folds; the paper's AA run selected 0.45 in every fold.
    """
    rng = np.random.default_rng(random_state)
    cols = [str(c) for c in wide.columns]
    vals = embeddings.loc[cols].to_numpy()
    profiles = []
    for _ in range(int(n_draws)):
        perm = rng.permutation(len(cols))
        shuffled = pd.DataFrame(vals[perm], index=cols, columns=embeddings.columns)
        res = lobo_evaluate(
            wide,
            shuffled,
            inner=inner,
            fixed_bandwidth=bandwidth,
            controls=False,
            cache=PoolCache(wide, shuffled),
        )
        profiles.append(float(res.summary.loc[BOB, "profile"]))
    arr = np.asarray(profiles)
    return {
        "profiles": arr,
        "mean": float(arr.mean()) if arr.size else float("nan"),
        "sd": float(arr.std(ddof=1)) if arr.size > 1 else float("nan"),
        "max": float(arr.max()) if arr.size else float("nan"),
        "n_draws": int(n_draws),
    }


def population_shift(
    wide: pd.DataFrame,
    families: pd.Series,
    embeddings: pd.DataFrame,
    family_names: Sequence[str] | None = None,
    n_families: int = 3,
) -> pd.DataFrame:
    """Ranking stability of pre-existing models when one model family is added.

    For each family the model is fitted without it and with it; the Spearman correlation of the
    pre-existing models' global scores before and after is reported for BoB θ, the GLS
    covariance-weighted composite and the uniform mean of standardised scores.
    """
    fam = families.reindex(wide.index)
    names = list(family_names) if family_names is not None else list(fam.value_counts().index[:n_families])
    full_theta = fit_bob(wide, embeddings)[0].theta_
    full_gls = _gls_scores(wide)
    full_uni = uniform_mean(wide)
    rows = {}
    for name in names:
        added = fam.index[fam == name]
        base = wide.drop(index=added)
        theta = fit_bob(base, embeddings)[0].theta_
        rec = {"n_added": float(len(added))}
        for label, before, after in (
            ("bob", theta, full_theta),
            ("gls", _gls_scores(base), full_gls),
            ("uniform", uniform_mean(base), full_uni),
        ):
            common = before.dropna().index.intersection(after.dropna().index)
            rec[label] = float(spearmanr(before.loc[common], after.loc[common]).statistic)
        rows[name] = rec
    return pd.DataFrame.from_dict(rows, orient="index")


def _gls_scores(wide: pd.DataFrame) -> pd.Series:
    z = ((wide - wide.mean()) / wide.std(ddof=0).replace(0, np.nan)).to_numpy(dtype=float)
    w = gls_weights(z)
    return pd.Series(np.where(np.isfinite(z), z, 0.0) @ w, index=wide.index)
