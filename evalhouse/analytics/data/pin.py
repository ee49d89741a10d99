"""What an analysis is pinned to: a snapshot id, a warehouse state id, or a file's sha256.

Every recorded analysis says what it saw. A snapshot carries its id; a live warehouse has none,
so :func:`pin_of` falls back to :func:`evalhouse.warehouse.state.state_id` (a content hash of
every table); a CSV given on the command line is pinned by the sha256 of its bytes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb

from evalhouse.warehouse.state import state_id

FILE_PREFIX = "file-sha256:"


def snapshot_id_of(con: duckdb.DuckDBPyConnection) -> str | None:
    """The snapshot id when ``con`` is an opened snapshot, else None (a live warehouse)."""
    try:
        rows = con.execute("SELECT snapshot_id FROM snapshot_meta").fetchall()
    except duckdb.CatalogException:
        return None
    return rows[0][0] if rows else None


def pin_of(con: duckdb.DuckDBPyConnection) -> str:
    """The snapshot id of a snapshot, else the content hash of the live warehouse's state."""
    return snapshot_id_of(con) or state_id(con)


def file_pin(path: str | Path) -> str:
    """``file-sha256:<hex>`` of a file's bytes (what a run on a CSV is pinned to)."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return FILE_PREFIX + h.hexdigest()
