"""The analyses' figures for the explorer: the report's sections, run on the site's snapshot.

The same sections as ``evalhouse report`` (factor structure, equating, item-level audit where its
data is present), so a figure in the report is the figure on the site.
"""

from __future__ import annotations

from typing import Any

import duckdb

from evalhouse.analytics.report import sections


def analysis_sections(con: duckdb.DuckDBPyConnection) -> list[Any]:
    """Every report section fitted on ``con`` (a snapshot: nothing is recorded anywhere)."""
    return [make(con, None) for make in sections()]
