"""Bulk inserts through Arrow: one statement per table per load, never one per row."""

from __future__ import annotations

from typing import Any

import duckdb

from evalhouse.warehouse import arrow_columns

SMALL = 64  # up to this many rows go in as parameters of one statement


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
        # a few rows (a run's fetch rows, its decisions, the registries): one statement of plain
        # parameters, bound to the columns' types as one row per statement would be; no Arrow
        # (whose first use imports pandas) and not executemany (a statement per row, ~1.5 ms each)
        columns = list(dict.fromkeys(k for row in rows for k in row))
        marks = "(" + ", ".join("?" for _ in columns) + ")"
        con.execute(
            f"{verb} {table} ({', '.join(columns)}) VALUES {', '.join([marks] * len(rows))}",
            [row.get(c) for row in rows for c in columns],
        )
        return
    import pyarrow as pa  # noqa: PLC0415 - Arrow (and numpy) load with the first bulk insert, not on a quiet night

    columns = list(rows[0])
    if all(list(row) == columns for row in rows):  # the usual case: one row builder, one key order
        values = list(zip(*(tuple(r.values()) for r in rows), strict=True))
    else:
        columns = list(dict.fromkeys(k for row in rows for k in row))
        values = [[row.get(k) for row in rows] for k in columns]
    # read by its variable name in the SQL (DuckDB's replacement scan): a table registered inside
    # a transaction stays alive until the transaction ends, even after unregister
    _load_rows = pa.Table.from_arrays([arrow_columns.column(col) for col in values], names=columns)
    cols = ", ".join(columns)
    con.execute(f"{verb} {table} ({cols}) SELECT {cols} FROM _load_rows")
