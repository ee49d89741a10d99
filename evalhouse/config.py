"""Where things live: the warehouse file and its raw store, resolved once from flags and env."""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path

from evalhouse.errors import InputError

DEFAULT_DB = "warehouse.duckdb"
ENV_DB = "EVALHOUSE_DB"
ENV_RAW = "EVALHOUSE_RAW"
ENV_WAIT = "EVALHOUSE_WAIT"
ENV_MEMORY = "EVALHOUSE_MEMORY_LIMIT"
ENV_THREADS = "EVALHOUSE_THREADS"
ENV_LOAD_BUDGET = "EVALHOUSE_LOAD_BUDGET"
#: Seconds a reader waits for a writer's load transaction before it gives up, naming the writer.
DEFAULT_WAIT_S = 5.0

_wait_override: float | None = None


def resolve_db_path(db: str | os.PathLike[str] | None = None) -> Path:
    """``--db`` wins, then ``$EVALHOUSE_DB``, then ``./warehouse.duckdb``."""
    chosen = db or os.environ.get(ENV_DB) or DEFAULT_DB
    return Path(chosen).expanduser().resolve()


def raw_store_path(db_path: Path) -> Path:
    """The raw store sits beside its warehouse (``warehouse.raw/``) unless ``$EVALHOUSE_RAW`` says.

    Keeping it next to the database means a test's temporary warehouse gets its own store and a
    copied warehouse directory carries the bytes its scores were parsed from.
    """
    env = os.environ.get(ENV_RAW)
    if env:
        return Path(env).expanduser().resolve()
    return db_path.with_suffix(".raw")


def set_reader_wait(seconds: float | None) -> None:
    """The global ``--wait SECONDS`` of this process (``None``: back to env/default)."""
    global _wait_override  # noqa: PLW0603 - one process-wide setting, set once by the command line
    if seconds is not None and seconds < 0:
        raise ValueError("--wait must be 0 or more seconds")
    _wait_override = seconds


def reader_wait() -> float:
    """``--wait`` wins, then ``$EVALHOUSE_WAIT``, then :data:`DEFAULT_WAIT_S`."""
    if _wait_override is not None:
        return _wait_override
    env = os.environ.get(ENV_WAIT)
    if env:
        try:
            return max(float(env), 0.0)
        except ValueError:
            raise InputError(f"${ENV_WAIT}={env!r} is not a number of seconds") from None
    return DEFAULT_WAIT_S


def duckdb_config() -> dict[str, str]:
    """DuckDB settings every connection evalhouse opens starts with.

    ``$EVALHOUSE_MEMORY_LIMIT`` (e.g. ``512MB``) bounds DuckDB's buffer pool, which otherwise may
    grow to 80% of RAM; beyond it DuckDB evicts cached pages and spills to ``<db>.tmp``.
    ``$EVALHOUSE_THREADS`` (e.g. ``1``) bounds the threads one query runs on, which otherwise are
    one per core: set it where processes already run side by side (several jobs on one machine, a
    test runner's workers), so that they do not share the cores twice over. Unset: DuckDB's default."""
    out: dict[str, str] = {}
    limit = os.environ.get(ENV_MEMORY, "").strip()
    if limit and not re.fullmatch(r"\d+(\.\d+)?\s*([KMGT]i?B|B|%)", limit, flags=re.IGNORECASE):
        raise InputError(f"${ENV_MEMORY}={limit!r} is not a memory size such as 512MB, 2GB or 50%")
    if limit:
        out["memory_limit"] = limit
    threads = os.environ.get(ENV_THREADS, "").strip()
    if threads and not (threads.isdigit() and int(threads) >= 1):
        raise InputError(f"${ENV_THREADS}={threads!r} is not a number of threads such as 1 or 4")
    if threads:
        out["threads"] = str(int(threads))
    return out


def serial_blas() -> None:
    """One OpenBLAS thread for a process that does no linear algebra (a load), unless the user chose.

    numpy loads with Arrow's first bulk insert, and OpenBLAS starts a thread per core that spins
    for about 0.1 s of CPU before it sleeps, on a machine whose other core DuckDB's workers want.
    ``$OPENBLAS_NUM_THREADS`` is read once, when numpy loads, so this runs before; an analysis
    (factor models, equating) keeps OpenBLAS's threads."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


# -- bounds of a person's SQL (``evalhouse sql``, ``snapshot open --sql``) --------------------------

ENV_SQL_TIMEOUT = "EVALHOUSE_SQL_TIMEOUT"
ENV_SQL_MEMORY = "EVALHOUSE_SQL_MEMORY_LIMIT"
ENV_SQL_TEMP = "EVALHOUSE_SQL_TEMP_LIMIT"
#: Seconds a query may run, its rows fetched and written included, before it is stopped.
DEFAULT_SQL_TIMEOUT_S = 120.0
#: DuckDB's memory limit for a query (beyond it DuckDB spills to disk, or fails the query).
DEFAULT_SQL_MEMORY = "2GB"
#: How much a query may spill to disk (DuckDB's ``max_temp_directory_size``).
DEFAULT_SQL_TEMP = "4GB"
_SIZE_RE = re.compile(r"\d+(\.\d+)?\s*([KMGT]i?B|B)", flags=re.IGNORECASE)


def sql_timeout(option: float | None = None) -> float | None:
    """Seconds a query may take: ``--timeout`` wins, then ``$EVALHOUSE_SQL_TIMEOUT``, then
    :data:`DEFAULT_SQL_TIMEOUT_S`; ``None`` when set to 0 (no timeout)."""
    if option is None:
        env = os.environ.get(ENV_SQL_TIMEOUT, "").strip()
        try:
            option = float(env) if env else DEFAULT_SQL_TIMEOUT_S
        except ValueError:
            raise InputError(f"${ENV_SQL_TIMEOUT}={env!r} is not a number of seconds (0 = no timeout)") from None
    if not math.isfinite(option) or option < 0:
        raise InputError(f"a query timeout is 0 (none) or more seconds, not {option!r}")
    return option or None


def _sql_size(option: str | None, env: str, default: str, what: str) -> str:
    text = (option if option is not None else os.environ.get(env, "")).strip() or default
    if not _SIZE_RE.fullmatch(text):
        where = "" if option is not None else f" (from ${env})"
        raise InputError(f"{what} {text!r}{where} is not a size such as 512MB, 2GB or 1GiB")
    return text


def sql_memory_limit(option: str | None = None) -> str:
    """A query's memory limit: ``--memory-limit`` wins, then ``$EVALHOUSE_SQL_MEMORY_LIMIT``, then
    ``$EVALHOUSE_MEMORY_LIMIT`` (the limit of every warehouse connection), then :data:`DEFAULT_SQL_MEMORY`."""
    default = os.environ.get(ENV_MEMORY, "").strip()
    if not _SIZE_RE.fullmatch(default):  # a percentage applies to the warehouse, not to a query
        default = DEFAULT_SQL_MEMORY
    return _sql_size(option, ENV_SQL_MEMORY, default, "the query memory limit")


def sql_temp_limit(option: str | None = None) -> str:
    """How much a query may spill to disk: ``--temp-limit``, then ``$EVALHOUSE_SQL_TEMP_LIMIT``, then
    :data:`DEFAULT_SQL_TEMP`."""
    return _sql_size(option, ENV_SQL_TEMP, DEFAULT_SQL_TEMP, "the query spill limit")
