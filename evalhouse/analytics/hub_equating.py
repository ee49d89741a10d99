"""Equating the Epoch AI Benchmarking Hub onto one ability scale (paper 004 §3.1; issue 7 item 8).

Input (``sql/hub_scores.sql``): the canonical higher-is-better value (``v_matrix_long``) of every
configuration the hub source reported, on every non-composite benchmark the source reported.
Scores are min-max normalised per benchmark over the fitted models, then
:class:`~evalhouse.analytics.equate.CharacteristicCurveEquating` fits one two-parameter
characteristic curve per benchmark and one standardised ability ``θ`` per model. Models with
fewer than ``min_observed`` fitted benchmarks keep ``θ = NULL`` and the reason.

Composite benchmarks stay out of the items: Epoch's own Capabilities Index
(``epoch_capabilities_index``) is itself an equating of these benchmarks, so it is the
reference ``θ`` is compared with (Spearman and Kendall over the models that have both), not an
input.

At ``level="base_model"`` the configurations of one base model meet in one row:
``best_default`` keeps the configuration with the most observed benchmarks (ties: the smaller
config id), ``max`` / ``mean`` aggregate cell by cell; the reference is aggregated the same way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr

from evalhouse.analytics.base import AnalysisRecord
from evalhouse.analytics.equate import CharacteristicCurveEquating
from evalhouse.analytics.equate_api import AnalysisDataMissing, curve_rows, plain_json, theta_rows
from evalhouse.analytics.matrices import model_meta, snapshot_id_of

HUB_SOURCE = "epoch-benchmarks"
REFERENCE = "epoch_capabilities_index"
HUB_LEVELS: tuple[str, ...] = ("configuration", "base_model")
HUB_AGGREGATES: tuple[str, ...] = ("best_default", "max", "mean")
_KEY = {"configuration": "config_id", "base_model": "base_model_id"}


def _sql(name: str) -> str:
    return resources.files("evalhouse.analytics").joinpath("sql", name).read_text(encoding="utf-8")


def hub_long(con: duckdb.DuckDBPyConnection, source_key: str = HUB_SOURCE) -> pd.DataFrame:
    """Long scores of the source's configurations on the source's benchmarks (composites flagged).

    Raises :class:`~evalhouse.analytics.equate_api.AnalysisDataMissing` when the source loaded nothing.
    """
    long = con.execute(_sql("hub_scores.sql"), [source_key]).df()
    if long.empty:
        raise AnalysisDataMissing(
            f"no {source_key} scores in this warehouse: run 'evalhouse refresh --source {source_key}' "
            f"or 'evalhouse ingest {source_key} PATH' (PATH: the hub's benchmark_data.zip; "
            "'evalhouse mirror from-shared' builds one from ../shared)"
        )
    # v_matrix_long averages in parallel, so a cell's last bits can differ between two reads of
    # the same warehouse; ten significant digits keep the input hash (and the run id) stable.
    long["value"] = stable_values(long["value"].to_numpy(dtype=float))
    long.attrs["snapshot_id"] = snapshot_id_of(con)
    return long


def stable_values(values: np.ndarray, digits: int = 10) -> np.ndarray:
    """Round to ``digits`` significant digits (NaN and zero kept)."""
    v = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log10(np.abs(v)))
    scale = np.where(np.isfinite(exponent), 10.0 ** (digits - 1 - np.where(np.isfinite(exponent), exponent, 0)), 1.0)
    return np.round(v * scale) / scale


def hub_wide(long: pd.DataFrame, level: str = "configuration", aggregate: str = "best_default") -> pd.DataFrame:
    """Rows = models at ``level``, columns = benchmarks (composites included; callers split them)."""
    if level not in HUB_LEVELS:
        raise ValueError(f"level must be one of {list(HUB_LEVELS)}, got {level!r}")
    if aggregate not in HUB_AGGREGATES:
        raise ValueError(f"aggregate must be one of {list(HUB_AGGREGATES)}, got {aggregate!r}")
    frame = long
    if level == "base_model":
        frame = long.dropna(subset=["base_model_id"])
        if aggregate == "best_default":
            items = frame[~frame["is_composite"].astype(bool)]
            counts = items.groupby("config_id")["benchmark_id"].nunique()
            configs = frame[["config_id", "base_model_id"]].drop_duplicates()
            configs = configs.assign(n=configs["config_id"].map(counts).fillna(0))
            best = configs.sort_values(["base_model_id", "n", "config_id"], ascending=[True, False, True])
            chosen = best.drop_duplicates("base_model_id")["config_id"]
            frame = frame[frame["config_id"].isin(set(chosen))]
    func = "mean" if aggregate == "best_default" else aggregate
    wide = frame.pivot_table(index=_KEY[level], columns="benchmark_id", values="value", aggfunc=func)
    wide.columns.name = "benchmark"
    wide.index.name = "model"
    wide = wide.sort_index(axis=0).sort_index(axis=1)
    wide.attrs["snapshot_id"] = long.attrs.get("snapshot_id")
    return wide


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
    source_key: str = HUB_SOURCE,
    level: str = "configuration",
    aggregate: str = "best_default",
    min_observed: int = 3,
    n_rounds: int = 6,
    reference: str = REFERENCE,
) -> HubEquating:
    """Fit the hub's characteristic curves and abilities (see the module docstring)."""
    t0 = time.perf_counter()
    long = hub_long(con, source_key)
    wide_all = hub_wide(long, level, aggregate)
    composite = set(long.loc[long["is_composite"].astype(bool), "benchmark_id"])
    # Every model stays, even one scored only on a composite: it gets theta NULL with the reason.
    items = wide_all[[c for c in wide_all.columns if c not in composite]]
    if items.shape[1] == 0:
        raise AnalysisDataMissing(f"{source_key} reported only composite benchmarks: nothing to equate")
    items.attrs["snapshot_id"] = long.attrs.get("snapshot_id")
    eq = CharacteristicCurveEquating(n_rounds=n_rounds, min_observed=min_observed).fit(items)
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
        "composites_excluded": sorted(composite),
        "duration_total_s": round(time.perf_counter() - t0, 6),
    }
    record = rec.model_copy(update={"params": plain_json(params), "diagnostics": plain_json(diagnostics)})
    if level == "configuration":
        meta = con.execute("SELECT DISTINCT ON (config_id) config_id, name FROM v_model_meta").df()
        names = meta.set_index("config_id")["name"]
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


def record_hub(con: duckdb.DuckDBPyConnection, hub: HubEquating) -> str:
    """Write the run: ``analysis_run`` + ``analysis_theta`` (every model) + ``analysis_curve``."""
    from evalhouse.warehouse.analysis import record_analysis

    return record_analysis(con, hub.record, theta=theta_rows(hub.equating), curve=curve_rows(hub.equating))


def hub_release_dates(con: duckdb.DuckDBPyConnection, hub: HubEquating) -> pd.Series:
    """Release date per model of ``hub`` (a base model: its earliest configuration's date)."""
    meta = model_meta(con)
    if hub.level == "configuration":
        dates = meta["release_date"]
    else:
        dates = meta.dropna(subset=["base_model"]).groupby("base_model")["release_date"].min()
    return dates.reindex(hub.theta.index)


__all__ = [
    "HUB_AGGREGATES",
    "HUB_LEVELS",
    "HUB_SOURCE",
    "REFERENCE",
    "HubEquating",
    "compare_with_reference",
    "equate_hub",
    "hub_long",
    "hub_release_dates",
    "hub_wide",
    "record_hub",
    "stable_values",
]
