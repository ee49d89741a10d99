"""The analyses' figures for the explorer: the report's sections, on the site's snapshot.

The same sections as ``evalhouse report`` (factor structure, equating, item audit when the
snapshot holds item responses), so a figure in the report is the figure on the site. A section
already recorded for the snapshot (by ``report`` or an earlier site) is shown as recorded; only the
missing ones are fitted, and recorded into the warehouse given (when there is one) for next time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from evalhouse.analytics.data.pin import pin_of
from evalhouse.analytics.report.page import build_sections
from evalhouse.analytics.runs.report import record, recorded


def analysis_sections(con: duckdb.DuckDBPyConnection, record_into: Path | None = None) -> list[Any]:
    """Every report section of ``con`` (a snapshot): read back from ``record_into`` where recorded
    for its id, else fitted now (and recorded there when that warehouse exists)."""
    pin = pin_of(con)
    built = build_sections(con, recorded=recorded(record_into, pin))
    if record_into is not None and Path(record_into).exists():
        record(Path(record_into), pin, "", built)
    return built
