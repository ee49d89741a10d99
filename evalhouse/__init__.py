"""evalhouse: a curated, hash-pinned warehouse of AI evaluation results."""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

try:
    __version__ = version("evalhouse")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"

__all__ = ["__version__", "open_snapshot"]


def open_snapshot(path: str | os.PathLike[str], *, verify: bool = True) -> duckdb.DuckDBPyConnection:
    """A verified, read-only DuckDB connection over a snapshot (imported lazily: duckdb is heavy)."""
    from evalhouse.warehouse.snapshot import open_snapshot as _open

    return _open(path, verify=verify)
