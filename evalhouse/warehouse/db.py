"""The warehouse file: one DuckDB database, a writer lock, numbered migrations and views.

A writer takes an exclusive lock file beside the database before DuckDB opens it, and writes who
holds it into that file. DuckDB would refuse a second writer too, but with an IO error that names
neither the command nor the time; "warehouse is locked by pid 4242 since 02:17 (evalhouse
refresh)" tells the operator whether to wait or to look for a stuck job.

Readers during writes. DuckDB lets no process read a file another process has open for writing,
so a writer keeps the database open only while it needs it: a refresh or an import fetches and
parses inside :meth:`Warehouse.released` (the lock file stays held, so a second writer is still
refused, but the DuckDB file is closed) and reopens it for the load transaction. A reader
(``Warehouse.open(read_only=True)``) that finds the file held waits up to ``wait`` seconds
(``evalhouse --wait``, ``$EVALHOUSE_WAIT``, default :data:`evalhouse.config.DEFAULT_WAIT_S`),
saying once on stderr whom it waits for, then fails naming the writer and what it is doing.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import json
import os
import re
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import IO, Any, Self

import duckdb

from evalhouse.config import duckdb_config, reader_wait
from evalhouse.errors import CommitFailed, MigrationError, WarehouseError, WarehouseLocked
from evalhouse.warehouse import blank

#: How long a writer waits to reopen the database for its load while readers have it open.
WRITER_REOPEN_WAIT_S = 600.0
#: Pause between two attempts to open a held database.
RETRY_EVERY_S = 0.2
#: Part of the blank warehouse's name: a new format of blank (not of schema) changes it.
BLANK_FORMAT = "evalhouse-blank-warehouse/1"
MIGRATION_RE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.(sql|py)$")
DEPENDS_RE = re.compile(r"^--\s*depends:\s*(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Migration:
    """A numbered migration: SQL run as it is, or a Python module whose ``upgrade(con)`` runs (a
    migration that must compute in Python, such as re-deriving identities under new rules)."""

    version: int
    name: str
    sql: str  # the file's text (for a Python migration, its source: what the sha256 pins)
    kind: str = "sql"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()

    def apply(self, con: duckdb.DuckDBPyConnection) -> None:
        if self.kind == "sql":
            con.execute(self.sql)
            return
        module = importlib.import_module(f"evalhouse.warehouse.migrations.{self.version:04d}_{self.name}")
        module.upgrade(con)


def migrations() -> list[Migration]:
    """The numbered migration files shipped with the package, in order."""
    return list(_shipped_migrations())


@cache
def _shipped_migrations() -> tuple[Migration, ...]:
    """Read once per process: the package's files do not change under it, and every open of a
    warehouse compares them with what it has applied."""
    found = []
    for entry in resources.files("evalhouse.warehouse.migrations").iterdir():
        match = MIGRATION_RE.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8"), match[3]))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migration files share a number: {versions}")
    return tuple(found)


def views() -> list[tuple[str, str]]:
    """``(name, sql)`` for every ``views/v_*.sql``, ordered so dependencies come first."""
    return list(_shipped_views())


@cache
def _shipped_views() -> tuple[tuple[str, str], ...]:
    """Read and ordered once per process (see :func:`_shipped_migrations`)."""
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
    return tuple((name, sources[name]) for name in ordered)


class _WriterLock:
    """An exclusive ``flock`` on ``<db>.lock`` holding a JSON note of who has it."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self._fh: IO[str] | None = None
        self._note: dict[str, Any] = {}

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
        self._fh = fh
        self._note = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": _now(),
            "command": " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv)),
        }
        self.doing("opening the database")

    def doing(self, what: str) -> None:
        """Say in the lock file what the writer is doing now (readers name it while they wait)."""
        if self._fh is None:
            return
        self._note.update(doing=what, doing_since=_now())
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(json.dumps(self._note))
        self._fh.flush()

    def release(self) -> None:
        if self._fh is not None:
            self._fh.seek(0)
            self._fh.truncate()
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _describe_holder(note: str) -> str:
    try:
        info = json.loads(note)
    except json.JSONDecodeError:
        return "another process (no holder recorded)"
    doing = f"; {info['doing']} since {info.get('doing_since')}" if info.get("doing") else ""
    return f"pid {info.get('pid')} since {info.get('since')} ({info.get('command', '?')}{doing})"


def _holder(path: Path) -> str:
    """The evalhouse writer holding the lock file, from its note (a note no live lock backs is stale)."""
    nobody = "another process (no evalhouse writer recorded)"
    try:
        fh = open(path.with_name(path.name + ".lock"), encoding="utf-8")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return nobody
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # a writer holds it: its note is current
            note = fh.read()
            return _describe_holder(note) if note.strip() else nobody
        fcntl.flock(fh, fcntl.LOCK_UN)
    return nobody


_DUCKDB_HOLDER = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


def _held_by(path: Path, exc: duckdb.Error, *, read_only: bool) -> str:
    """Who holds the file: the evalhouse writer's note for a reader; readers for a writer (its own
    note is in the lock file); DuckDB's own words for a process that is not evalhouse."""
    found = _DUCKDB_HOLDER.search(str(exc))
    if not read_only:
        return f"readers (e.g. {found[1]} pid {found[2]})" if found else "readers"
    note = _holder(path)
    if note.startswith("another process") and found:
        return f"{found[1]} pid {found[2]} (not an evalhouse writer)"
    return note


def _held(exc: duckdb.Error) -> bool:
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


def _readers_dir(path: Path) -> Path:
    """Where waiting readers leave a note (one file per pid), so a writer lets them in first."""
    return path.with_name(path.name + ".readers")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _waiting_readers(path: Path) -> list[int]:
    folder = _readers_dir(path)
    if not folder.is_dir():
        return []
    pids = [int(p.name) for p in folder.iterdir() if p.name.isdigit()]
    return [pid for pid in pids if pid != os.getpid() and _alive(pid)]


@contextmanager
def _waiting(path: Path) -> Iterator[Callable[[], None]]:
    """Yields ``announce``: it marks this reader as waiting; the mark goes when the block ends."""
    mark = _readers_dir(path) / str(os.getpid())

    def announce() -> None:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()

    try:
        yield announce
    finally:
        mark.unlink(missing_ok=True)


def _let_readers_in(path: Path) -> None:
    """Before a writer reopens the database: wait (bounded) for readers already waiting to open it."""
    deadline = time.monotonic() + WRITER_REOPEN_WAIT_S
    while _waiting_readers(path) and time.monotonic() < deadline:
        time.sleep(RETRY_EVERY_S / 4)


def _blank_key() -> str:
    """What names the blank warehouse of this evalhouse (:mod:`evalhouse.warehouse.blank`)."""
    made_by = [BLANK_FORMAT, duckdb.__version__, *(f"{m.version}:{m.name}:{m.sha256}" for m in migrations())]
    return hashlib.sha256("\x1f".join([*made_by, _views_digest(views())]).encode()).hexdigest()


def _build_blank(path: Path) -> None:
    """A new, migrated and closed warehouse at ``path`` (no lock: the file is the caller's own)."""
    con = duckdb.connect(str(path), config=duckdb_config())
    try:
        Warehouse(path, con, None).migrate()
    finally:
        con.close()


def _connect_new_or_existing(path: Path, wait: float) -> tuple[duckdb.DuckDBPyConnection, bool]:
    """The writer's connection to ``path``, and whether ``path`` is a new warehouse copied from the
    blank one (made once per schema). A copy DuckDB will not open is removed with its blank, and
    the new warehouse is migrated here instead."""
    wal = path.with_name(path.name + ".wal")
    new = not path.exists() and not wal.exists()
    key = _blank_key() if new else ""
    copied = new and blank.copy_blank(path, key, _build_blank)
    try:
        return _connect(path, read_only=False, wait=wait, who="writer"), copied
    except WarehouseLocked:
        raise
    except WarehouseError:
        if not copied:
            raise
    blank.forget(key)
    path.unlink()
    wal.unlink(missing_ok=True)  # (none is expected: DuckDB refused the file before writing)
    return _connect(path, read_only=False, wait=wait, who="writer"), False


def _connect(
    path: Path, *, read_only: bool, wait: float, who: str, host: duckdb.DuckDBPyConnection | None = None
) -> duckdb.DuckDBPyConnection:
    """Attach the DuckDB file to ``host`` (a new in-memory DuckDB when ``None``) and make it the
    connection's database, retrying for ``wait`` seconds while another process holds the file.

    One line on stderr says whom it waits for; when the time is up, :class:`WarehouseLocked`
    names the holder and what it is doing. A waiting reader leaves a mark beside the database so
    a writer reopening it after a fetch lets the reader in first.
    """
    con = host if host is not None else _host(path)
    deadline = time.monotonic() + max(wait, 0.0)
    said = False
    try:
        with _waiting(path) as announce:
            while True:
                try:
                    _attach(con, path, read_only=read_only)
                    return con
                except duckdb.Error as exc:
                    if not _held(exc):
                        raise WarehouseError(f"cannot open {path}: {exc}") from exc
                    holder = _held_by(path, exc, read_only=read_only)
                    if time.monotonic() >= deadline:
                        waited = f" (waited {wait:g} s; raise --wait SECONDS to wait longer)" if wait > 0 else ""
                        raise WarehouseLocked(f"warehouse is locked by {holder}{waited}") from exc
                    if not said:
                        if read_only:
                            announce()
                        sys.stderr.write(f"{who} waits up to {wait:g} s: the warehouse is held by {holder}\n")
                        sys.stderr.flush()
                        said = True
                    time.sleep(RETRY_EVERY_S)
    except BaseException:
        if host is None:
            con.close()
        raise


def _host(path: Path) -> duckdb.DuckDBPyConnection:
    """The in-memory DuckDB a warehouse file is attached to. It outlives the attachment: a writer
    releasing the file around a fetch detaches it and attaches it again, without starting a new
    DuckDB (tens of milliseconds of CPU each time, twice per source of a refresh)."""
    try:
        con = duckdb.connect(":memory:", config=duckdb_config())
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot open {path}: {exc}") from exc
    con.execute("SET enable_progress_bar = false")  # progress is evalhouse's, in lines a log keeps
    return con


#: DuckDB's own catalogs, names an attached warehouse cannot take.
_DUCKDB_CATALOGS = frozenset({"memory", "system", "temp"})


def _catalog(path: Path) -> str:
    """The name the file is attached under: its stem, as DuckDB names a file it opens itself."""
    return "warehouse" if path.stem.lower() in _DUCKDB_CATALOGS else path.stem


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _attach(con: duckdb.DuckDBPyConnection, path: Path, *, read_only: bool) -> None:
    literal = "'" + str(path).replace("'", "''") + "'"
    mode = ", READ_ONLY" if read_only else ""
    con.execute(f"ATTACH {literal} AS {_quoted(_catalog(path))} (TYPE DUCKDB{mode})")
    con.execute(f"USE {_quoted(_catalog(path))}")


def _detach(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Close the file (DuckDB checkpoints it and lets its lock go); ``con`` stays open, on no file.
    A transaction still open is rolled back, as closing the connection would (DuckDB would
    otherwise keep the file attached until it ends)."""
    with suppress(duckdb.TransactionException):  # none open: nothing to roll back
        con.execute("ROLLBACK")
    con.execute("USE memory")
    con.execute(f"DETACH {_quoted(_catalog(path))}")


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A second connection to ``con``'s DuckDB on the same warehouse, with a transaction of its own.

    ``con.cursor()`` alone starts on DuckDB's in-memory database, to which the warehouse file is
    attached; this one starts on the database ``con`` is on."""
    (name,) = con.execute("SELECT current_database()").fetchall()[0]
    second = con.cursor()
    second.execute(f"USE {_quoted(name)}")
    return second


def _views_digest(shipped: list[tuple[str, str]]) -> str:
    """What identifies the shipped view SQL (stored in ``_view_state`` when the views are made)."""
    return hashlib.sha256("\x1e".join(f"{n}\x1f{sql}" for n, sql in shipped).encode()).hexdigest()


class Warehouse:
    """An open warehouse. Use :meth:`open` as a context manager.

    Writers hold the lock for their whole life and migrate on open; readers open DuckDB
    read-only and never migrate (an unmigrated file is an error telling them to run a writer).

    ``con`` is an in-memory DuckDB with the file attached (read-only for a reader) under the file's
    stem and in use, so SQL reads the warehouse's tables by their own names. The DuckDB lives as
    long as the object: :meth:`released` detaches the file and attaches it again.
    """

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, lock: _WriterLock | None):
        self.path = path
        self._host = con  # the in-memory DuckDB the file is attached to, open until close()
        self._con: duckdb.DuckDBPyConnection | None = con  # the same, while the file is attached
        self._lock = lock
        self._read_only = lock is None

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            raise WarehouseError(
                f"{self.path} is not open here: this step runs while the writer has released the database"
            )
        return self._con

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, read_only: bool = False, wait: float | None = None) -> Self:
        """Open for writing (lock, then migrate), or ``read_only`` (wait up to ``wait`` seconds for a
        writer's load transaction to end; ``None``: the global ``--wait``)."""
        path = Path(path)
        wait = reader_wait() if wait is None else wait
        duckdb_config()  # a malformed setting is refused before a new file is made
        if read_only:
            if not path.exists():
                raise WarehouseError(f"no warehouse at {path}: run 'evalhouse migrate' or 'evalhouse refresh' first")
            wh = cls(path, _connect(path, read_only=True, wait=wait, who="reader"), None)
            try:
                wh._check_migrated()
            except BaseException:
                wh.close()
                raise
            return wh
        lock = _WriterLock(path)
        lock.acquire()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            con, copied = _connect_new_or_existing(path, wait)
        except BaseException:
            lock.release()
            raise
        wh = cls(path, con, lock)
        try:
            wh.migrate()
            if copied:  # the blank's migrations were applied to this warehouse now, by the copy
                with wh.transaction() as tx:
                    tx.execute("UPDATE _migrations SET applied_at = current_timestamp")
            lock.doing("holding the database open")
        except BaseException:
            wh.close()
            raise
        return wh

    @contextmanager
    def released(self, doing: str = "fetching and parsing (database closed)") -> Iterator[None]:
        """Close the database for the block (keeping the writer lock) so readers can open it.

        For the steps of a write that need no database: fetching, parsing, reading files. On
        leaving the block the database is reopened, waiting up to :data:`WRITER_REOPEN_WAIT_S`
        for readers that got in meanwhile. A reader or nested call does nothing.
        """
        if self.read_only or self._con is None:
            yield
            return
        _detach(self._host, self.path)
        self._con = None
        assert self._lock is not None
        self._lock.doing(doing)
        try:
            yield
        finally:
            _let_readers_in(self.path)
            self._con = _connect(self.path, read_only=False, wait=WRITER_REOPEN_WAIT_S, who="writer", host=self._host)
            self._idle()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A second connection on this warehouse with a transaction of its own (it sees only what
        was committed); ``con.cursor()`` would start on DuckDB's in-memory database instead."""
        return cursor(self.con)

    def doing(self, what: str) -> None:
        """Say in the lock file what this writer does now (a waiting reader names it)."""
        if self._lock is not None:
            self._lock.doing(what)

    def close(self) -> None:
        try:
            self._con = None
            self._host.close()  # detaches the file if it is attached (DuckDB checkpoints it)
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
        if self._lock is not None:
            self._lock.doing("in a write transaction")
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            self._idle()
            raise
        try:
            self.con.execute("COMMIT")
        except duckdb.Error as exc:
            reopened = self._after_failed_commit()
            why = str(exc).splitlines()[0]
            raise CommitFailed(
                f"the commit failed ({why}); nothing of the transaction is kept"
                + ("; the database was reopened as it was before it" if reopened else ""),
                out_of_memory=_out_of_memory(exc),
                reopened=reopened,
            ) from exc
        self._idle()

    def _after_failed_commit(self) -> bool:
        """Make the connection usable again after a failed COMMIT: DuckDB invalidates the whole
        database when a commit fails on a fatal error (out of memory among them), and only a new
        connection sees it again, as it was before the transaction. Returns whether it reopened."""
        try:
            self.con.execute("SELECT 1").fetchall()
        except duckdb.FatalException:
            self._con = None
            self._host.close()
            self._host = self._con = _connect(
                self.path, read_only=self.read_only, wait=WRITER_REOPEN_WAIT_S, who="writer"
            )
            self._idle()
            return True
        # in case the failed commit left its transaction open (if DuckDB ended it, there is none)
        with suppress(duckdb.TransactionException):
            self.con.execute("ROLLBACK")
        self._idle()
        return False

    def _idle(self) -> None:
        if self._lock is not None:
            self._lock.doing("holding the database open")

    # -- migrations -------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the pending migrations and recreate the views, all in one transaction (an upgrade
        is applied whole or not at all; a new warehouse is one commit, not one per migration)."""
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " sha256 TEXT NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
        )
        applied = {
            v: (n, s) for v, n, s in self.con.execute("SELECT version, name, sha256 FROM _migrations").fetchall()
        }
        shipped = migrations()
        pending = []
        for m in shipped:
            if m.version not in applied:
                pending.append(m)
                continue
            name, sha = applied[m.version]
            if sha != m.sha256:
                raise MigrationError(
                    f"migration {m.version:04d}_{name}.{m.kind} was edited after it was applied to "
                    f"{self.path}; never edit an applied migration, add a new one"
                )
        unknown = sorted(set(applied) - {m.version for m in shipped})
        if unknown:
            raise MigrationError(
                f"{self.path} has migrations {unknown} this evalhouse does not know; upgrade evalhouse"
            )
        if not pending:
            self.create_views()
            return []
        with self.transaction() as con:
            for m in pending:
                m.apply(con)
                con.execute(
                    "INSERT INTO _migrations (version, name, sha256) VALUES (?, ?, ?)",
                    [m.version, m.name, m.sha256],
                )
            self._write_views(con, views())  # a migration may change what they read
        return [f"{m.version:04d}_{m.name}" for m in pending]

    def create_views(self) -> None:
        """(Re)create every ``v_*`` view; skipped when the shipped view SQL is the one last created
        and every view is there."""
        shipped = views()
        if self._views_current(_views_digest(shipped), [n for n, _ in shipped]):
            return
        with self.transaction() as con:
            self._write_views(con, shipped)

    @staticmethod
    def _write_views(con: duckdb.DuckDBPyConnection, shipped: list[tuple[str, str]]) -> None:
        for _name, sql in shipped:
            con.execute(sql)
        con.execute("CREATE TABLE IF NOT EXISTS _view_state (digest TEXT NOT NULL)")
        con.execute("DELETE FROM _view_state")
        con.execute("INSERT INTO _view_state VALUES (?)", [_views_digest(shipped)])

    def _views_current(self, digest: str, names: list[str]) -> bool:
        try:
            row = first_row(self.con, "SELECT max(digest) FROM _view_state")
        except duckdb.CatalogException:
            return False
        if row is None or row[0] != digest:
            return False
        # the names compared here: a list parameter unnested in the query cost ten times as much
        views = self.con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
        return {name for (name,) in views}.issuperset(names)

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


def _out_of_memory(exc: BaseException) -> bool:
    """Whether DuckDB failed for want of memory (an out-of-memory error, or a commit that could not
    pin a buffer within the memory limit)."""
    text = str(exc)
    return isinstance(exc, duckdb.OutOfMemoryException) or "failed to pin block" in text or "Out of Memory" in text


def first_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> tuple | None:
    """The first row, with the result fully consumed.

    DuckDB 2 keeps a half-read result open on the connection, and a later ``register`` (the
    bulk loader's Arrow insert) then fails with "unfinished result"; ``fetchall`` closes it.
    """
    rows = con.execute(sql, params or []).fetchall()
    return rows[0] if rows else None
