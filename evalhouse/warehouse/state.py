"""A content hash of the live warehouse, so an analysis run without a snapshot is still pinned.

``state_id`` hashes, per table, the row count and an order-independent digest of every row
(DuckDB's ``hash`` of the row, combined with ``bit_xor`` and ``sum``). Two warehouses with the
same rows in every table get the same id; any insert, delete or update changes it. It is cheaper
than a snapshot (nothing is written) but, unlike a snapshot id, it can only be checked against a
warehouse, not re-opened: freeze with ``evalhouse snapshot create`` to share what an analysis saw.
The digest depends on DuckDB's hash function, so ids are comparable within one DuckDB version.
"""

from __future__ import annotations

import hashlib

import duckdb

from evalhouse.common.resources import read_sql

PREFIX = "warehouse-state:"
#: Tables that hold results *about* the state, not the state itself (analyses write embeddings and the
#: texts they embedded; recording a run must not change the pin of the next one).
SKIPPED_PREFIXES = ("analysis_", "_")
SKIPPED_TABLES = frozenset({"snapshot", "validation_result", "embedding", "benchmark_text"})


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def state_id(con: duckdb.DuckDBPyConnection) -> str:
    """``warehouse-state:<24 hex>`` over every content table of the open warehouse."""
    tables = [
        name
        for (name,) in con.execute(read_sql("evalhouse.warehouse", "state_tables.sql")).fetchall()
        if not name.startswith(SKIPPED_PREFIXES) and name not in SKIPPED_TABLES
    ]
    return PREFIX + tables_digest(con, tables)[:24]


def tables_digest(con: duckdb.DuckDBPyConnection, tables: list[str]) -> str:
    """sha256 (hex) over ``tables`` in the order given: each one's name, row count and row digests."""
    digest = hashlib.sha256()
    for name in tables:
        q = _quote(name)
        count, xor, total = con.execute(
            f"SELECT count(*), coalesce(bit_xor(hash(t)), 0), coalesce(sum(hash(t)::HUGEINT) % 18446744073709551616, 0)"
            f" FROM {q} AS t"
        ).fetchall()[0]  # fetched whole: a half-read result would block the connection's next query
        digest.update(f"{name}\t{count}\t{xor}\t{total}\n".encode())
    return digest.hexdigest()
