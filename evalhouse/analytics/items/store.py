"""Storing an item audit: ``analysis_run`` + ``analysis_item`` + ``analysis_item_benchmark`` rows,
and the columns ``items.csv`` is written with."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from evalhouse.analytics.items.audit import ItemAudit
from evalhouse.warehouse.analysis import record_analysis
from evalhouse.warehouse.insert import insert_rows

CSV_COLUMNS = [
    "item_id", "benchmark", "domain", "n_responses", "p_mean", "sigma2", "sigma2_lo", "sigma2_hi", "z",
    "margin_median", "margin_mean", "slope_pt", "slope_sft", "slope_rl", "se_pt", "se_sft", "se_rl",
    "slope_pt_lo", "slope_pt_hi", "slope_sft_lo", "slope_sft_hi", "slope_rl_lo", "slope_rl_hi",
    "cheapest_axis", "marginal_cost",
    "excluded", "excluded_improvability", "excluded_noise", "improvability_rank", "improvability_rank_lo",
    "improvability_rank_hi", "noise_rank", "noise_rank_lo", "noise_rank_hi",
]  # fmt: skip
TABLE_COLUMNS = [
    "item_id", "benchmark", "domain", "n_responses", "p_mean", "sigma2", "z", "margin_mean", "margin_median",
    "slope_pt", "slope_sft", "slope_rl", "se_pt", "se_sft", "se_rl", "cost_pt", "cost_sft", "cost_rl",
    "cheapest_axis", "marginal_cost", "excluded_improvability", "excluded_noise", "excluded",
    "improvability_rank", "improvability_rank_lo", "improvability_rank_hi",
    "noise_rank", "noise_rank_lo", "noise_rank_hi",
]  # fmt: skip

WELFARE_COLUMNS = ["w_auto", "w_aug", "quadrant", "v_star", "v_star_diagonal", "v_star_reason"]


def store_audit(con: duckdb.DuckDBPyConnection, audit: ItemAudit) -> str:
    """``analysis_run`` + ``analysis_item`` + ``analysis_item_benchmark`` rows (replacing a rerun's)."""
    analysis_id = record_analysis(con, audit.record_)
    for table in ("analysis_item", "analysis_item_benchmark"):
        con.execute(f"DELETE FROM {table} WHERE analysis_id = ?", [analysis_id])
    frame = audit.items_.reindex(columns=[*TABLE_COLUMNS, *WELFARE_COLUMNS]).copy()
    frame.insert(0, "analysis_id", analysis_id)
    _insert_frame(con, "analysis_item", frame)
    bench = audit.benchmarks_.copy()
    bench.insert(0, "analysis_id", analysis_id)
    _insert_frame(con, "analysis_item_benchmark", bench)
    return analysis_id


def _insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame) -> None:
    clean = frame.astype(object).where(pd.notna(frame), None)
    rows = [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in r.items()} for r in clean.to_dict("records")]
    insert_rows(con, table, rows)
