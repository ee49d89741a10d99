"""The warehouse file: one DuckDB database, a writer lock, numbered migrations and views.

A writer takes an exclusive lock file beside the database before DuckDB opens it, and writes who
holds it into that file. DuckDB would refuse a second writer too, but with an IO error that names
neither the command nor the time; "warehouse is locked by pid 4242 since 02:17 (evalhouse
refresh)" tells the operator whether to wait or to look for a stuck job.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import IO, Any, Self

import duckdb

from evalhouse.errors import MigrationError, WarehouseError, WarehouseLocked

MIGRATION_RE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
DEPENDS_RE = re.compile(r"^--\s*depends:\s*(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def migrations() -> list[Migration]:
    """The numbered migration files shipped with the package, in order."""
    found = []
    for entry in resources.files("evalhouse.warehouse.migrations").iterdir():
        match = MIGRATION_RE.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migration files share a number: {versions}")
    return found


def views() -> list[tuple[str, str]]:
    """``(name, sql)`` for every ``views/v_*.sql``, ordered so dependencies come first."""
    sources = {
        entry.name.removesuffix(".sql"): entry.read_text(encoding="utf-8")
        for entry in resources.files("evalhouse.warehouse.views").iterdir()
        if entry.name.endswith(".sql")
    }
    deps = {}
    for name, sql in sources.items():
        match = DEPENDS_RE.search(sql)
        names = [d.strip() for d in match[1].split(",")] if match else []
        unknown = [d for d in names if d and d not in sources]
        if unknown:
            raise WarehouseError(f"view {name} depends on unknown views {unknown}")
        deps[name] = [d for d in names if d]
    ordered: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in ordered:
            return
        if name in visiting:
            raise WarehouseError(f"views depend on each other in a cycle through {name}")
        visiting.add(name)
        for dep in deps[name]:
            visit(dep)
        visiting.discard(name)
        ordered.append(name)

    for name in sorted(sources):
        visit(name)
    return [(name, sources[name]) for name in ordered]


class _WriterLock:
    """An exclusive ``flock`` on ``<db>.lock`` holding a JSON note of who has it."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the lock's life
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = _describe_holder(fh.read())
            fh.close()
            raise WarehouseLocked(f"warehouse is locked by {holder}") from None
        fh.seek(0)
        fh.truncate()
        fh.write(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "since": datetime.now(UTC).isoformat(timespec="seconds"),
                    "command": " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv)),
                }
            )
        )
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            self._fh.seek(0)
            self._fh.truncate()
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def _describe_holder(note: str) -> str:
    try:
        info = json.loads(note)
    except json.JSONDecodeError:
        return "another process (no holder recorded)"
    return f"pid {info.get('pid')} since {info.get('since')} ({info.get('command', '?')})"


class Warehouse:
    """An open warehouse. Use :meth:`open` as a context manager.

    Writers hold the lock for their whole life and migrate on open; readers open DuckDB
    read-only and never migrate (an unmigrated file is an error telling them to run a writer).
    """

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, lock: _WriterLock | None):
        self.path = path
        self.con = con
        self._lock = lock

    @property
    def read_only(self) -> bool:
        return self._lock is None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, read_only: bool = False) -> Self:
        path = Path(path)
        if read_only:
            if not path.exists():
                raise WarehouseError(f"no warehouse at {path}: run 'evalhouse migrate' or 'evalhouse refresh' first")
            try:
                con = duckdb.connect(str(path), read_only=True)
            except duckdb.IOException as exc:
                raise _locked_error(path, exc) from exc
            wh = cls(path, con, None)
            wh._check_migrated()
            return wh
        lock = _WriterLock(path)
        lock.acquire()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            con = duckdb.connect(str(path))
        except duckdb.IOException as exc:
            lock.release()
            raise _locked_error(path, exc) from exc
        wh = cls(path, con, lock)
        try:
            wh.migrate()
        except BaseException:
            wh.close()
            raise
        return wh

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One load = one transaction: on any exception the previous state stays."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    # -- migrations -------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply pending migrations (each in its own transaction), then recreate the views."""
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " sha256 TEXT NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
        )
        applied = {
            v: (n, s) for v, n, s in self.con.execute("SELECT version, name, sha256 FROM _migrations").fetchall()
        }
        shipped = migrations()
        done = []
        for m in shipped:
            if m.version in applied:
                name, sha = applied[m.version]
                if sha != m.sha256:
                    raise MigrationError(
                        f"migration {m.version:04d}_{name}.sql was edited after it was applied to "
                        f"{self.path}; never edit an applied migration, add a new one"
                    )
                continue
            with self.transaction() as con:
                con.execute(m.sql)
                con.execute(
                    "INSERT INTO _migrations (version, name, sha256) VALUES (?, ?, ?)",
                    [m.version, m.name, m.sha256],
                )
            done.append(f"{m.version:04d}_{m.name}")
        unknown = sorted(set(applied) - {m.version for m in shipped})
        if unknown:
            raise MigrationError(
                f"{self.path} has migrations {unknown} this evalhouse does not know; upgrade evalhouse"
            )
        self.create_views()
        return done

    def create_views(self) -> None:
        with self.transaction() as con:
            for _name, sql in views():
                con.execute(sql)

    def schema_version(self) -> int:
        row = first_row(self.con, "SELECT max(version) FROM _migrations")
        return int(row[0] or 0)

    def _check_migrated(self) -> None:
        try:
            head = self.schema_version()
        except duckdb.CatalogException:
            head = 0
        latest = migrations()[-1].version
        if head < latest:
            raise WarehouseError(
                f"{self.path} is at schema version {head}, this evalhouse needs {latest}: "
                "open it once for writing (e.g. 'evalhouse migrate') to migrate"
            )

    # -- small helpers ----------------------------------------------------------------------

    def scalar(self, sql: str, params: list[Any] | None = None) -> Any:
        row = first_row(self.con, sql, params)
        return row[0] if row else None


def first_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> tuple | None:
    """The first row, with the result fully consumed.

    DuckDB 2 keeps a half-read result open on the connection, and a later ``register`` (the
    bulk loader's Arrow insert) then fails with "unfinished result"; ``fetchall`` closes it.
    """
    rows = con.execute(sql, params or []).fetchall()
    return rows[0] if rows else None


def _locked_error(path: Path, exc: Exception) -> WarehouseError:
    if "lock" not in str(exc).lower():
        return WarehouseError(f"cannot open {path}: {exc}")
    lock_file = path.with_name(path.name + ".lock")
    note = lock_file.read_text(encoding="utf-8") if lock_file.exists() else ""
    return WarehouseLocked(f"warehouse is locked by {_describe_holder(note)}")
