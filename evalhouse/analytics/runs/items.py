"""Item-level analyses as runs: ``simulate-panel`` and ``analyze items`` (paper 003's item audit).

:func:`simulate_panel` writes a simulated panel through the same loader as every harness log
(``pipeline.items_ingest.load_items``: one transaction, one ``ingest_run``). :func:`analyze_items`
runs :class:`~evalhouse.analytics.items.audit.ItemAudit` on DuckDB (the warehouse or a snapshot)
or on Spark over the same tables as Parquet, records the per-item results in ``analysis_item`` /
``analysis_item_benchmark`` and writes ``items.csv``. The rules for input and recording are in
:mod:`evalhouse.analytics.runs`; :func:`fit_items` and :func:`simulate_into` are the same on an
open connection or warehouse.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import duckdb

from evalhouse.analytics.items.audit import ItemAudit
from evalhouse.analytics.items.engine import DuckDBEngine, Engine, SparkEngine, export_parquet, local_spark, render
from evalhouse.analytics.items.landscape import add_welfare
from evalhouse.analytics.items.optimal import OptimalWeights
from evalhouse.analytics.items.simulate import PanelSpec, SimulatedPanel
from evalhouse.analytics.items.simulate import simulate_panel as simulate
from evalhouse.analytics.items.store import CSV_COLUMNS, WELFARE_COLUMNS, store_audit
from evalhouse.analytics.runs.common import Outcome, named_errors, reading
from evalhouse.errors import InputError
from evalhouse.pipeline.items_ingest import load_items
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load import ledger

SIMULATOR = ledger.SourceRow(
    "simulate-panel", "evalhouse panel simulator (known ground truth)", "simulation", 4, "evalhouse", None
)


def simulate_panel(*, db: Path, truth: Path | None = None, **spec: Any) -> Outcome:
    """Generate a training panel with known ground truth and load it into ``db`` like a harness log.

    ``spec``: the :class:`~evalhouse.analytics.items.simulate.PanelSpec` fields (``n_items``,
    ``seeds``, ``seed_checkpoints``, ``noise_sd``, ``random_state``, ``prefix``). ``truth``: write
    the ground truth per item to this CSV. ``ok`` is false when the load failed.
    """
    with named_errors(), Warehouse.open(db) as wh:
        result, panel = simulate_into(wh, PanelSpec(**spec))
    if truth is not None:
        truth.parent.mkdir(parents=True, exist_ok=True)
        panel.truth.to_csv(truth, index=False)
    payload = {**result.as_dict(), "suites": panel.suites, "truth": str(truth) if truth else None}
    return Outcome(payload, ok=result.status != "failed", exact=True)


def simulate_into(wh: Warehouse, spec: PanelSpec) -> tuple[ledger.RunResult, SimulatedPanel]:
    """Simulate ``spec`` and load it like a harness log (one transaction, one ``ingest_run``)."""
    from evalhouse.curation.registry import load_registry  # noqa: PLC0415 - the registry is read only by the simulated-panel path

    panel = simulate(spec)
    ctx = ledger.RunContext(
        source=SIMULATOR,
        trigger="simulate",
        registry=load_registry(),
        parser_version="simulate-panel/1",
        details={"spec": spec.as_dict(), "suites": panel.suites},
    )
    return load_items(wh, ctx, [panel.batch]), panel


def analyze_items(
    *,
    db: Path,
    snapshot: Path | None = None,
    record_into: Path | None = None,
    **options: Any,
) -> Outcome:
    """The benchmark-item audit of the warehouse at ``db`` (or ``snapshot``), recorded into
    ``record_into`` (None: not recorded).

    ``options``: ``engine`` (duckdb, spark), ``out`` (a folder for items.csv and benchmarks.csv),
    ``parquet`` (Spark: the ``<dir>/<table>/*.parquet`` files to read; a snapshot's own when not
    given), ``welfare`` (a WORKBank-format folder), ``framing`` (w_auto, w_aug), ``audit`` (an
    :class:`ItemAudit`) or its settings ``cost_scenario``, ``n_boot``, ``random_state``,
    ``improvability_exclusion``, ``intervals``; ``optimal`` (an :class:`OptimalWeights`) or its
    settings ``r``, ``r_unit``, ``r_sweep``, ``sigma``. The payload is the audit's summary.
    """
    engine = options.pop("engine", "duckdb")
    parquet = options.pop("parquet", None)
    if engine == "spark" and parquet is None and snapshot is not None:
        parquet = snapshot
    fit = {k: options.pop(k) for k in ("out", "welfare", "framing") if k in options}
    audit = options.pop("audit", None) or ItemAudit(
        **{k: options.pop(k) for k in _AUDIT_SETTINGS if k in options},
    )
    optimal = options.pop("optimal", None)
    if optimal is None and any(k in options for k in _OPTIMAL_SETTINGS):
        optimal = OptimalWeights(**{k: options.pop(k) for k in _OPTIMAL_SETTINGS if k in options})
    if options:
        raise InputError(f"unknown item-audit option(s): {', '.join(sorted(options))}")
    with reading(db, snapshot) as con:
        summary = fit_items(con, engine=engine, parquet=parquet, audit=audit, optimal=optimal, **fit)
    if record_into is not None:
        with named_errors(), Warehouse.open(record_into) as wh, wh.transaction() as wcon:
            summary["analysis_id"] = store_audit(wcon, audit)
    return Outcome(summary, analysis_id=summary["analysis_id"] if record_into else None, exact=True)


_AUDIT_SETTINGS = ("cost_scenario", "n_boot", "random_state", "improvability_exclusion", "intervals")
_OPTIMAL_SETTINGS = ("r", "r_unit", "r_sweep", "sigma")


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


def fit_items(  # noqa: PLR0913 - the audit's options, keyword-only
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
    """Fit the audit on ``con``; store it (if ``writable``), write ``out/items.csv``; return the summary.

    ``welfare`` is a folder of WORKBank-format CSVs (see :mod:`evalhouse.analytics.items.welfare`):
    the items then get w^auto, w^aug, their quadrant and the weights v* of Eq. 1 (``optimal`` sets
    r, the sweep and Sigma; ``framing`` which welfare score is w), and the summary the welfare
    landscape.
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
