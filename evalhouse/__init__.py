"""evalhouse: a curated, hash-pinned warehouse of AI evaluation results — the public Python API.

Everything a notebook or a script needs is importable from here::

    import evalhouse

    runs = evalhouse.refresh(mirror="build/mirror")          # the nightly refresh, as a function
    evalhouse.import_eee("path/to/datastore")                # an Every Eval Ever tree
    with evalhouse.connect() as wh:                          # the live warehouse, read-only
        wh.con.sql("SELECT count(*) FROM v_scores_canonical").show()
    con = evalhouse.open_snapshot("snapshots/2026-12-01")    # a frozen, verified snapshot
    df = evalhouse.snapshot_frame(con, "SELECT * FROM v_matrix_long")
    evalhouse.resolve_model("GPT-5 (high)")                  # {"configuration", "base_model", ...}
    efa = evalhouse.EFA(n_factors=3).fit(matrix)             # estimators: fit() + fitted attributes

Names resolve lazily (PEP 562), so ``import evalhouse`` costs nothing until a name is used.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalhouse.version import __version__

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from evalhouse.pipeline.import_eee import ImportSummary
    from evalhouse.pipeline.ledger import RunResult
    from evalhouse.warehouse.db import Warehouse

__all__ = [
    "EFA",
    "BalanceOfBenchmarks",
    "CharacteristicCurveEquating",
    "Omega",
    "ParallelAnalysis",
    "PredictionLadder",
    "__version__",
    "connect",
    "import_eee",
    "open_snapshot",
    "refresh",
    "resolve_model",
    "snapshot_frame",
]

#: Estimators, resolved on first use from the analytics layer.
_ESTIMATORS = {
    "EFA": "evalhouse.analytics",
    "ParallelAnalysis": "evalhouse.analytics",
    "Omega": "evalhouse.analytics",
    "PredictionLadder": "evalhouse.analytics",
    "CharacteristicCurveEquating": "evalhouse.analytics",
    "BalanceOfBenchmarks": "evalhouse.analytics",
}


def __getattr__(name: str) -> Any:
    if name in _ESTIMATORS:
        return getattr(importlib.import_module(_ESTIMATORS[name]), name)
    raise AttributeError(f"module 'evalhouse' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


def connect(db: str | os.PathLike[str] | None = None, *, read_only: bool = True) -> Warehouse:
    """The warehouse at ``db`` (default ``$EVALHOUSE_DB`` or ``./warehouse.duckdb``).

    Read-only by default: readers never take the writer lock. Use as a context manager; the DuckDB
    connection is ``.con``. ``read_only=False`` takes the writer lock and migrates.
    """
    from evalhouse.config import resolve_db_path
    from evalhouse.warehouse.db import Warehouse

    return Warehouse.open(resolve_db_path(db), read_only=read_only)


def open_snapshot(
    path: str | os.PathLike[str], *, verify: bool = True, expect_id: str | None = None
) -> duckdb.DuckDBPyConnection:
    """A verified, read-only DuckDB connection over a snapshot folder, with the warehouse's views.

    ``expect_id``: the snapshot id an analysis recorded; any other snapshot is refused.
    """
    from evalhouse.warehouse.snapshot import open_snapshot as _open

    return _open(path, verify=verify, expect_id=expect_id)


def snapshot_frame(con: duckdb.DuckDBPyConnection, sql: str) -> pd.DataFrame:
    """A query on a snapshot connection as a DataFrame whose ``attrs["snapshot_id"]`` pins it."""
    from evalhouse.warehouse.snapshot import snapshot_frame as _frame

    return _frame(con, sql)


def refresh(
    db: str | os.PathLike[str] | None = None,
    sources: Iterable[str] | None = None,
    *,
    mirror: str | None = None,
    validate: bool = True,
) -> list[RunResult]:
    """Run the nightly refresh of ``sources`` (default: every scheduled source verified on a recorded
    real payload; the unverified ones end ``skipped``) into ``db``.

    ``mirror`` replays pinned payloads (a folder or base URL) instead of the live hosts. Each
    result says how the source's run ended (``completed``, ``partial``, ``unchanged``,
    ``recanonicalised``, ``skipped`` or ``failed``) with its counts (``.as_dict()``).
    """
    from evalhouse.config import raw_store_path, resolve_db_path
    from evalhouse.pipeline.ledger import checkpoint
    from evalhouse.pipeline.refresh import RefreshOptions
    from evalhouse.pipeline.refresh import refresh as _refresh
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw_store import RawStore

    path = resolve_db_path(db)
    options = RefreshOptions(mirror=mirror, after_load=checkpoint(skip=not validate))
    with Warehouse.open(path) as wh:
        return _refresh(wh, RawStore(raw_store_path(path)), list(sources) if sources else None, options)


def import_eee(
    path: str | os.PathLike[str], db: str | os.PathLike[str] | None = None, *, validate: bool = True
) -> ImportSummary:
    """Load an Every Eval Ever datastore tree (``data/<collection>/<developer>/<model>/<uuid>.json``)."""
    from evalhouse.config import raw_store_path, resolve_db_path
    from evalhouse.pipeline.import_eee import import_tree
    from evalhouse.pipeline.ledger import checkpoint
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw_store import RawStore

    target = resolve_db_path(db)
    with Warehouse.open(target) as wh:
        return import_tree(wh, Path(path), RawStore(raw_store_path(target)), after_load=checkpoint(skip=not validate))


def resolve_model(name: str, source: str | None = None, developer: str | None = None) -> dict[str, Any]:
    """Any model name -> its identity: ``{"configuration", "base_model", "developer", "family", "flags", ...}``."""
    from evalhouse.curation.identity import describe_name
    from evalhouse.curation.registry import load_registry

    return describe_name(name, load_registry(), source=source, developer=developer)
