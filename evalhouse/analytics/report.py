"""The HTML report: sections from each analysis family, figures embedded, one file.

A section is a function ``(con, writable) -> ReportSection``; it fits what it needs (recording
each fit in ``analysis_run`` when ``writable`` is a warehouse) and returns HTML with its figures.
A section whose data is not present returns a short explanation instead of failing the report.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import matplotlib

matplotlib.use("Agg")  # no display: figures only go into the page
from matplotlib.figure import Figure

from evalhouse import __version__


@dataclass
class ReportSection:
    title: str
    status: str  # "ok", or why the section is empty
    intro: str = ""
    blocks: list[str] = field(default_factory=list)  # HTML fragments, in order

    def figure(self, fig: Figure, caption: str) -> None:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        data = base64.b64encode(buf.getvalue()).decode()
        self.blocks.append(
            f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )

    def table(self, rows: list[dict[str, Any]], caption: str) -> None:
        if not rows:
            return
        head = "".join(f"<th>{html.escape(str(k))}</th>" for k in rows[0])
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row.values()) + "</tr>" for row in rows
        )
        self.blocks.append(f"<table><caption>{html.escape(caption)}</caption><tr>{head}</tr>{body}</table>")


Section = Callable[[duckdb.DuckDBPyConnection, Any], ReportSection]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else str(value)


def sections() -> list[Section]:
    from evalhouse.analytics.report_equate import section as equate_section
    from evalhouse.analytics.report_factor import section as factor_section

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
