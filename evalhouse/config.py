"""Where things live: the warehouse file and its raw store, resolved once from flags and env."""

from __future__ import annotations

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
    """DuckDB settings every connection to the warehouse opens with: ``$EVALHOUSE_MEMORY_LIMIT``
    (e.g. ``512MB``) bounds DuckDB's buffer pool, which otherwise may grow to 80% of RAM; beyond
    it DuckDB evicts cached pages and spills to ``<db>.tmp``. Unset: DuckDB's default."""
    limit = os.environ.get(ENV_MEMORY, "").strip()
    if limit and not re.fullmatch(r"\d+(\.\d+)?\s*([KMGT]i?B|B|%)", limit, flags=re.IGNORECASE):
        raise InputError(f"${ENV_MEMORY}={limit!r} is not a memory size such as 512MB, 2GB or 50%")
    return {"memory_limit": limit} if limit else {}


def serial_blas() -> None:
    """One OpenBLAS thread for a process that does no linear algebra (a load), unless the user chose.

    numpy loads with Arrow's first bulk insert, and OpenBLAS starts a thread per core that spins
    for about 0.1 s of CPU before it sleeps, on a machine whose other core DuckDB's workers want.
    ``$OPENBLAS_NUM_THREADS`` is read once, when numpy loads, so this runs before; an analysis
    (factor models, equating) keeps OpenBLAS's threads."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
