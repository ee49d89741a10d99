"""The HTML report as a run: every section fitted on the read-only input, every fit recorded at the end."""

from __future__ import annotations

from pathlib import Path

from evalhouse.analytics.report.page import write_report
from evalhouse.analytics.runs.common import Outcome, named_errors, reading
from evalhouse.warehouse.analysis import record_analysis
from evalhouse.warehouse.db import Warehouse


def report(
    output: Path,
    *,
    db: Path,
    snapshot: Path | None = None,
    record_into: Path | None = None,
    welfare: Path | None = None,
) -> Outcome:
    """Write the self-contained HTML page; record the fits behind its sections into ``record_into``.

    ``welfare``: a WORKBank-format folder for the item section's welfare landscape.
    """
    with reading(db, snapshot) as con:
        summary, sections = write_report(con, output, welfare=welfare)
    fits = [entry for s in sections for entry in s.records]
    ids: list[str] = []
    if record_into is not None and fits:
        with named_errors(), Warehouse.open(record_into) as wh, wh.transaction() as wcon:
            for rec, results, also in fits:
                if also is not None:
                    also(wcon)
                ids.append(record_analysis(wcon, rec, **results))
    summary["analysis_ids"] = ids or [rec.run_id for rec, _, _ in fits]
    where = str(record_into) if record_into is not None and fits else None
    return Outcome(summary, analysis_id=ids[0] if ids else None, recorded_in=where)
