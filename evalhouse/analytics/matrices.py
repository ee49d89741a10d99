"""Model x benchmark matrices from the warehouse views (or a snapshot's identical views).

Analyses take a DuckDB connection — a warehouse opened read-only or
``evalhouse.open_snapshot(path)`` — and get pandas frames: the wide matrix (rows = models at the
chosen level, columns = canonical benchmark ids, values higher-is-better on each benchmark's
canonical metric, NaN = not observed) and the model facts used as covariates. The frames carry
``attrs["snapshot_id"]`` when the connection is a snapshot, so every fit records what it saw.
"""

from __future__ import annotations

from importlib import resources
from typing import Literal

import duckdb
import pandas as pd

Level = Literal["configuration", "base_model", "family"]
LEVELS: tuple[str, ...] = ("configuration", "base_model", "family")
AGGREGATES: tuple[str, ...] = ("mean", "max", "best_default")
_LEVEL_COLUMN = {"configuration": "config_id", "base_model": "base_model_id", "family": "family_id"}


def _sql(name: str) -> str:
    return resources.files("evalhouse.analytics").joinpath("sql", name).read_text(encoding="utf-8")


def snapshot_id_of(con: duckdb.DuckDBPyConnection) -> str | None:
    """The snapshot id when ``con`` is an opened snapshot, else None (a live warehouse)."""
    try:
        rows = con.execute("SELECT snapshot_id FROM snapshot_meta").fetchall()
    except duckdb.CatalogException:
        return None
    return rows[0][0] if rows else None


def _tag(frame: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    frame.attrs["snapshot_id"] = snapshot_id_of(con)
    return frame


def long_scores(con: duckdb.DuckDBPyConnection, benchmarks: list[str] | None = None) -> pd.DataFrame:
    """``v_matrix_long`` as a frame (one row per configuration x benchmark)."""
    frame = con.execute(
        "SELECT * FROM v_matrix_long WHERE $1 IS NULL OR list_contains($1, benchmark_id)", [benchmarks]
    ).df()
    return _tag(frame, con)


def model_meta(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Covariates per configuration (index ``config_id``): release date, reasoning, parameters..."""
    frame = con.execute("SELECT * FROM v_model_meta ORDER BY config_id").df().set_index("config_id")
    frame["release_date"] = pd.to_datetime(frame["release_date"])
    frame = frame.rename(columns={"base_model_id": "base_model", "developer_id": "developer"})
    return _tag(frame, con)


def wide_matrix(
    con: duckdb.DuckDBPyConnection,
    *,
    level: Level = "configuration",
    aggregate: str = "best_default",
    benchmarks: list[str] | None = None,
) -> pd.DataFrame:
    """Rows = models at ``level``, columns = benchmarks.

    Above the configuration level several configurations meet in one row: ``best_default`` keeps
    the configuration with the highest intelligence index, else the most observed benchmarks
    (paper 000's "best default configuration"); ``max`` and ``mean`` aggregate cell by cell.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    long = long_scores(con, benchmarks)
    if level == "configuration":
        wide = long.pivot_table(index="config_id", columns="benchmark_id", values="value", aggfunc="mean")
    elif aggregate == "best_default":
        meta = model_meta(con)
        key = _LEVEL_COLUMN[level]
        counts = long.groupby("config_id")["benchmark_id"].nunique().rename("n_observed")
        ranking = meta.join(counts).assign(n_observed=lambda m: m["n_observed"].fillna(0))
        ranking["_index"] = ranking["intelligence_index"].fillna(float("-inf"))
        group = "base_model" if level == "base_model" else "family_id"
        best = (
            ranking.reset_index()
            .sort_values([group, "_index", "n_observed", "config_id"], ascending=[True, False, False, True])
            .drop_duplicates(group)
        )
        chosen = long[long["config_id"].isin(best["config_id"])]
        wide = chosen.pivot_table(index=key, columns="benchmark_id", values="value", aggfunc="mean")
    else:
        wide = long.pivot_table(index=_LEVEL_COLUMN[level], columns="benchmark_id", values="value", aggfunc=aggregate)
    wide.columns.name = None
    wide.index.name = _LEVEL_COLUMN[level]
    return _tag(wide.sort_index(axis=0).sort_index(axis=1), con)


def coverage(con: duckdb.DuckDBPyConnection) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per-benchmark n, pairwise overlap matrix)`` computed from counts alone."""
    counts = con.execute(_sql("coverage_counts.sql")).df().set_index("benchmark_id")["n_models"]
    pairs = con.execute(_sql("coverage_overlap.sql")).df()
    overlap = pairs.pivot(index="benchmark_a", columns="benchmark_b", values="n_models").fillna(0).astype(int)
    overlap = overlap.loc[counts.index, counts.index]
    overlap.index.name = overlap.columns.name = None
    return _tag(counts.to_frame(), con), _tag(overlap, con)
