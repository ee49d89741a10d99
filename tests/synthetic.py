"""Synthetic inputs with known structure for the analytics tests and the benchmark scripts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

from evalhouse.analytics.data.aa import AA_CANONICAL
from evalhouse.analytics.data.defaults import name_rules
from evalhouse.curation.names import strip_variant_suffixes


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


def aa_frames_from_csv(path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The AA parsed CSV read straight with pandas, as ``(wide, meta)`` like ``aa_frames`` (tests only).

    The product reads the warehouse (:func:`evalhouse.analytics.data.aa.aa_frames`); tests use this
    to run estimators on the 548 configurations without an ingest, and to check the warehouse
    frames against it.
    """
    raw = pd.read_csv(path).set_index("slug")
    raw.index.name = "model"
    wide = raw[list(AA_CANONICAL)].rename(columns=AA_CANONICAL).astype(float)
    wide.columns.name = "benchmark"
    meta = pd.DataFrame(
        {
            "name": raw["name"].astype(str),
            "base_model": raw["name"].map(lambda n: strip_variant_suffixes(n, name_rules())),
            "release_date": pd.to_datetime(raw["releaseDate"], errors="coerce"),
            "is_reasoning": raw["isReasoning"].astype(bool),
            "is_open_weights": raw["isOpenWeights"].astype(bool),
            "total_parameters": raw["totalParameters"].astype(float),
            "intelligence_index": raw["intelligenceIndex"].astype(float),
            "developer": raw["modelCreatorName"].astype(str),
        },
        index=raw.index,
    )
    return wide, meta
