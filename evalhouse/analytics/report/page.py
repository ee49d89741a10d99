"""The HTML report: sections from each analysis family, figures embedded, one file.

A section is a function ``con -> ReportSection``; it fits what it needs on the read-only input and
returns HTML with its figures and the records of its fits (which
:func:`evalhouse.analytics.runs.report` stores, with the section as drawn). A section whose data is
not present returns a short explanation instead of failing the report. :func:`build_sections`
takes the sections already recorded for the input and fits only the others.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import matplotlib

matplotlib.use("Agg")  # no display: figures only go into the page

from evalhouse.analytics.data.pin import pin_of
from evalhouse.analytics.items.report import section as items_section
from evalhouse.analytics.report.equate import section as equate_section
from evalhouse.analytics.report.factor import section as factor_section
from evalhouse.analytics.report.section import ReportSection, Section
from evalhouse.common import progress
from evalhouse.common.staging import write_whole
from evalhouse.version import __version__


def sections(*, welfare: Path | None = None) -> list[tuple[str, Section]]:
    """The report's sections in page order, each with its key; ``welfare`` feeds the item
    section's welfare landscape."""

    def items(con: duckdb.DuckDBPyConnection) -> ReportSection:
        # the report reads a snapshot (read-only): an audit fitted here is shown, not stored
        return items_section(con, None, welfare=welfare)

    return [("factor", factor_section), ("equate", equate_section), ("items", items)]


def build_sections(
    con: duckdb.DuckDBPyConnection,
    *,
    welfare: Path | None = None,
    recorded: Mapping[str, ReportSection] | None = None,
) -> list[ReportSection]:
    """Every section in page order: the ones in ``recorded`` (by key) as they are, the others
    fitted on ``con`` now."""
    makers = sections(welfare=welfare)
    built = []
    for key, make in progress.each(makers, "report: sections", total=len(makers), note=lambda m: m[0]):
        section = (recorded or {}).get(key) or make(con)
        section.key = key
        built.append(section)
    return built


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
figure { margin: 1.5em 0; } img { max-width: 100%; } figcaption { color: #555; font-size: .9em; }
table { border-collapse: collapse; margin: 1em 0; font-size: .9em; } caption { text-align: left; color: #555; }
td, th { border: 1px solid #ddd; padding: .25em .6em; text-align: right; } th { background: #f4f4f4; }
.status { color: #a60; } .meta { color: #666; font-size: .85em; }
"""


def write_report(
    con: duckdb.DuckDBPyConnection,
    output: Path,
    *,
    welfare: Path | None = None,
    recorded: Mapping[str, ReportSection] | None = None,
) -> tuple[dict[str, Any], list[ReportSection]]:
    """Draw every section (``recorded`` ones as they were recorded) and write one self-contained
    page; returns a summary and the sections."""
    built = build_sections(con, welfare=welfare, recorded=recorded)
    snapshot = pin_of(con)
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>evalhouse report</title>",
        f"<style>{STYLE}</style></head><body><h1>evalhouse report</h1>",
        f"<p class='meta'>generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by evalhouse {html.escape(__version__)}"
        + f"; input {html.escape(snapshot)}"
        + "</p>",
    ]
    for s in built:
        parts.append(f"<h2>{html.escape(s.title)}</h2>")
        if s.status != "ok":
            parts.append(f"<p class='status'>{html.escape(s.status)}</p>")
        if s.intro:
            parts.append(f"<p>{s.intro}</p>")
        parts.extend(s.blocks)
    parts.append("</body></html>")
    output = Path(output)
    page = "\n".join(parts)
    write_whole(output, page)  # a full disk leaves the previous report, never half a page
    summary = {
        "output": str(output),
        "bytes": len(page.encode()),
        "snapshot_id": snapshot,
        "sections": [
            {
                "title": s.title,
                "status": s.status,
                "figures": sum("<img" in b for b in s.blocks),
                "reused": s.reused_from is not None,
            }
            for s in built
        ],
    }
    return summary, built
