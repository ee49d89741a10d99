"""The HTML report: sections from each analysis family, figures embedded, one file.

A section is a function ``(con, writable) -> ReportSection``; it fits what it needs (recording
each fit in ``analysis_run`` when ``writable`` is a warehouse) and returns HTML with its figures.
A section whose data is not present returns a short explanation instead of failing the report.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import matplotlib

matplotlib.use("Agg")  # no display: figures only go into the page

from evalhouse.analytics.report_equate import section as equate_section
from evalhouse.analytics.report_factor import section as factor_section
from evalhouse.analytics.report_section import Section
from evalhouse.version import __version__


def sections() -> list[Section]:
    return [factor_section, equate_section]


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
figure { margin: 1.5em 0; } img { max-width: 100%; } figcaption { color: #555; font-size: .9em; }
table { border-collapse: collapse; margin: 1em 0; font-size: .9em; } caption { text-align: left; color: #555; }
td, th { border: 1px solid #ddd; padding: .25em .6em; text-align: right; } th { background: #f4f4f4; }
.status { color: #a60; } .meta { color: #666; font-size: .85em; }
"""


def write_report(con: duckdb.DuckDBPyConnection, output: Path, *, writable: Any) -> dict[str, Any]:
    """Run every section and write one self-contained page; returns a summary."""
    built = [make(con, writable) for make in sections()]
    snapshot = _snapshot_id(con)
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>evalhouse report</title>",
        f"<style>{STYLE}</style></head><body><h1>evalhouse report</h1>",
        f"<p class='meta'>generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by evalhouse {html.escape(__version__)}"
        + (f"; snapshot {html.escape(snapshot)}" if snapshot else "; live warehouse (no snapshot id)")
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
    output.parent.mkdir(parents=True, exist_ok=True)
    page = "\n".join(parts)
    output.write_text(page, encoding="utf-8")
    return {
        "output": str(output),
        "bytes": len(page.encode()),
        "snapshot_id": snapshot,
        "sections": [
            {"title": s.title, "status": s.status, "figures": sum("<img" in b for b in s.blocks)} for s in built
        ],
    }


def _snapshot_id(con: duckdb.DuckDBPyConnection) -> str | None:
    from evalhouse.analytics.matrices import snapshot_id_of

    return snapshot_id_of(con)
