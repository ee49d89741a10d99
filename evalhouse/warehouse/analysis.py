"""Storing analyses: one ``analysis_run`` row per fit plus its result rows.

An estimator's ``record_`` (:class:`evalhouse.schema.analysis.AnalysisRecord`) says what was
fitted on what: class, parameters, input hash, snapshot id. The result tables
(``analysis_quantity``, ``analysis_theta``, ``analysis_curve``, ``analysis_loading``,
``analysis_factor_grid``) hold its numbers keyed by the run's id, so a figure in a report can be
traced to the exact fit and snapshot that produced it.

A report section is recorded as it was drawn (``analysis_section``: its HTML and figures, the ids
of the fits behind it), keyed by the pin of its input, so the report and the explorer of the same
snapshot show it again without fitting (:func:`recorded_sections`).
"""

from __future__ import annotations

import json
import math
from typing import Any

import duckdb
import pandas as pd

from evalhouse.common.resources import read_sql
from evalhouse.schema.analysis import AnalysisRecord
from evalhouse.warehouse.insert import insert_rows

RESULT_TABLES = (
    "analysis_quantity",
    "analysis_theta",
    "analysis_curve",
    "analysis_loading",
    "analysis_factor_grid",
    "analysis_eci",
    "analysis_eci_benchmark",
)


def record_analysis(
    con: duckdb.DuckDBPyConnection, record: AnalysisRecord, **results: pd.DataFrame | list[dict[str, Any]]
) -> str:
    """Insert the run and its result rows (``table_suffix=frame``, e.g. ``theta=df``); returns its id.

    A rerun of the same estimator with the same parameters on the same input and snapshot has the
    same id: its previous rows are replaced rather than duplicated.
    """
    analysis_id = record.run_id
    for table in ("analysis_run", *RESULT_TABLES):
        con.execute(f"DELETE FROM {table} WHERE analysis_id = ?", [analysis_id])
    insert_rows(
        con,
        "analysis_run",
        [
            {
                "analysis_id": analysis_id,
                "kind": record.kind,
                "estimator": record.estimator,
                "snapshot_id": record.snapshot_id,
                "input_sha256": record.input_sha256,
                "params": json.dumps(record.params, sort_keys=True, default=str),
                "record": record.model_dump_json(),
            }
        ],
    )
    for name, rows in results.items():
        table = f"analysis_{name}"
        if table not in RESULT_TABLES:
            raise ValueError(f"unknown result table {table!r}; choose from {RESULT_TABLES}")
        records = rows.to_dict("records") if isinstance(rows, pd.DataFrame) else rows
        insert_rows(con, table, [{"analysis_id": analysis_id, **_plain(r)} for r in records])
    return analysis_id


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """NaN -> None and numpy scalars -> Python, so Arrow types the columns cleanly."""
    return {key: _scalar(value) for key, value in row.items()}


def _scalar(value: Any) -> Any:
    plain = value.item() if hasattr(value, "item") else value
    return None if isinstance(plain, float) and math.isnan(plain) else plain


def record_section(  # noqa: PLR0913 - the columns of one row
    con: duckdb.DuckDBPyConnection,
    *,
    pin: str,
    section: str,
    options_key: str,
    evalhouse_version: str,
    title: str,
    status: str,
    intro: str,
    blocks: list[str],
    analysis_ids: list[str],
) -> None:
    """Store one report section as drawn, citing the analysis runs behind it (recorded first)."""
    con.execute(
        read_sql("evalhouse.warehouse", "analysis_section_record.sql"),
        {
            "pin": pin,
            "section": section,
            "options_key": options_key,
            "evalhouse_version": evalhouse_version,
            "title": title,
            "status": status,
            "intro": intro,
            "blocks": json.dumps(blocks),
            "analysis_ids": json.dumps(analysis_ids),
        },
    )


def recorded_sections(
    con: duckdb.DuckDBPyConnection, *, pin: str, options_key: str, evalhouse_version: str
) -> dict[str, dict[str, Any]]:
    """The sections recorded for ``pin`` by ``evalhouse_version`` whose fits are all still recorded,
    by section key (``{"title", "status", "intro", "blocks", "analysis_ids"}``); ``{}`` when the
    warehouse predates the table."""
    try:
        cursor = con.execute(
            read_sql("evalhouse.warehouse", "analysis_sections_recorded.sql"),
            {"pin": pin, "options_key": options_key, "evalhouse_version": evalhouse_version},
        )
    except duckdb.CatalogException:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for section, title, status, intro, blocks, ids in cursor.fetchall():
        out[section] = {
            "title": title,
            "status": status,
            "intro": intro,
            "blocks": json.loads(blocks),
            "analysis_ids": json.loads(ids),
        }
    return out
