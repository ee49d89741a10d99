"""The cells the ECI pipeline fits: the hub's own scores, normalised, grouped and screened.

From the long cells of one source (``sql/source_own_cells.sql``: the source's own current rows, the
best value per configuration x benchmark over setups, non-composite benchmarks, each benchmark's
canonical metric) the steps of Epoch's published method, each driven by the benchmark registry
``eci_benchmarks.yaml`` beside this module:

1. rows of models released before ``released_from`` are dropped;
2. benchmarks the registry excludes (or does not list) are dropped, with the reason;
3. values become proportions ``p = (x - baseline) / (ceiling - baseline)`` clipped to [0, 1]
   (log-scaled between the bounds for unbounded, multiplicative metrics);
4. configurations meet in model groups (the curation layer's base model, or the configuration
   itself) with the best ``p`` per (group, benchmark);
5. a benchmark a group has a newer version of (``supersedes``) is dropped for that group;
6. the inclusion rule, before any fit: a group enters only when its release date is known (the
   earliest date of its configurations; ``inclusion.require_release_date``) — an undated model
   cannot be placed in time and is typically an old fine-tuned system with a few saturated scores
   (UNICORN, 2021) — and when it has at least ``min_benchmarks_per_model`` benchmarks while every
   benchmark keeps ``min_models_per_benchmark`` groups, iterated to a fixed point. The groups the
   rule keeps out are not dropped silently: they are returned in ``apart`` with their reason, and
   ``analyze eci`` shows them apart, read off the fitted curves without entering the fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from evalhouse.analytics.checks import check_choice
from evalhouse.analytics.data.pin import pin_of
from evalhouse.common.resources import package_text, read_sql
from evalhouse.common.yamls import load_yaml
from evalhouse.errors import DataMissing, InputError

GROUPINGS: tuple[str, ...] = ("configuration", "base_model")
_GROUP_COLUMN = {"configuration": "config_id", "base_model": "base_model_id"}


@cache
def registry() -> dict[str, Any]:
    """The parsed ``eci_benchmarks.yaml``."""

    return load_yaml(package_text("evalhouse.analytics.equate", "eci_benchmarks.yaml"))


def hub_cells(con: duckdb.DuckDBPyConnection, source: str = "epoch-benchmarks") -> pd.DataFrame:
    """The source's own cells: ``config_id, base_model_id, source_model(s), release_date, benchmark_id, value``."""
    long = con.execute(read_sql("evalhouse.analytics", "source_own_cells.sql"), [source]).df()
    if long.empty:
        raise DataMissing(
            f"no {source} scores here: run 'evalhouse refresh --source {source}' or 'evalhouse ingest {source} PATH'"
        )
    long["release_date"] = pd.to_datetime(long["release_date"], errors="coerce")
    long.attrs["snapshot_id"] = pin_of(con)
    long.attrs["source"] = source
    return long


def normalise(values: np.ndarray, entry: dict[str, Any]) -> np.ndarray:
    """Registry normalisation of one benchmark's raw values to proportions in [0, 1]."""
    lo, hi = float(entry["baseline"]), float(entry["ceiling"])
    x = np.asarray(values, dtype=float)
    if entry["transform"] == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            p = (np.log(np.maximum(x, lo)) - np.log(lo)) / (np.log(hi) - np.log(lo))
    else:
        p = (x - lo) / (hi - lo)
    return np.clip(p, 0.0, 1.0)


@dataclass
class EciCells:
    """The screened cells (``group, benchmark, p``), the groups' source names, and what was dropped."""

    cells: pd.DataFrame
    names: pd.DataFrame  # one row per source model name: source_model, group (fitted and apart)
    dropped: dict[str, Any]
    grouping: str
    apart: pd.DataFrame  # cells of the groups the inclusion rule keeps out: group, benchmark, p, reason
    dates: pd.Series  # release date per group (NaT: unknown)


def _screen(cells: pd.DataFrame, min_benchmarks: int, min_models: int) -> tuple[pd.DataFrame, dict[str, int]]:
    dropped = {"groups_below_min_benchmarks": 0, "benchmarks_below_min_models": 0}
    while True:
        per_group = cells.groupby("group")["benchmark"].transform("nunique")
        per_bench = cells.groupby("benchmark")["group"].transform("nunique")
        keep = (per_group >= min_benchmarks) & (per_bench >= min_models)
        if keep.all():
            return cells, dropped
        dropped["groups_below_min_benchmarks"] += int(cells.loc[per_group < min_benchmarks, "group"].nunique())
        dropped["benchmarks_below_min_models"] += int(cells.loc[per_bench < min_models, "benchmark"].nunique())
        cells = cells[keep]


def prepare(long: pd.DataFrame, *, grouping: str = "configuration") -> EciCells:
    """Steps 1-6 of the module docstring on ``hub_cells`` output."""
    check_choice("grouping", grouping, GROUPINGS)
    reg = registry()
    entries = reg["benchmarks"]
    since = pd.Timestamp(reg["released_from"])
    early = long["release_date"].notna() & (long["release_date"] < since)
    frame = long[~early].copy()
    listed = frame["benchmark_id"].map(lambda b: bool(entries.get(b, {}).get("include", False)))
    excluded = sorted(set(frame.loc[~listed, "benchmark_id"]))
    frame = frame[listed]
    frame["p"] = np.nan
    for bench, idx in frame.groupby("benchmark_id").groups.items():
        frame.loc[idx, "p"] = normalise(frame.loc[idx, "value"].to_numpy(), entries[bench])
    frame["group"] = frame[_GROUP_COLUMN[grouping]].astype(str)
    cells = (
        frame.groupby(["group", "benchmark_id"], as_index=False)["p"]
        .max()
        .rename(columns={"benchmark_id": "benchmark"})
    )
    superseded = 0
    for bench, entry in entries.items():
        for old in entry.get("supersedes", []) or []:
            has_new = set(cells.loc[cells["benchmark"] == bench, "group"])
            drop = (cells["benchmark"] == old) & cells["group"].isin(has_new)
            superseded += int(drop.sum())
            cells = cells[~drop]
    dates = frame.groupby("group")["release_date"].min().reindex(sorted(set(cells["group"])))
    undated = set(dates.index[dates.isna()]) if reg["inclusion"]["require_release_date"] else set()
    kept_out = cells[cells["group"].isin(undated)]
    before = cells[~cells["group"].isin(undated)]
    n_min = int(reg["min_benchmarks_per_model"])
    cells, screened = _screen(before, n_min, int(reg["min_models_per_benchmark"]))
    if cells.empty:
        raise InputError("no model group has enough benchmarks for the ECI fit")
    few = before[~before["group"].isin(set(cells["group"]))]
    apart = pd.concat(
        [
            cells_of(kept_out, "release date unknown"),
            cells_of(few, f"fewer than {n_min} benchmarks with enough models"),
        ],
        ignore_index=True,
    )
    names = frame[["source_models", "group"]].explode("source_models").rename(columns={"source_models": "source_model"})
    names = names.dropna().drop_duplicates("source_model").sort_values("source_model")
    dropped = {
        "rows_released_before": int(early.sum()),
        "released_from": str(since.date()),
        "benchmarks_excluded": {
            b: entries.get(b, {}).get("reason", "not in the ECI benchmark registry") for b in excluded
        },
        "superseded_cells": superseded,
        "groups_undated": len(undated),
        **screened,
    }
    cells = cells.reset_index(drop=True)
    cells.attrs = dict(long.attrs)
    shown = set(cells["group"]) | set(apart["group"])
    return EciCells(
        cells=cells,
        names=names[names["group"].isin(shown)].reset_index(drop=True),
        dropped=dropped,
        grouping=grouping,
        apart=apart,
        dates=dates,
    )


def cells_of(cells: pd.DataFrame, reason: str) -> pd.DataFrame:
    """``group, benchmark, p, reason`` rows of groups kept out of the fit."""
    return cells[["group", "benchmark", "p"]].assign(reason=reason)
