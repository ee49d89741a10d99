"""Memory budgets: DuckDB's limit while a load or a whole-warehouse step runs, restored after.

DuckDB may grow to 80% of RAM unless told otherwise. A load held a whole collection's uncommitted
rows in memory (1.6 GB for a collection of 250,000 scores), and the conflict decisions' window
operators over every current score took about 1.2 GB at 10^6 scores. Within a budget DuckDB spills
to ``<db>.tmp`` instead of growing:

* :func:`loading_within` (a load): the limit is what the indexes hold plus a budget, set again
  between batches — an index grows with every key a load adds and cannot be spilled, while the
  transaction's new rows, overflow strings and cached pages can. DuckDB writes a transaction's
  new rows to the file once 32 MB of them are buffered (``write_buffer_row_group_memory_limit``,
  by default a fifth of the memory limit per thread), and the commit runs within the limit plus
  :data:`COMMIT_BUDGET_BYTES`: unbounded, a commit at 10^6 scores took 0.6 GB more than the load.
  A commit that runs out of memory invalidates the database; :class:`~evalhouse.warehouse.db.Warehouse`
  then reopens it as it was before the transaction, and the load may run again without a budget;
* :func:`spilling_beyond` (a whole-warehouse step): what DuckDB holds when the step starts plus a
  budget.

A lower limit the user chose (``$EVALHOUSE_MEMORY_LIMIT``) is never raised, and afterwards the
configured limit (that one, or DuckDB's default) is set again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

import duckdb

from evalhouse.config import ENV_LOAD_BUDGET, duckdb_config
from evalhouse.errors import InputError

#: What a whole-warehouse step may take beyond what DuckDB holds when it starts.
STEP_BUDGET_BYTES = 384 * 2**20
#: What one load (a collection, a source's run) may take beyond what its indexes hold: its
#: uncommitted rows spill past it, so memory no longer grows with the collection.
LOAD_BUDGET_BYTES = 256 * 2**20
#: What a load's commit (DuckDB's checkpoint of the new rows) may take beyond what the load had.
COMMIT_BUDGET_BYTES = 96 * 2**20
#: How much of a load's new rows DuckDB buffers before writing them to the file.
WRITE_BUFFER = "32MB"
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


def load_budget() -> int | None:
    """The budget of every load: ``$EVALHOUSE_LOAD_BUDGET`` (``512MB``, ``1GiB``; ``off``: none, DuckDB
    holds a load's uncommitted rows in memory up to its limit), else :data:`LOAD_BUDGET_BYTES`."""
    text = os.environ.get(ENV_LOAD_BUDGET, "").strip()
    if not text:
        return LOAD_BUDGET_BYTES
    if text.lower() == "off":
        return None
    try:
        return size_in_bytes(text)
    except ValueError:
        raise InputError(f"${ENV_LOAD_BUDGET}={text!r} is not a memory size such as 512MB, nor 'off'") from None


def memory_in_use(con: duckdb.DuckDBPyConnection, *, tag: str | None = None) -> int:
    """Bytes DuckDB holds now (buffer pool: tables, indexes, cached pages), or those of one
    ``duckdb_memory()`` tag (``ART_INDEX``: the indexes)."""
    where = "" if tag is None else " WHERE tag = ?"
    sql = f"SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory(){where}"
    return int(con.execute(sql, [] if tag is None else [tag]).fetchone()[0])


def _limit(con: duckdb.DuckDBPyConnection) -> int:
    return size_in_bytes(con.execute("SELECT current_setting('memory_limit')").fetchone()[0])


def _set(con: duckdb.DuckDBPyConnection, wanted: int, ceiling: int) -> int:
    limit = min(max(wanted, FLOOR_BYTES), ceiling)
    con.execute(f"SET memory_limit = '{limit}B'")
    return limit


def _restore(con: duckdb.DuckDBPyConnection, *, write_buffer: bool = False) -> None:
    chosen = duckdb_config().get("memory_limit")
    try:
        if chosen:
            con.execute(f"SET memory_limit = '{chosen}'")
        else:
            con.execute("RESET memory_limit")
        if write_buffer:
            con.execute("RESET write_buffer_row_group_memory_limit")
    except duckdb.ConnectionException:
        # a failed commit invalidated the database and the warehouse opened a new connection,
        # which starts with the configured settings: there is nothing left to restore here
        return


@dataclass
class Budget:
    """DuckDB's limit while a budget holds: :meth:`keep` sets it again from what DuckDB holds now,
    :meth:`for_commit` widens it for a load's commit, :meth:`lift` gives back the configured limit.
    A commit that runs out of memory leaves the database invalidated until it is reopened (the
    warehouse does so), where a statement that does only fails."""

    con: duckdb.DuckDBPyConnection
    budget: int
    ceiling: int
    tag: str | None = None  # count only this duckdb_memory() tag as held (ART_INDEX: the indexes)
    limit: int = 0
    write_buffer: bool = False  # a load: its new rows are written to the file past WRITE_BUFFER

    def keep(self) -> int:
        self.limit = _set(self.con, memory_in_use(self.con, tag=self.tag) + self.budget, self.ceiling)
        return self.limit

    def for_commit(self) -> int:
        """The limit for the commit: the load's, plus :data:`COMMIT_BUDGET_BYTES`."""
        self.limit = _set(self.con, self.limit + COMMIT_BUDGET_BYTES, self.ceiling)
        return self.limit

    def lift(self) -> None:
        _restore(self.con, write_buffer=self.write_buffer)


@contextmanager
def _holding(budget: Budget) -> Iterator[Budget]:
    if budget.write_buffer:
        budget.con.execute(f"SET write_buffer_row_group_memory_limit = '{WRITE_BUFFER}'")
    budget.keep()
    try:
        yield budget
    finally:
        budget.lift()


def loading_within(con: duckdb.DuckDBPyConnection, budget: int = LOAD_BUDGET_BYTES) -> AbstractContextManager[Budget]:
    """DuckDB limited to what its indexes hold plus ``budget`` bytes: call :meth:`Budget.keep`
    between batches (the indexes grow with every key; the new rows are written to the file or
    spill) and :meth:`Budget.for_commit` before the commit. Enter it outside a transaction: the
    configured limit comes back even when the block failed."""
    return _holding(Budget(con, budget, _limit(con), tag="ART_INDEX", write_buffer=True))


def spilling_beyond(con: duckdb.DuckDBPyConnection, budget: int = STEP_BUDGET_BYTES) -> AbstractContextManager[Budget]:
    """DuckDB limited to what it holds now plus ``budget`` bytes while the block runs (lift it
    before the block's commit). Enter it outside a transaction: the configured limit comes back
    even when the block failed (a limit another statement set meanwhile is not kept)."""
    return _holding(Budget(con, budget, _limit(con)))
