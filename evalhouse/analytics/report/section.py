"""One section of the HTML report: a title, a status, HTML blocks and embedded figures."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb
from matplotlib.figure import Figure

from evalhouse.analytics.base import AnalysisRecord


@dataclass
class ReportSection:
    title: str
    status: str  # "ok", or why the section is empty
    intro: str = ""
    blocks: list[str] = field(default_factory=list)  # HTML fragments, in order
    # the fits behind the section, recorded by evalhouse.analytics.runs.report:
    # (record, result rows, what else to write in the same transaction or None)
    records: list[tuple[AnalysisRecord, dict[str, Any], Callable[[Any], None] | None]] = field(default_factory=list)
    key: str = ""  # the section's name in the report (``page.sections``), under which it is recorded
    # a section read back as it was recorded (nothing fitted): the analysis runs behind it
    reused_from: list[str] | None = None

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


Section = Callable[[duckdb.DuckDBPyConnection], ReportSection]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else str(value)
