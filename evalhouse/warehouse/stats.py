"""Counts a user checks first: what is in the warehouse, what was refused, and where sources meet.

``cells_with_several_sources`` counts the canonical cells whose candidates come from two sources
or more (the same measurement reported twice, the spread between them the disagreement);
``source_pairs`` splits them by pair of sources.
"""

from __future__ import annotations

from typing import Any

from evalhouse.common.resources import read_sql
from evalhouse.warehouse.db import Warehouse

COUNTS = {
    "sources": "SELECT count(*) FROM source",
    "evaluations": "SELECT count(*) FROM evaluation",
    "scores": "SELECT count(*) FROM score",
    "scores_current": "SELECT count(*) FROM v_score_current",
    "models": "SELECT count(*) FROM model_config",
    "base_models": "SELECT count(*) FROM base_model",
    "benchmarks": "SELECT count(DISTINCT benchmark_id) FROM score",
    "quarantined": "SELECT count(*) FROM quarantine",
    "raw_payloads": "SELECT count(DISTINCT sha256) FROM raw_snapshot",
    # one pass over the canonical view for its counts (its policy and windows are the costly part)
    "canonical_cells, cells_with_disagreement, cells_with_several_sources": "SELECT count(*),"
    " count(*) FILTER (WHERE disagreement), count(*) FILTER (WHERE n_sources >= 2) FROM v_scores_canonical",
    "matrix_cells": "SELECT count(*) FROM v_matrix_long",
    "ingest_runs": "SELECT count(*) FROM ingest_run",
}


def stats(wh: Warehouse) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for names, sql in COUNTS.items():  # a key naming several counts is one query returning them all
        row = wh.con.execute(sql).fetchall()[0]
        out.update(zip(names.split(", "), map(int, row), strict=True))
    out["schema_version"] = wh.schema_version()
    out["source_pairs"] = [
        {"sources": [a, b], "cells": n, "cells_disagreeing": d}
        for a, b, n, d in wh.con.execute(read_sql("evalhouse.warehouse", "stats_source_pairs.sql")).fetchall()
    ]
    out["by_source"] = [
        {"source": s, "evaluations": e, "scores": n, "quarantined": q, "last_status": st}
        for s, e, n, q, st in wh.con.execute(
            "SELECT source_key, evaluations, scores, quarantined, last_status FROM v_source_status ORDER BY 1"
        ).fetchall()
    ]
    _with_last_load(wh, out["by_source"])
    return out


def _with_last_load(wh: Warehouse, rows: list[dict[str, Any]]) -> None:
    """Add the last run that loaded rows (status, quarantined, run id) to each source's row: a
    quiet night's run is ``unchanged`` while that load's quarantine is still in the warehouse."""
    last = {
        key: (status, quarantined, run_id)
        for key, status, quarantined, run_id, _started in wh.con.execute(
            read_sql("evalhouse.warehouse", "source_last_load.sql")
        ).fetchall()
    }
    for row in rows:
        status, quarantined, run_id = last.get(row["source"], (None, None, None))
        row.update(last_load_status=status, last_load_quarantined=quarantined, last_load_run_id=run_id)
