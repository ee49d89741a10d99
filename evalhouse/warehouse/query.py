"""Running one user query on a warehouse or snapshot connection and returning its rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from evalhouse.errors import InputError


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def run_query(con: duckdb.DuckDBPyConnection, sql: str) -> QueryResult:
    """The columns and rows of ``sql``; an empty statement or a DuckDB error is an :class:`InputError`."""
    if not sql.strip():
        raise InputError("the query is empty")
    con.execute("SET enable_progress_bar = false")  # it would print into the rows
    try:
        cur = con.execute(sql)
        columns = [d[0] for d in cur.description or []]
        rows = cur.fetchall() if cur.description else []
    except duckdb.Error as exc:
        raise InputError(f"query failed: {exc}") from exc
    return QueryResult(columns, rows)
