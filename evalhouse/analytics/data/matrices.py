"""The one model x benchmark matrix builder, from the warehouse views (or a snapshot's identical views).

Analyses take a DuckDB connection - a warehouse opened read-only or ``evalhouse.open_snapshot(path)``
- and get pandas frames: the long cells of one source (:func:`source_long`), the wide matrix built
from them (:func:`wide_matrix`: rows = models at the chosen level, columns = canonical benchmark
ids, values higher-is-better on each benchmark's canonical metric, NaN = not observed) and the
model facts used as covariates (:func:`model_meta`). Every frame carries ``attrs["snapshot_id"]``,
the pin of what it was read from (:func:`evalhouse.analytics.data.pin.pin_of`).
"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from evalhouse.analytics.checks import check_choice
from evalhouse.analytics.data.defaults import best_default_configuration
from evalhouse.analytics.data.pin import pin_of
from evalhouse.common.resources import read_sql
from evalhouse.errors import DataMissing

LEVELS: tuple[str, ...] = ("configuration", "base_model")
AGGREGATES: tuple[str, ...] = ("best_default", "max", "mean")
LEVEL_COLUMN = {"configuration": "config_id", "base_model": "base_model_id"}


def stable_values(values: np.ndarray, digits: int = 10) -> np.ndarray:
    """Round to ``digits`` significant digits (NaN and zero kept).

    ``v_matrix_long`` averages in parallel, so a cell's last bits can differ between two reads of
    the same warehouse; ten significant digits keep input hashes (and run ids) stable.
    """
    v = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log10(np.abs(v)))
    finite = np.isfinite(exponent)
    scale = np.where(finite, 10.0 ** (digits - 1 - np.where(finite, exponent, 0)), 1.0)
    return np.round(v * scale) / scale


def source_long(con: duckdb.DuckDBPyConnection, source: str) -> pd.DataFrame:
    """Long cells of the configurations ``source`` reported, on the benchmarks it reported.

    Columns ``config_id, base_model_id, benchmark_id, value, is_composite``; values from
    ``v_matrix_long`` (canonical, higher-is-better). Raises
    :class:`~evalhouse.errors.DataMissing` when the source loaded nothing.
    """
    long = con.execute(read_sql("evalhouse.analytics", "source_cells.sql"), [source]).df()
    if long.empty:
        raise DataMissing(
            f"no {source} scores here: run 'evalhouse refresh --source {source}' or 'evalhouse ingest "
            f"{source} PATH' ('evalhouse mirror from-shared' builds replayable payloads from ../shared)"
        )
    long["value"] = stable_values(long["value"].to_numpy(dtype=float))
    long["is_composite"] = long["is_composite"].astype(bool)
    long.attrs["snapshot_id"] = pin_of(con)
    long.attrs["source"] = source
    return long


def source_own_long(con: duckdb.DuckDBPyConnection, source: str) -> pd.DataFrame:
    """Like :func:`source_long`, but only the source's own rows (``sql/source_own_cells.sql``).

    The best value per configuration x benchmark over setups, on each benchmark's canonical metric;
    no other source's row for the same cell can enter (the hub fits must not see AA's GPQA).
    Composite benchmarks are not included.
    """
    long = con.execute(read_sql("evalhouse.analytics", "source_own_cells.sql"), [source]).df()
    if long.empty:
        raise DataMissing(f"no {source} scores here: run 'evalhouse refresh --source {source}'")
    long = long[["config_id", "base_model_id", "benchmark_id", "value"]].assign(is_composite=False)
    long["value"] = stable_values(long["value"].to_numpy(dtype=float))
    long.attrs["snapshot_id"] = pin_of(con)
    long.attrs["source"] = source
    return long


def _best_default_configs(long: pd.DataFrame) -> set[str]:
    """Per base model, the configuration observed on the most non-composite benchmarks."""
    items = long[~long["is_composite"]]
    counts = items.groupby("config_id")["benchmark_id"].nunique()
    configs = long[["config_id", "base_model_id"]].drop_duplicates().to_dict("records")
    picked = best_default_configuration(
        configs,
        score=lambda r: counts.get(r["config_id"], 0),
        key=lambda r: str(r["base_model_id"]),
        name=lambda r: str(r["config_id"]),
    )
    return {str(r["config_id"]) for r in picked}


def wide_matrix(long: pd.DataFrame, level: str = "configuration", aggregate: str = "best_default") -> pd.DataFrame:
    """Rows = models at ``level``, columns = benchmarks (composites included; callers split them).

    At ``level="base_model"`` the configurations of one base model meet in one row:
    ``best_default`` keeps the configuration with the most observed benchmarks
    (:func:`~evalhouse.analytics.data.defaults.best_default_configuration`), ``max`` / ``mean``
    aggregate cell by cell.
    """
    check_choice("level", level, LEVELS)
    check_choice("aggregate", aggregate, AGGREGATES)
    frame = long
    if level == "base_model":
        frame = long.dropna(subset=["base_model_id"])
        if aggregate == "best_default":
            frame = frame[frame["config_id"].isin(_best_default_configs(frame))]
    func = "mean" if aggregate == "best_default" else aggregate
    wide = frame.pivot_table(index=LEVEL_COLUMN[level], columns="benchmark_id", values="value", aggfunc=func)
    wide = wide.sort_index(axis=0).sort_index(axis=1).astype(float)
    wide.columns.name = "benchmark"
    wide.index.name = "model"
    wide.attrs = dict(long.attrs)
    return wide


def items_and_composites(wide: pd.DataFrame, long: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Split a wide matrix into its non-composite columns and the names of the composite ones."""
    composite = sorted(set(long.loc[long["is_composite"], "benchmark_id"]))
    items = wide[[c for c in wide.columns if c not in composite]]
    items.attrs = dict(wide.attrs)
    return items, composite


def model_meta(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Covariates per configuration (index ``config_id``): name, release date, reasoning, parameters..."""
    frame = con.execute(read_sql("evalhouse.analytics", "model_meta.sql")).df().set_index("config_id")
    frame["release_date"] = pd.to_datetime(frame["release_date"])
    frame = frame.rename(columns={"base_model_id": "base_model", "developer_id": "developer"})
    frame.attrs["snapshot_id"] = pin_of(con)
    return frame


def warehouse_long(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Like :func:`source_long`, for every source at once (``sql/warehouse_cells.sql``)."""
    long = con.execute(read_sql("evalhouse.analytics", "warehouse_cells.sql")).df()
    if long.empty:
        raise DataMissing("no scores here: run 'evalhouse refresh' or 'evalhouse import-eee DIR' first")
    long["value"] = stable_values(long["value"].to_numpy(dtype=float))
    long["is_composite"] = long["is_composite"].astype(bool)
    long.attrs["snapshot_id"] = pin_of(con)
    long.attrs["source"] = "all"
    return long
