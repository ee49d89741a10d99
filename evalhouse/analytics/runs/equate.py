"""Equating as runs: ``analyze equate`` (a long CSV) and ``analyze equate-hub``.

The rules for input, pin and recording are in :mod:`evalhouse.analytics.runs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalhouse.analytics.data.pin import file_pin
from evalhouse.analytics.equate.curves import CharacteristicCurveEquating, curve_rows, theta_rows
from evalhouse.analytics.equate.eci_pipeline import capabilities_index
from evalhouse.analytics.equate.hub import equate_hub as fit_hub
from evalhouse.analytics.equate.io import read_long_csv
from evalhouse.analytics.runs.common import Outcome, pinned, reading, record


def equate_csv(input_path: Path, *, db: Path | None, min_observed: int = 4) -> Outcome:
    """Equate a long CSV (``model, benchmark, score``) on one ability scale, pinned to the file's sha256."""
    frame = read_long_csv(input_path)
    eq = CharacteristicCurveEquating(min_observed=min_observed).fit(frame, snapshot_id=file_pin(input_path))
    analysis_id, where = record(db, eq.record_, {"theta": theta_rows(eq), "curve": curve_rows(eq)})
    out = eq.to_dict()
    out["min_observed"] = min_observed
    out["pin"] = eq.record_.snapshot_id
    out["summary"] = {
        "n_models": len(out["models"]),
        "n_fitted": sum(m["theta"] is not None for m in out["models"]),
        "n_benchmarks": len(out["benchmarks"]),
        "n_excluded_benchmarks": len(out["excluded_benchmarks"]),
    }
    return Outcome(out, analysis_id=analysis_id, recorded_in=where)


def equate_hub(
    *,
    db: Path,
    snapshot: Path | None = None,
    record_into: Path | None = None,
    **options: Any,
) -> Outcome:
    """Every model of one hub source on one ability scale, compared with its published composite.

    ``options``: ``source`` (epoch-benchmarks), ``level``, ``aggregate``, ``min_observed``
    (:func:`~evalhouse.analytics.equate.hub.equate_hub`).
    """
    with reading(db, snapshot) as con:
        hub = fit_hub(con, **options)
    rec = pinned(hub.record, hub.wide.attrs.get("snapshot_id"))
    results = {"theta": theta_rows(hub.equating), "curve": curve_rows(hub.equating)}
    analysis_id, where = record(record_into, rec, results)
    return Outcome(hub.to_dict(), analysis_id=analysis_id, recorded_in=where)


def eci(*, db: Path, snapshot: Path | None = None, record_into: Path | None = None, **options: Any) -> Outcome:
    """A capabilities index on Epoch's scale from the hub's own cells (``analyze eci``).

    ``options``: ``n_bootstrap`` (100), ``random_state`` (0), ``compare`` (the held-out table of the
    variants, True), ``sensitivity`` (False), ``objective`` (stable), ``penalty`` (None: the
    objective's), ``source`` (epoch-benchmarks). The payload has exactly the keys ``models``,
    ``apart``, ``benchmarks``, ``heldout_rmse``, ``iterations``, ``time_slopes`` (and ``sensitivity``
    when asked); the comparison travels in ``extra``.
    """
    with reading(db, snapshot) as con:
        run = capabilities_index(con, **options)
    analysis_id, where = record(record_into, run.record, run.results)
    extra = {"comparison": run.comparison, "final_change": run.fit.final_change_, "penalty": run.fit.penalty_}
    extra["alpha_penalty"] = run.fit.alpha_penalty_
    extra["anchor_position"] = run.fit.anchor_position_
    extra |= {"dropped": run.cells.dropped, "pin": run.record.snapshot_id}
    if "kept_fit" in run.record.diagnostics:  # the same cells, settings and code were fitted before
        extra["kept_fit"] = run.record.diagnostics["kept_fit"]
    return Outcome(run.payload, analysis_id=analysis_id, recorded_in=where, extra=extra, exact=True)
