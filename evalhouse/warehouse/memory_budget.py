"""A memory budget for steps that read the whole warehouse (the conflict decisions after an import).

DuckDB may grow to 80% of RAM unless told otherwise, and its window operators over every current
score keep what they can in memory: at 10^6 scores the conflict decisions alone took about 1.2 GB.
Inside :func:`spilling_beyond` DuckDB's limit is what it holds already plus a budget, so such a
step spills to ``<db>.tmp`` instead of growing; a lower limit the user chose
(``$EVALHOUSE_MEMORY_LIMIT``) is never raised, and afterwards the configured limit (that one, or
DuckDB's default) is set again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from evalhouse.config import duckdb_config

#: What a whole-warehouse step may take beyond what DuckDB holds when it starts.
STEP_BUDGET_BYTES = 384 * 2**20
#: The least limit ever set: at (near) zero DuckDB cannot even run the statement that lifts it again.
FLOOR_BYTES = 8 * 2**20
_UNITS = {
    "bytes": 1,
    "b": 1,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}


def size_in_bytes(text: str) -> int:
    """``'18.8 GiB'`` (DuckDB's rendering of a memory setting) -> bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = (match.group(2) or "bytes").lower() if match else ""
    if match is None or unit not in _UNITS:
        raise ValueError(f"not a memory size: {text!r}")
    return int(float(match.group(1)) * _UNITS[unit])


def memory_in_use(con: duckdb.DuckDBPyConnection) -> int:
    """Bytes DuckDB holds now (buffer pool: tables, indexes, cached pages)."""
    return int(con.execute("SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()").fetchone()[0])


@contextmanager
def spilling_beyond(con: duckdb.DuckDBPyConnection, budget: int = STEP_BUDGET_BYTES) -> Iterator[int]:
    """DuckDB limited to what it holds now plus ``budget`` bytes while the block runs (yields the
    limit set). Call it outside a transaction: the configured limit comes back even when the block
    failed (a limit another statement set meanwhile is not kept)."""
    before = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    limit = min(max(memory_in_use(con) + budget, FLOOR_BYTES), size_in_bytes(before))
    con.execute(f"SET memory_limit = '{limit}B'")
    try:
        yield limit
    finally:
        chosen = duckdb_config().get("memory_limit")
        if chosen:
            con.execute(f"SET memory_limit = '{chosen}'")
        else:
            con.execute("RESET memory_limit")
