"""The item-level entry points the CLI calls: simulate a panel into the warehouse, run the audit.

``simulate_into`` writes a simulated panel through the same loader as every harness log
(``pipeline.items_ingest.load_items``: one transaction, one ``ingest_run``). ``analyze_items``
runs :class:`~evalhouse.analytics.items.audit.ItemAudit` on DuckDB (the warehouse or a snapshot)
or on Spark over the same tables as Parquet, stores the per-item results in ``analysis_item`` /
``analysis_item_benchmark`` when given a writable warehouse, and writes ``items.csv``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from evalhouse.analytics.items.audit import ItemAudit
from evalhouse.analytics.items.engine import DuckDBEngine, Engine, SparkEngine, export_parquet, local_spark, render
from evalhouse.analytics.items.landscape import add_welfare
from evalhouse.analytics.items.optimal import OptimalWeights
from evalhouse.analytics.items.simulate import PanelSpec, SimulatedPanel, simulate_panel
from evalhouse.errors import InputError
from evalhouse.pipeline import ledger
from evalhouse.pipeline.items_ingest import load_items
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.insert import insert_rows

SIMULATOR = ledger.SourceRow(
    "simulate-panel", "evalhouse panel simulator (known ground truth)", "simulation", 4, "evalhouse", None
)
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


def simulate_into(wh: Warehouse, spec: PanelSpec) -> tuple[ledger.RunResult, SimulatedPanel]:
    """Simulate ``spec`` and load it like a harness log (one transaction, one ``ingest_run``)."""
    from evalhouse.curation.registry import load_registry  # noqa: PLC0415 - the registry is read only by the simulated-panel path

    panel = simulate_panel(spec)
    ctx = ledger.RunContext(
        source=SIMULATOR,
        trigger="simulate",
        registry=load_registry(),
        parser_version="simulate-panel/1",
        details={"spec": spec.as_dict(), "suites": panel.suites},
    )
    return load_items(wh, ctx, [panel.batch]), panel


def snapshot_id(con: duckdb.DuckDBPyConnection) -> str | None:
    try:
        rows = con.execute("SELECT snapshot_id FROM snapshot_meta").fetchall()
    except duckdb.CatalogException:
        return None
    return rows[0][0] if rows else None


def make_engine(con: duckdb.DuckDBPyConnection, engine: str, parquet: str | Path | None, spark: Any = None) -> Engine:
    """The engine to run on: DuckDB on ``con``, or Spark over the Parquet files at ``parquet``."""
    if engine == "duckdb":
        return DuckDBEngine(con)
    if engine != "spark":
        raise InputError(f"unknown engine {engine!r}: choose duckdb or spark")
    if parquet is None:
        raise InputError("the spark engine reads Parquet: give --parquet/--snapshot, or let analyze_items export")
    return SparkEngine(spark or local_spark(), parquet)


def analyze_items(  # noqa: PLR0913 - the CLI's options, keyword-only
    con: duckdb.DuckDBPyConnection,
    *,
    engine: str = "duckdb",
    out: Path | None = None,
    writable: Warehouse | None = None,
    audit: ItemAudit | None = None,
    parquet: str | Path | None = None,
    welfare: Path | None = None,
    optimal: OptimalWeights | None = None,
    framing: str = "w_auto",
) -> dict[str, Any]:
    """Fit the audit; store it (if writable), write ``out/items.csv``; return the summary.

    ``welfare`` is a folder of WORKBank-format CSVs (see :mod:`.welfare`): the items then get
    w^auto, w^aug, their quadrant and the weights v* of Eq. 1 (``optimal`` sets r, the sweep and
    Sigma; ``framing`` which welfare score is w), and the summary the welfare landscape.
    """
    audit = audit or ItemAudit()
    seed_obs = None
    if engine == "spark" and parquet is None:  # the live tables, exported for the run and removed after
        with tempfile.TemporaryDirectory(prefix="evalhouse-items-") as tmp:
            runner = make_engine(con, engine, export_parquet(con, Path(tmp)))
            audit.fit(runner, snapshot_id=snapshot_id(con))
            seed_obs = _seed_obs(runner, audit, welfare, optimal)
    else:
        runner = make_engine(con, engine, parquet)
        audit.fit(runner, snapshot_id=snapshot_id(con))
        seed_obs = _seed_obs(runner, audit, welfare, optimal)
    landscape = (
        add_welfare(audit, welfare, optimal=optimal, framing=framing, seed_obs=seed_obs)
        if welfare is not None
        else None
    )
    analysis_id = None
    if writable is not None:
        with writable.transaction() as wcon:
            analysis_id = store_audit(wcon, audit)
    files = {}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        path = out / "items.csv"
        extra = [c for c in WELFARE_COLUMNS if c in audit.items_]
        audit.items_[CSV_COLUMNS + extra].to_csv(path, index=False)
        (out / "benchmarks.csv").write_text(audit.benchmarks_.to_csv(index=False), encoding="utf-8")
        files = {"items": str(path), "benchmarks": str(out / "benchmarks.csv")}
    items = audit.items_
    return {
        "analysis_id": analysis_id or audit.record_.run_id,
        "engine": audit.engine_,
        "suites": audit.suites_,
        "n_items": len(items),
        "excluded": {k: int(v) for k, v in items["excluded"].value_counts().items()},
        # each rule on its own (an item may fail both; "excluded" names the improvability rule first)
        "excluded_by_rule": {
            rule: {k: int(v) for k, v in items[f"excluded_{rule}"].value_counts().items()}
            for rule in ("noise", "improvability")
        },
        "cheapest_axis": {k: float(v) for k, v in items["cheapest_axis"].value_counts(normalize=True).items()},
        "benchmarks": audit.benchmarks_.to_dict("records"),
        "files": files,
        "welfare": landscape,
        "record": json.loads(audit.record_.model_dump_json()),
    }


def _seed_obs(runner: Engine, audit: ItemAudit, welfare: Path | None, optimal: OptimalWeights | None):
    """The noise suite's observations, read again only when v* is asked for with a full Sigma."""
    if welfare is None or optimal is None or optimal.sigma != "full":
        return None
    return runner.query(render("item_seed_obs.sql", noise_suites=audit.suites_["noise"]))


def store_audit(con: duckdb.DuckDBPyConnection, audit: ItemAudit) -> str:
    """``analysis_run`` + ``analysis_item`` + ``analysis_item_benchmark`` rows (replacing a rerun's)."""
    from evalhouse.warehouse.analysis import record_analysis  # noqa: PLC0415 - warehouse writes happen only when recording

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
