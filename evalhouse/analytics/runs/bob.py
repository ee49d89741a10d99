"""Balance of Benchmarks as runs: ``compare --task`` and ``reproduce paper-004``.

The rules for input, pin and recording are in :mod:`evalhouse.analytics.runs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from evalhouse.analytics.bob.compare import compare_models, warehouse_text_store
from evalhouse.analytics.bob.texts import store_texts
from evalhouse.analytics.data.aa import AA_SOURCE, aa_frames
from evalhouse.analytics.reproduce.paper004 import paper_benchmarks
from evalhouse.analytics.reproduce.paper004 import reproduce_paper004 as run_paper004
from evalhouse.analytics.runs.common import Outcome, pinned, reading, record, source_input


def compare(
    task: str,
    *,
    db: Path,
    snapshot: Path | None = None,
    record_into: Path | None = None,
    benchmarks: str | Sequence[str] = "all",
    **options: Any,
) -> Outcome:
    """Rank the AA configurations for a task described in words (BoB-Support)."""
    chosen = paper_benchmarks() if benchmarks == "paper" else benchmarks
    with reading(db, snapshot) as con:
        run = compare_models(con, task, benchmarks=chosen, **options)

    def also(con: duckdb.DuckDBPyConnection) -> None:
        store_texts(con, run.texts)
        run.cache.write_pending(con)

    analysis_id, where = record(record_into, run.record, run.results, also=also)
    return Outcome(run.payload, analysis_id=analysis_id, recorded_in=where)


def reproduce_paper004(
    *,
    db: Path,
    input_path: Path | None = None,
    snapshot: Path | None = None,
    record_into: Path | None = None,
    **options: Any,
) -> Outcome:
    """Paper 004's AA leave-one-benchmark-out comparison.

    Input: a CSV ingested through the real parser into a scratch warehouse, a snapshot, or the warehouse.
    """

    def run(con: duckdb.DuckDBPyConnection) -> Any:
        wide, meta = aa_frames(con)
        return run_paper004(wide, meta, texts=warehouse_text_store(con), cache_con=con, **options)

    with source_input(db, source_key=AA_SOURCE, input_path=input_path, snapshot=snapshot) as (con, pin):
        result = run(con)
    pin = pin or result.payload.get("snapshot_id")
    rec = pinned(result.record, pin)
    checks = result.payload["checks"]
    analysis_id, where = record(record_into, rec, {"quantity": result.quantities}, also=result.cache.write_pending)
    # Off when BoB's profile is not above both baselines or the copy-stress test fails (checks["exit_rule"]).
    ok = bool(checks["ok"])
    return Outcome(result.payload | {"snapshot_id": rec.snapshot_id}, ok=ok, analysis_id=analysis_id, recorded_in=where)
