"""Where things live: the warehouse file and its raw store, resolved once from flags and env."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DB = "warehouse.duckdb"
ENV_DB = "EVALHOUSE_DB"
ENV_RAW = "EVALHOUSE_RAW"


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
