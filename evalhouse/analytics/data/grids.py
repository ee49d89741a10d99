"""Analysis grids: which models and benchmarks enter an analysis, decided from coverage alone.

Paper 000 fixes its inclusion rule before looking at any score (a benchmark needs >= 60 models,
a model >= 8 of the covered benchmarks) and then analyses several grids of the retained matrix:
complete cases, a dense grid on the near-universal benchmarks, one row per base model, and a
subsample where a covariate (training compute) is known. These are those builders, for any
wide matrix (rows = models, columns = benchmarks, NaN = not observed).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalhouse.analytics.data.defaults import best_default_configuration


def covered(wide: pd.DataFrame, benchmark_floor: int, candidates: Sequence[str] | None = None) -> list[str]:
    """Benchmarks (among ``candidates``, in their order) observed for at least ``benchmark_floor`` rows."""
    names = list(candidates) if candidates is not None else list(wide.columns)
    counts = wide.reindex(columns=names).notna().sum()
    return [c for c in names if counts[c] >= benchmark_floor]


def retained(wide: pd.DataFrame, columns: Sequence[str], model_floor: int) -> pd.DataFrame:
    """Rows observed on at least ``model_floor`` of ``columns`` (NaN kept)."""
    return wide.loc[wide[list(columns)].notna().sum(axis=1) >= model_floor]


def complete_case(wide: pd.DataFrame) -> pd.DataFrame:
    return wide.dropna()


def dense(wide: pd.DataFrame, share: float) -> pd.DataFrame:
    """Complete cases on the columns observed for at least ``share`` of the rows."""
    coverage = wide.notna().mean()
    return wide[[c for c in wide.columns if coverage[c] >= share]].dropna()


def one_per_base_model(wide: pd.DataFrame, base: pd.Series, rank: pd.Series, *, combine: bool = False) -> pd.DataFrame:
    """One row per base model, sorted by base model: the best-ranked configuration (NaN ranks last).

    ``combine=False`` keeps whole rows (:func:`~evalhouse.analytics.data.defaults.best_default_configuration`
    with ``rank`` as the score). ``combine=True`` takes, per benchmark, the best-ranked
    configuration that has a score (what pandas ``groupby().first()`` does in paper 000's code), so
    a row may mix configurations; rows are then labelled by the best-ranked configuration.
    """
    if not combine:
        rows = [{"id": i, "base": base.get(i), "rank": rank.get(i)} for i in wide.index]
        picked = best_default_configuration(
            rows, score=lambda r: r["rank"], key=lambda r: str(r["base"]), name=lambda r: str(r["id"])
        )
        top = [r["id"] for r in picked]
        return wide.loc[top].sort_index(key=lambda idx: pd.Index(base.reindex(idx).to_numpy()), kind="stable")
    order = rank.reindex(wide.index).fillna(-np.inf).sort_values(ascending=False, kind="stable").index
    bases = base.reindex(order)
    top = order[~bases.duplicated()]
    merged = wide.loc[order].groupby(bases.to_numpy(), sort=True).first()
    label = dict(zip(base.reindex(top), top, strict=True))
    merged.index = pd.Index([label[b] for b in merged.index], name=wide.index.name)
    return merged


def with_covariate(wide: pd.DataFrame, meta: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows whose ``meta[column]`` is known (e.g. the compute-known subsample of paper 000)."""
    known = meta[column].reindex(wide.index).notna()
    return wide.loc[known]
