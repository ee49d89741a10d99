"""Equating the Epoch AI Benchmarking Hub onto one ability scale (paper 004 §3.1).

Input (:func:`~evalhouse.analytics.data.matrices.source_own_long`): the source's own best value
(over setups, on the canonical metric; no other source's rows) of every
configuration the hub source reported, on every non-composite benchmark the source reported.
Scores are min-max normalised per benchmark over the fitted models, then
:class:`~evalhouse.analytics.equate.curves.CharacteristicCurveEquating` fits one two-parameter
characteristic curve per benchmark and one standardised ability ``θ`` per model. Models with
fewer than ``min_observed`` fitted benchmarks keep ``θ = NULL`` and the reason.

Composite benchmarks stay out of the items: Epoch's own Capabilities Index
(``epoch_capabilities_index``) is itself an equating of these benchmarks, so it is the
reference ``θ`` is compared with (Spearman and Kendall over the models that have both), not an
input.

At ``level="base_model"`` the configurations of one base model meet in one row:
``best_default`` keeps the configuration with the most observed benchmarks
(:func:`~evalhouse.analytics.data.defaults.best_default_configuration`), ``max`` / ``mean``
aggregate cell by cell; the reference is aggregated the same way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr

from evalhouse.analytics.base import AnalysisRecord
from evalhouse.analytics.data.matrices import (
    items_and_composites,
    model_meta,
    source_long,
    source_own_long,
    wide_matrix,
)
from evalhouse.analytics.equate.curves import CharacteristicCurveEquating
from evalhouse.common.jsonable import to_jsonable
from evalhouse.errors import DataMissing

HUB_SOURCE = "epoch-benchmarks"
REFERENCE = "epoch_capabilities_index"


@dataclass
class HubEquating:
    """A fitted hub equating with its reference comparison and its record."""

    equating: CharacteristicCurveEquating
    wide: pd.DataFrame  # the item matrix that was fitted
    reference: pd.Series  # the published composite per model (NaN where absent)
    comparison: dict[str, Any]
    source_key: str
    level: str
    aggregate: str
    record: AnalysisRecord
    names: pd.Series  # display name per model (a configuration's name; a base model's id)

    @property
    def theta(self) -> pd.Series:
        return self.equating.theta_

    def to_dict(self) -> dict[str, Any]:
        eq = self.equating
        base = eq.to_dict()
        for row in base["models"]:
            row["name"] = str(self.names.get(row["model"], row["model"]))
            ref = self.reference.get(row["model"], np.nan)
            row[self.comparison["reference"]] = None if not np.isfinite(ref) else round(float(ref), 6)
        counts = eq.scores_.notna().sum()
        for row in base["benchmarks"]:
            row["n_observed"] = int(counts[row["benchmark"]])
        n_fitted = int(eq.theta_.notna().sum())
        return {
            "source": self.source_key,
            "level": self.level,
            "aggregate": self.aggregate if self.level == "base_model" else None,
            "min_observed": int(eq.min_observed),
            "n_models": len(eq.theta_),
            "n_fitted": n_fitted,
            "n_benchmarks": len(eq.benchmarks_),
            "normalisation": base["normalisation"],
            "comparison": self.comparison,
            "models": base["models"],
            "benchmarks": base["benchmarks"],
            "excluded_benchmarks": base["excluded_benchmarks"],
            "snapshot_id": self.record.snapshot_id,
        }


def compare_with_reference(theta: pd.Series, reference: pd.Series, name: str = REFERENCE) -> dict[str, Any]:
    """Spearman and Kendall correlation of ``θ`` with a published composite where both exist."""
    both = pd.concat([theta.rename("theta"), reference.rename("ref")], axis=1).dropna()
    out: dict[str, Any] = {"reference": name, "n": len(both), "spearman": None, "kendall": None}
    if len(both) >= 3 and both["theta"].nunique() > 1 and both["ref"].nunique() > 1:
        out["spearman"] = round(float(spearmanr(both["theta"], both["ref"]).statistic), 6)
        out["kendall"] = round(float(kendalltau(both["theta"], both["ref"]).statistic), 6)
    return out


def equate_hub(
    con: duckdb.DuckDBPyConnection,
    *,
    source: str = HUB_SOURCE,
    level: str = "configuration",
    aggregate: str = "best_default",
    **equating: Any,
) -> HubEquating:
    """Fit the hub's characteristic curves and abilities (see the module docstring).

    ``equating``: parameters of :class:`~evalhouse.analytics.equate.curves.CharacteristicCurveEquating`
    (``min_observed`` ...).
    """
    t0 = time.perf_counter()
    source_key, reference = source, REFERENCE
    long = source_long(con, source_key)
    wide_all = wide_matrix(long, level, aggregate)
    _, composite = items_and_composites(wide_all, long)
    # The items: the source's own cells only (no other source's row for the same cell).
    items = wide_matrix(source_own_long(con, source_key), level, aggregate)
    if items.shape[1] == 0:
        raise DataMissing(f"{source_key} reported only composite benchmarks: nothing to equate")
    eq = CharacteristicCurveEquating(**equating).fit(items)
    ref = wide_all[reference] if reference in wide_all.columns else pd.Series(np.nan, index=wide_all.index)
    ref = ref.reindex(items.index)
    comparison = compare_with_reference(eq.theta_, ref, reference)
    rec = eq.record_
    params = {
        **rec.params,
        "source": source_key,
        "level": level,
        "aggregate": aggregate if level == "base_model" else None,
    }
    diagnostics = {
        **rec.diagnostics,
        "source": source_key,
        "level": level,
        "reference_comparison": comparison,
        "composites_excluded": composite,
        "duration_total_s": round(time.perf_counter() - t0, 6),
    }
    record = rec.model_copy(update={"params": to_jsonable(params), "diagnostics": to_jsonable(diagnostics)})
    if level == "configuration":
        names = model_meta(con)["name"]
        names = names[~names.index.duplicated()]
    else:
        names = pd.Series(items.index, index=items.index)
    return HubEquating(
        equating=eq,
        wide=items,
        reference=ref,
        comparison=comparison,
        source_key=source_key,
        level=level,
        aggregate=aggregate,
        record=record,
        names=names.reindex(items.index).fillna(pd.Series(items.index, index=items.index)).astype(str),
    )


def hub_release_dates(con: duckdb.DuckDBPyConnection, hub: HubEquating) -> pd.Series:
    """Release date per model of ``hub`` (a base model: its earliest configuration's date)."""
    meta = model_meta(con)
    if hub.level == "configuration":
        dates = meta["release_date"]
    else:
        dates = meta.dropna(subset=["base_model"]).groupby("base_model")["release_date"].min()
    return dates.reindex(hub.theta.index)
