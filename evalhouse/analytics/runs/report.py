"""The HTML report as a run: every section fitted on the read-only input, every fit recorded at the end.

A section already recorded for the same input (its pin: a snapshot id or a warehouse-state id)
with the same options by this version of evalhouse, whose fits are all still recorded, is read
back as it was drawn instead of being fitted again (:func:`recorded`); the explorer site reuses
them the same way. Only sections that fitted something are recorded: one that only says its data
is missing costs nothing to draw again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from evalhouse.analytics.data.pin import pin_of
from evalhouse.analytics.report.page import write_report
from evalhouse.analytics.report.section import ReportSection
from evalhouse.analytics.runs.common import Outcome, named_errors, reading
from evalhouse.version import __version__
from evalhouse.warehouse.analysis import record_analysis, record_section, recorded_sections
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
    options = options_key(welfare)
    with reading(db, snapshot) as con:
        pin = pin_of(con)
        summary, sections = write_report(con, output, welfare=welfare, recorded=recorded(record_into, pin, options))
    fits = [entry for s in sections for entry in s.records]
    ids = record(record_into, pin, options, sections) if record_into is not None else []
    reused = [i for s in sections for i in s.reused_from or []]
    summary["analysis_ids"] = (ids or [rec.run_id for rec, _, _ in fits]) + reused
    summary["fitted"] = [s.key for s in sections if s.reused_from is None and s.records]
    summary["reused"] = [s.key for s in sections if s.reused_from is not None]
    first = (ids + reused)[:1]
    where = str(record_into) if record_into is not None and first else None
    return Outcome(summary, analysis_id=first[0] if first else None, recorded_in=where)


def options_key(welfare: Path | None) -> str:
    """What a section read besides its input, as part of its recorded key: '' for nothing, else a
    sha256 over the welfare folder's file names and bytes."""
    if welfare is None:
        return ""
    digest = hashlib.sha256()
    root = Path(welfare)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return "welfare:" + digest.hexdigest()


def recorded(warehouse: Path | None, pin: str, options: str = "") -> dict[str, ReportSection]:
    """The sections recorded in ``warehouse`` for the input ``pin`` (by key), ready to show again;
    ``{}`` when there is no warehouse there."""
    if warehouse is None or not Path(warehouse).exists():
        return {}
    with named_errors(), Warehouse.open(warehouse, read_only=True) as wh:
        rows = recorded_sections(wh.con, pin=pin, options_key=options, evalhouse_version=__version__)
    return {
        key: ReportSection(
            title=row["title"],
            status=row["status"],
            intro=row["intro"],
            blocks=row["blocks"],
            key=key,
            reused_from=row["analysis_ids"],
        )
        for key, row in rows.items()
    }


def record(warehouse: Path, pin: str, options: str, sections: list[ReportSection]) -> list[str]:
    """Record the fits of every section fitted now (not read back) and each such section as drawn,
    in one transaction; returns the analysis ids recorded."""
    fresh = [s for s in sections if s.reused_from is None and s.records]
    ids: list[str] = []
    if not fresh:
        return ids
    with named_errors(), Warehouse.open(warehouse) as wh, wh.transaction() as wcon:
        for s in fresh:
            mine = []
            for rec, results, also in s.records:
                if also is not None:
                    also(wcon)
                mine.append(record_analysis(wcon, rec, **results))
            record_section(
                wcon,
                pin=pin,
                section=s.key,
                options_key=options,
                evalhouse_version=__version__,
                title=s.title,
                status=s.status,
                intro=s.intro,
                blocks=s.blocks,
                analysis_ids=mine,
            )
            ids.extend(mine)
    return ids
