"""The one guard for a person's SQL: read-only, one SELECT, no files outside the warehouse.

``evalhouse sql`` (live warehouse or snapshot) and ``evalhouse snapshot open --sql`` both run a
query through :func:`run_guarded`; nothing else executes user SQL. Three layers, each enough on
its own for what it covers:

1. **The connection is read-only**: the live warehouse is opened with DuckDB ``read_only=True``
   (:meth:`Warehouse.open`), a snapshot is a read-only catalog over its Parquet files.
2. **One statement, and it must be a query**: :func:`check` parses the text with DuckDB's own
   parser (``extract_statements``) and refuses anything whose statement type is not ``SELECT``
   (``DESCRIBE``, ``SHOW``, ``SUMMARIZE``, ``FROM t``, ``VALUES``, ``WITH … SELECT`` are SELECTs):
   INSERT/UPDATE/DELETE/CREATE/DROP/ALTER, COPY, EXPORT DATABASE, ATTACH/DETACH,
   INSTALL/LOAD, SET/RESET, PRAGMA, CALL, PREPARE/EXECUTE, transactions, VACUUM, CHECKPOINT.
   Empty or comment-only text is an input error, and so is more than one statement.
3. **No file system outside the allowed folders**: :func:`lock_down` sets
   ``allowed_directories`` / ``allowed_paths`` (the snapshot folder; the warehouse file and its
   raw store), then ``enable_external_access = false``, no extension auto-install/-load, and
   ``lock_configuration = true``, so ``read_csv('/etc/passwd')``, ``glob('/*')``,
   ``FROM '/home/x.parquet'``, ``read_text``, ``read_blob`` and URLs fail inside DuckDB with a
   permission error (reported as :class:`QueryRefused`), and no later statement can undo it.

Rows are fetched in chunks (:data:`CHUNK_ROWS`) and stop at ``limit``: a query is never
materialised whole. A query is bounded too (:class:`QueryBounds`): DuckDB's ``memory_limit``, a
private spill folder of at most ``max_temp_directory_size``, and a statement timeout — a timer
interrupts the query (DuckDB's ``interrupt``) once it, its fetching and its output have taken
``timeout_s`` seconds, so a runaway query ends with :class:`QueryStopped` (exit 1) and its
connection closes, releasing the warehouse for a writer. The API is small on purpose:
:func:`check`, :func:`lock_down`, :func:`run_guarded`, :class:`GuardedResult` and :class:`QueryBounds`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from evalhouse.config import duckdb_config, sql_memory_limit, sql_temp_limit, sql_timeout
from evalhouse.errors import InputError, RunFailed
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.snapshot.reader import open_snapshot

CHUNK_ROWS = 2_048
ALLOWED_TYPES = frozenset({duckdb.StatementType.SELECT})


class QueryRefused(InputError):
    """A statement the guard does not run (a write, a file escape, a setting); exit 2."""


class QueryStopped(RunFailed):
    """A query stopped at one of its bounds (the timeout, the memory or spill limit); exit 1."""


@dataclass(frozen=True)
class QueryBounds:
    """What one query may take: ``timeout_s`` seconds (``None``: no timeout) and DuckDB's
    ``memory_limit`` and ``max_temp_directory_size`` (sizes as DuckDB reads them: ``2GB``)."""

    timeout_s: float | None
    memory_limit: str
    temp_limit: str

    @classmethod
    def resolve(
        cls, timeout_s: float | None = None, memory_limit: str | None = None, temp_limit: str | None = None
    ) -> QueryBounds:
        """The options given, else the environment, else the defaults (:mod:`evalhouse.config`)."""
        return cls(sql_timeout(timeout_s), sql_memory_limit(memory_limit), sql_temp_limit(temp_limit))

    def advice(self) -> str:
        timeout = f"{self.timeout_s:g} s" if self.timeout_s else "none"
        return f"timeout {timeout}, memory limit {self.memory_limit}, spill limit {self.temp_limit}"


class _Deadline:
    """A timer that interrupts the connection's query once ``seconds`` have passed."""

    def __init__(self, con: duckdb.DuckDBPyConnection, seconds: float | None) -> None:
        self.con, self.seconds = con, seconds
        self.expired = False
        self._timer: threading.Timer | None = None
        if seconds:
            self._timer = threading.Timer(seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        self.expired = True
        # the query may have ended and its connection closed in the instant the timer fired
        with suppress(duckdb.ConnectionException):
            self.con.interrupt()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def stopped(self) -> QueryStopped:
        return QueryStopped(
            f"the query was stopped after {self.seconds:g} s, its statement timeout; the warehouse is "
            "released. Give it longer with --timeout SECONDS (or $EVALHOUSE_SQL_TIMEOUT; 0 = no timeout)"
        )


def _stopped_by_memory(exc: duckdb.Error, bounds: QueryBounds | None) -> QueryStopped:
    limits = f"memory limit {bounds.memory_limit}, spill limit {bounds.temp_limit}" if bounds else "memory"
    return QueryStopped(
        f"the query needs more than its {limits} ({_first_line(exc)}); raise --memory-limit / --temp-limit "
        "(or $EVALHOUSE_SQL_MEMORY_LIMIT / $EVALHOUSE_SQL_TEMP_LIMIT), or ask for fewer rows or columns"
    )


def check(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """The one statement of ``sql`` as DuckDB parsed it; refuse everything that is not a query."""
    if not sql or not sql.strip():
        raise InputError("the query is empty: give one SELECT statement")
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise InputError(f"the query does not parse: {_first_line(exc)}") from exc
    if not statements:
        raise InputError("the query has no statement (only comments or semicolons): give one SELECT statement")
    if len(statements) > 1:
        raise QueryRefused(f"one statement at a time: the text holds {len(statements)} statements")
    kind = statements[0].type
    if kind not in ALLOWED_TYPES:
        raise QueryRefused(
            f"only read-only queries (SELECT, WITH, FROM, DESCRIBE, SHOW, SUMMARIZE) are run; "
            f"this is a {kind.name} statement"
        )
    return statements[0].query


def lock_down(
    con: duckdb.DuckDBPyConnection,
    allowed: Iterable[str | os.PathLike[str]] = (),
    bounds: QueryBounds | None = None,
    spill: str | os.PathLike[str] | None = None,
) -> None:
    """Close the connection to the file system outside ``allowed`` (folders, or single files).

    Call it after every view the connection needs exists (the snapshot's views read its Parquet
    files, which must be inside an allowed folder). Irreversible for the connection: a second
    call on a locked connection changes nothing (the first call's folders stay the only ones).
    ``bounds`` sets the memory and spill limits first, and ``spill`` the folder DuckDB spills to.
    """
    if con.execute("SELECT current_setting('lock_configuration')").fetchall()[0][0]:
        return
    if bounds is not None:
        con.execute("SET memory_limit = ?", [bounds.memory_limit])
        con.execute("SET max_temp_directory_size = ?", [bounds.temp_limit])
    if spill is not None:
        con.execute("SET temp_directory = ?", [str(spill)])
    folders, files = [], []
    for item in allowed:
        path = Path(item).resolve()
        if path.is_dir():
            folders.append(str(path) + os.sep)
        else:
            files.append(str(path))
    con.execute("SET allowed_directories = ?", [folders])
    con.execute("SET allowed_paths = ?", [files])
    for setting in ("autoinstall_known_extensions", "autoload_known_extensions", "enable_external_access"):
        con.execute(f"SET {setting} = false")
    con.execute("SET enable_progress_bar = false")  # it would print into the rows
    con.execute("SET lock_configuration = true")


@dataclass
class GuardedResult:
    """An open query result: its columns, and its rows fetched chunk by chunk up to ``limit``."""

    columns: list[str]
    types: list[str]
    limit: int | None
    _cursor: Any = field(repr=False)
    fetched: int = 0
    truncated: bool = False  # True once a row beyond ``limit`` was seen
    _deadline: _Deadline | None = field(default=None, repr=False)
    _bounds: QueryBounds | None = field(default=None, repr=False)

    def rows(self) -> Iterator[tuple[Any, ...]]:
        """The rows, at most ``limit`` (``None``: all), read :data:`CHUNK_ROWS` at a time."""
        while self.limit is None or self.fetched < self.limit:
            want = CHUNK_ROWS if self.limit is None else min(CHUNK_ROWS, self.limit - self.fetched)
            chunk = self._fetch(want)
            if not chunk:
                return
            self.fetched += len(chunk)
            yield from chunk
        self.truncated = bool(self._fetch(1))

    def close(self) -> None:
        """Stop the timeout's timer (the query is over, or abandoned)."""
        if self._deadline is not None:
            self._deadline.cancel()

    def records(self) -> Iterator[dict[str, Any]]:
        for row in self.rows():
            yield dict(zip(self.columns, row, strict=True))

    def _fetch(self, n: int) -> list[tuple[Any, ...]]:
        if self._deadline is not None and self._deadline.expired:  # it fired between two fetches
            raise self._deadline.stopped()
        try:
            return self._cursor.fetchmany(n)
        except duckdb.Error as exc:
            mapped = _query_error(exc, self._deadline, self._bounds)
            if mapped is None:
                raise
            raise mapped from exc


def _query_error(exc: duckdb.Error, deadline: _Deadline | None, bounds: QueryBounds | None) -> Exception | None:
    """What a DuckDB error of a guarded query means for the person who ran it (``None``: Ctrl-C,
    which the CLI reports as "interrupted", exit 130)."""
    if isinstance(exc, duckdb.InterruptException):
        return deadline.stopped() if deadline is not None and deadline.expired else None
    if isinstance(exc, duckdb.OutOfMemoryException):
        return _stopped_by_memory(exc, bounds)
    if isinstance(exc, duckdb.PermissionException):
        return QueryRefused(f"refused: {_first_line(exc)} (only the warehouse and snapshot are readable)")
    return InputError(f"query failed: {_first_line(exc)}")


def run_guarded(  # noqa: PLR0913 - keyword-only: where it may read, how many rows, its bounds
    con: duckdb.DuckDBPyConnection,
    sql: str,
    *,
    allowed: Iterable[str | os.PathLike[str]] = (),
    limit: int | None = None,
    bounds: QueryBounds | None = None,
    spill: str | os.PathLike[str] | None = None,
) -> GuardedResult:
    """Check ``sql``, lock the connection down to ``allowed`` and start the query.

    ``limit`` bounds the rows :meth:`GuardedResult.rows` returns (``None`` = all, still in
    chunks); ``bounds`` its time, memory and spill (``spill``: the folder it spills to). A
    refused statement or file access raises :class:`QueryRefused` (exit 2), an empty one or a
    DuckDB error :class:`InputError` (exit 2), a query stopped at a bound :class:`QueryStopped`
    (exit 1). The caller cancels the timer (:meth:`GuardedResult.close`) when done.
    """
    statement = check(con, sql)
    lock_down(con, allowed, bounds, spill)
    deadline = _Deadline(con, bounds.timeout_s if bounds is not None else None)
    try:
        cursor = con.execute(statement)
    except duckdb.Error as exc:
        deadline.cancel()
        mapped = _query_error(exc, deadline, bounds)
        if mapped is None:
            raise
        raise mapped from exc
    except BaseException:
        deadline.cancel()
        raise
    description = cursor.description or []
    columns, types = [d[0] for d in description], [str(d[1]) for d in description]
    return GuardedResult(columns, types, limit, cursor, _deadline=deadline, _bounds=bounds)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


@contextmanager
def guarded_query(  # noqa: PLR0913 - keyword-only: the target (db + raw store, or snapshot + id), a limit, bounds
    sql: str,
    *,
    db: str | os.PathLike[str] | None = None,
    raw_store: str | os.PathLike[str] | None = None,
    snapshot: str | os.PathLike[str] | None = None,
    expect_id: str | None = None,
    limit: int | None = None,
    bounds: QueryBounds | None = None,
) -> Iterator[GuardedResult]:
    """Run ``sql`` on a verified snapshot (``snapshot``) or else the live warehouse ``db``.

    The live warehouse is opened read-only (waiting for a writer's load transaction like every
    reader) with its file and raw store readable; a snapshot only its own folder. The
    connection closes when the block ends. ``expect_id`` refuses any snapshot but the one whose
    id an analysis recorded (see :func:`open_snapshot`). A statement that is not a query is refused before
    anything is opened. ``bounds`` (default: :meth:`QueryBounds.resolve`, the environment's or the
    defaults) limit its time, memory and spill; it spills to a folder of its own, removed after.
    """
    bounds = bounds if bounds is not None else QueryBounds.resolve()
    with duckdb.connect(config=duckdb_config()) as scratch:
        check(scratch, sql)
    if snapshot is not None:
        con = open_snapshot(snapshot, expect_id=expect_id)
        allowed: list[str | os.PathLike[str]] = [Path(snapshot)]
        closer = con.close
    elif db is not None:
        wh = Warehouse.open(db, read_only=True)
        con, closer = wh.con, wh.close
        allowed = [Path(db)] + ([Path(raw_store)] if raw_store is not None and Path(raw_store).is_dir() else [])
    else:
        raise InputError("give a warehouse file or a snapshot folder to query")
    spill = tempfile.mkdtemp(prefix="evalhouse-sql-spill-")
    result = None
    try:
        result = run_guarded(con, sql, allowed=allowed, limit=limit, bounds=bounds, spill=spill)
        yield result
    finally:
        if result is not None:
            result.close()
        closer()
        shutil.rmtree(spill, ignore_errors=True)
