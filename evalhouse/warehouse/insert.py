"""Bulk inserts through Arrow: one statement per table per load, never one per row."""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa


def insert_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: list[dict[str, Any]],
    *,
    or_ignore: bool = False,
) -> None:
    """Insert ``rows`` into ``table`` in one statement; a key missing from a row is NULL there."""
    if not rows:
        return
    columns = list(rows[0])
    if all(list(row) == columns for row in rows):  # the usual case: one row builder, one key order
        data = pa.Table.from_arrays(
            [pa.array(list(col)) for col in zip(*(tuple(r.values()) for r in rows), strict=True)], names=columns
        )
    else:
        columns = list(dict.fromkeys(k for row in rows for k in row))
        data = pa.Table.from_pylist([{k: row.get(k) for k in columns} for row in rows])
    con.register("_load_rows", data)
    try:
        verb = "INSERT OR IGNORE INTO" if or_ignore else "INSERT INTO"
        cols = ", ".join(columns)
        con.execute(f"{verb} {table} ({cols}) SELECT {cols} FROM _load_rows")
    finally:
        con.unregister("_load_rows")
