"""The analyses' figures for the explorer: the report's sections, run on the site's snapshot.

The same sections as ``evalhouse report`` (factor structure, equating, item audit when the
snapshot holds item responses), so a figure in the
report is the figure on the site. Nothing is recorded: the site only shows.
"""

from __future__ import annotations

from typing import Any

import duckdb

from evalhouse.analytics.report.page import sections


def analysis_sections(con: duckdb.DuckDBPyConnection) -> list[Any]:
    """Every report section fitted on ``con`` (a snapshot)."""
    return [make(con) for make in sections()]
