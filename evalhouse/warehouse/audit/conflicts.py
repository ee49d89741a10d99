"""Cells several sources give a value for: every candidate, the spread, and what the policy chose."""

from __future__ import annotations

from typing import Any

import duckdb

from evalhouse.warehouse.audit.model import resolve_benchmark, resolve_model_name
from evalhouse.warehouse.audit.near_misses import near_misses
from evalhouse.warehouse.audit.queries import rows
from evalhouse.warehouse.audit.score import POLICY_RULES


def conflicts(
    con: duckdb.DuckDBPyConnection,
    *,
    benchmark: str | None = None,
    model: str | None = None,
    disagreeing: bool = False,
    limit: int = 1000,
) -> dict[str, Any]:
    """Cells with more than one candidate value (``benchmark`` and ``model`` are resolved as a user
    types them; an unknown name is an input error with the closest names). With ``model``, also the
    near misses: cells of the same base model (on ``benchmark``, its family and its links) whose
    sources did not meet, with the key parts that kept them apart."""
    benchmark_id = resolve_benchmark(con, benchmark) if benchmark else None
    configs = resolve_model_name(con, model).config_ids if model else [None]
    cells: list[dict[str, Any]] = []
    for config in configs:
        cells += rows(
            con,
            "conflict_cells.sql",
            benchmark=benchmark_id,
            config=config,
            disagreeing=disagreeing,
            limit=limit,
        )
    setting = con.execute("SELECT value FROM curation_setting WHERE key = 'conflict_policy'").fetchall()
    policy = cells[0]["policy"] if cells else (setting[0][0] if setting else None)
    total = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE disagreement) FROM v_scores_canonical WHERE n_candidates > 1"
        " AND ($1 IS NULL OR benchmark_id = $1)",
        [benchmark_id],
    ).fetchone() or (0, 0)
    found = near_misses(con, configs, benchmark_id) if model else None
    return {
        "near_misses": found,
        "benchmark": benchmark_id,
        "model": model,
        "policy": policy,
        "rule": POLICY_RULES.get(policy, policy) if policy else None,
        "cells_with_candidates": int(total[0]),
        "cells_disagreeing": int(total[1]),
        "shown": len(cells[:limit]),
        "cells": cells[:limit],
    }
