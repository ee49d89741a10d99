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
materialised whole. The API is small on purpose: :func:`check`, :func:`lock_down`,
:func:`run_guarded` and :class:`GuardedResult`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from evalhouse.errors import InputError
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.snapshot import open_snapshot

CHUNK_ROWS = 2_048
ALLOWED_TYPES = frozenset({duckdb.StatementType.SELECT})


class QueryRefused(InputError):
    """A statement the guard does not run (a write, a file escape, a setting); exit 2."""


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


def lock_down(con: duckdb.DuckDBPyConnection, allowed: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Close the connection to the file system outside ``allowed`` (folders, or single files).

    Call it after every view the connection needs exists (the snapshot's views read its Parquet
    files, which must be inside an allowed folder). Irreversible for the connection: a second
    call on a locked connection changes nothing (the first call's folders stay the only ones).
    """
    if con.execute("SELECT current_setting('lock_configuration')").fetchall()[0][0]:
        return
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

    def records(self) -> Iterator[dict[str, Any]]:
        for row in self.rows():
            yield dict(zip(self.columns, row, strict=True))

    def _fetch(self, n: int) -> list[tuple[Any, ...]]:
        try:
            return self._cursor.fetchmany(n)
        except duckdb.PermissionException as exc:
            raise QueryRefused(f"refused: {_first_line(exc)} (only the warehouse and snapshot are readable)") from exc
        except duckdb.Error as exc:
            raise InputError(f"query failed: {_first_line(exc)}") from exc


def run_guarded(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    *,
    allowed: Iterable[str | os.PathLike[str]] = (),
    limit: int | None = None,
) -> GuardedResult:
    """Check ``sql``, lock the connection down to ``allowed`` and start the query.

    ``limit`` bounds the rows :meth:`GuardedResult.rows` returns (``None`` = all, still in
    chunks). A refused statement or file access raises :class:`QueryRefused` (exit 2), an empty
    one or a DuckDB error :class:`InputError` (exit 2).
    """
    statement = check(con, sql)
    lock_down(con, allowed)
    try:
        cursor = con.execute(statement)
    except duckdb.PermissionException as exc:
        raise QueryRefused(f"refused: {_first_line(exc)} (only the warehouse and snapshot are readable)") from exc
    except duckdb.Error as exc:
        raise InputError(f"query failed: {_first_line(exc)}") from exc
    description = cursor.description or []
    return GuardedResult([d[0] for d in description], [str(d[1]) for d in description], limit, cursor)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


@contextmanager
def guarded_query(  # noqa: PLR0913 - keyword-only: the target (db + raw store, or snapshot + id) and a limit
    sql: str,
    *,
    db: str | os.PathLike[str] | None = None,
    raw_store: str | os.PathLike[str] | None = None,
    snapshot: str | os.PathLike[str] | None = None,
    expect_id: str | None = None,
    limit: int | None = None,
) -> Iterator[GuardedResult]:
    """Run ``sql`` on a verified snapshot (``snapshot``) or else the live warehouse ``db``.

    The live warehouse is opened read-only (waiting for a writer's load transaction like every
    reader) with its file and raw store readable; a snapshot only its own folder. The
    connection closes when the block ends. ``expect_id`` refuses any snapshot but the one whose
    id an analysis recorded (see :func:`open_snapshot`). A statement that is not a query is refused before
    anything is opened.
    """
    with duckdb.connect() as scratch:
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
    try:
        yield run_guarded(con, sql, allowed=allowed, limit=limit)
    finally:
        closer()
