"""New warehouses as copies of a blank one: a migrated, empty warehouse kept in the cache folder.

Making the schema of a new warehouse — every migration and view, one statement at a time in
DuckDB — takes ≈ 0.1 s, what a refresh of a small source spends on its whole load; copying a file
that already holds it takes a millisecond. The blank is named by what made it (the caller's key:
the migration files, the view SQL and DuckDB's version), so a changed schema makes a new blank and
a stale one is never copied, as Python keeps bytecode and :mod:`evalhouse.common.yamls` keeps
parsed YAML. It is written under a temporary name and renamed when complete, so a process killed
meanwhile leaves no half blank; the copy is made the same way beside the new warehouse.

Where the cache folder cannot be written, :func:`copy_blank` says so and the caller makes the
schema itself: the cache only ever saves time.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from evalhouse.common.cache import cache_dir

#: What every DuckDB database file holds at :data:`MAGIC_AT` (its main header's magic bytes).
MAGIC, MAGIC_AT = b"DUCK", 8


def blank_path(key: str) -> Path:
    """Where the blank warehouse named ``key`` is kept."""
    return cache_dir() / "warehouse" / f"{key}.duckdb"


def copy_blank(path: Path, key: str, build: Callable[[Path], None]) -> bool:
    """Make the new file ``path`` a copy of the blank warehouse ``key``, first making the blank with
    ``build(file)`` (which leaves a closed, migrated database at ``file``) if there is none.

    Returns False, with nothing written at ``path``, where the cache folder cannot be read or
    written (a read-only home, a full disk): the caller then migrates ``path`` itself. An error of
    ``build`` is raised: migrating ``path`` would fail the same way.
    """
    blank = blank_path(key)
    try:
        if not is_duckdb_file(blank):
            _make(blank, build)
        _copy(blank, path)
    except OSError:
        return False
    return True


def forget(key: str) -> None:
    """Remove the blank ``key`` (one DuckDB would not open): the next new warehouse makes it again."""
    blank_path(key).unlink(missing_ok=True)


def is_duckdb_file(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            fh.seek(MAGIC_AT)
            return fh.read(len(MAGIC)) == MAGIC
    except FileNotFoundError:
        return False


def _temporary(path: Path, suffix: str) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{suffix}")


def _make(blank: Path, build: Callable[[Path], None]) -> None:
    blank.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(blank, "building")
    wal = tmp.with_name(tmp.name + ".wal")
    try:
        build(tmp)
        if wal.exists():  # a closed database has checkpointed its log: not a blank to copy
            raise OSError(f"{tmp} kept a write-ahead log after it was closed")
        os.replace(tmp, blank)
    finally:
        tmp.unlink(missing_ok=True)
        wal.unlink(missing_ok=True)


def _copy(blank: Path, path: Path) -> None:
    tmp = _temporary(path, "blank")
    try:
        shutil.copyfile(blank, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
