"""Bulk inserts through Arrow: one statement per table per load, never one per row."""

from __future__ import annotations

from typing import Any

import duckdb

SMALL = 64  # up to this many rows go in as parameters


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
    verb = "INSERT OR IGNORE INTO" if or_ignore else "INSERT INTO"
    if len(rows) <= SMALL:
        # a few rows (a run's fetch rows, its decisions): plain parameters, no Arrow (whose first
        # use imports pandas, half a second a quiet night does not need to spend)
        # (one statement with every row's parameters: executemany runs one statement per row)
        columns = list(dict.fromkeys(k for row in rows for k in row))
        marks = ", ".join([f"({', '.join('?' * len(columns))})"] * len(rows))
        con.execute(
            f"{verb} {table} ({', '.join(columns)}) VALUES {marks}", [row.get(c) for row in rows for c in columns]
        )
        return
    import pyarrow as pa  # noqa: PLC0415 - Arrow (and numpy) load with the first bulk insert, not on a quiet night

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
        cols = ", ".join(columns)
        con.execute(f"{verb} {table} ({cols}) SELECT {cols} FROM _load_rows")
    finally:
        con.unregister("_load_rows")
