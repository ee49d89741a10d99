"""Factor analyses as runs: ``analyze efa``, ``analyze factor-grid``, ``reproduce paper-000``.

The rules for input, pin and recording are in :mod:`evalhouse.analytics.runs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalhouse.analytics.base import Timer, make_record
from evalhouse.analytics.data.aa import AA_SOURCE, aa_frames
from evalhouse.analytics.data.matrices import (
    items_and_composites,
    model_meta,
    source_long,
    warehouse_long,
    wide_matrix,
)
from evalhouse.analytics.data.pin import file_pin
from evalhouse.analytics.factor.grid import DEFAULT_DENSIFIERS, DEFAULT_IMPUTERS, factor_grid_rows, grid_cells, run_grid
from evalhouse.analytics.factor.learners import LEARNERS
from evalhouse.analytics.factor.summary import (
    EFA_ROTATIONS,
    check_efa_input,
    efa_results,
    efa_summary,
    read_matrix_csv,
)
from evalhouse.analytics.matrix.collapse import COLLAPSES, collapse_keys, collapsed_matrix
from evalhouse.analytics.reproduce.paper000_results import paper000_payload, paper000_results, run_paper000
from evalhouse.analytics.runs.common import Outcome, pinned, reading, record, source_input
from evalhouse.errors import InputError

EPOCH_SOURCE = "epoch-benchmarks"
GRID_LEVELS = ("configuration", "base_model", *COLLAPSES)
ALL_SOURCES = "all"
GRID_AGGREGATES = ("mean", "max")


def efa(input_path: Path, *, db: Path | None, **options: Any) -> Outcome:
    """One EFA (+ Schmid-Leiman) of a models x benchmarks CSV, pinned to the file's sha256.

    ``options``: ``n_factors`` (None: parallel analysis), ``method`` (minres, ml), ``rotation``
    (oblimin, promax, none), ``n_simulations``, ``random_state``.
    """
    n_factors = options.get("n_factors")
    method = options.get("method", "minres")
    rotation = options.get("rotation", "oblimin")
    n_simulations = int(options.get("n_simulations", 2000))
    random_state = int(options.get("random_state", 0))
    timer = Timer()
    if rotation not in EFA_ROTATIONS:
        raise InputError(f"rotation must be one of {EFA_ROTATIONS}, got {rotation!r}")
    frame = read_matrix_csv(input_path)
    complete = check_efa_input(frame, method=method, n_factors=n_factors)
    summary = efa_summary(
        complete,
        n_factors=n_factors,
        method=method,
        rotation=rotation,
        n_simulations=n_simulations,
        random_state=random_state,
    )
    summary["n_rows_dropped"] = len(frame) - len(complete)
    params = {"n_factors": n_factors, "method": method, "rotation": rotation}
    params |= {"n_simulations": n_simulations, "random_state": random_state}
    keys = ("n_models", "n_factors", "n_factors_parallel", "s1", "omega_h", "start", "converged", "heywood")
    rec = make_record(
        kind="efa",
        estimator="evalhouse.analytics.factor.summary.efa_summary",
        params=params,
        inputs=[frame],
        timer=timer,
        snapshot_id=file_pin(input_path),
        diagnostics={k: summary[k] for k in keys},
    )
    analysis_id, where = record(db, rec, efa_results(summary))
    payload = {**summary, "input": str(input_path), "input_sha256": rec.input_sha256, "pin": rec.snapshot_id}
    return Outcome(payload, analysis_id=analysis_id, recorded_in=where)


def factor_grid(*, db: Path, snapshot: Path | None = None, record_into: Path | None = None, **settings: Any) -> Outcome:
    """Paper 002's densifier x imputer x factor-analysis grid on one source's matrix, or every source's.

    ``settings``: ``source`` (a source key, or ``all``: whatever the warehouse holds), ``level``
    (configuration, base_model, or paper 002's name collapses std and aggr), ``aggregate`` (mean,
    max; base_model level), ``densifiers``, ``imputers`` and the grid's own settings
    (:func:`~evalhouse.analytics.factor.grid.run_grid`).
    """
    source = settings.pop("source", EPOCH_SOURCE)
    level = settings.pop("level", "configuration")
    aggregate = settings.pop("aggregate", "mean")
    densifiers = settings.pop("densifiers", None)
    imputers = settings.pop("imputers", None)
    if level not in GRID_LEVELS or aggregate not in GRID_AGGREGATES:
        raise InputError(f"--level must be one of {GRID_LEVELS} and --aggregate one of {GRID_AGGREGATES}")
    with reading(db, snapshot) as con:
        long = warehouse_long(con) if source == ALL_SOURCES else source_long(con, source)
        if level in COLLAPSES:
            meta = model_meta(con)
            meta = meta[~meta.index.duplicated()].rename(columns={"family_id": "family_name"})
            keys = collapse_keys(meta.reindex(sorted(set(long["config_id"]))), level)
            wide, _ = items_and_composites(collapsed_matrix(long, keys), long)
        else:
            wide, _ = items_and_composites(wide_matrix(long, level, aggregate), long)
    wide = wide.dropna(how="all")
    dataset = f"{source}:{level}" + (f":{aggregate}" if level == "base_model" else "")
    if wide.empty:
        raise InputError(f"{dataset}: no cells to factor")
    table, rec = run_grid(
        wide,
        dataset=dataset,
        densifiers=densifiers or DEFAULT_DENSIFIERS,
        imputers=imputers or DEFAULT_IMPUTERS,
        **settings,
    )
    gate = rec.params["gate"]
    analysis_id, where = record(record_into, rec, {"factor_grid": grid_cells(table, dataset=dataset, gate=gate)})
    payload = {
        "dataset": dataset,
        "snapshot_id": rec.snapshot_id,
        "input_sha256": rec.input_sha256,
        "params": rec.params,
        "matrix": {
            "n_models": int(wide.shape[0]),
            "n_benchmarks": int(wide.shape[1]),
            "density": float(wide.notna().to_numpy().mean()),
            "benchmarks": [str(c) for c in wide.columns],
        },
        "duration_s": rec.duration_s,
        "diagnostics": rec.diagnostics,
        "cells": factor_grid_rows(table, gate=gate),
    }
    return Outcome(payload, analysis_id=analysis_id, recorded_in=where)


def reproduce_paper000(
    *,
    db: Path,
    input_path: Path | None = None,
    snapshot: Path | None = None,
    record_into: Path | None = None,
    **options: Any,
) -> Outcome:
    """Paper 000's headline numbers from the AA snapshot.

    Input: a CSV ingested through the real parser into a scratch warehouse, a snapshot, or the warehouse.

    ``options``: ``learners`` (must include ridge), ``n_jobs``.
    """
    learners = tuple(options.get("learners", ("ridge",)))
    n_jobs = options.get("n_jobs")
    unknown = [x for x in learners if x not in LEARNERS]
    if unknown or "ridge" not in learners:
        raise InputError(f"--learners must include ridge and come from {list(LEARNERS)}; got {list(learners)}")
    with source_input(db, source_key=AA_SOURCE, input_path=input_path, snapshot=snapshot) as (con, pin):
        wide, meta = aa_frames(con)
    pin = pin or wide.attrs.get("snapshot_id")
    result, rec = run_paper000(wide, meta, learners=learners, n_jobs=n_jobs)
    rec = pinned(rec, pin)
    analysis_id, where = record(record_into, rec, paper000_results(result))
    payload = paper000_payload(result) | {
        "snapshot_id": rec.snapshot_id,
        "input_sha256": rec.input_sha256,
        "params": rec.params,
        "duration_s": rec.duration_s,
        "kept_fit": rec.diagnostics.get("kept_fit"),  # read back: the same rows, settings and code were fitted before
        "input": str(input_path) if input_path else None,
    }
    return Outcome(payload, ok=payload["reproduced"], analysis_id=analysis_id, recorded_in=where)
