"""One-line forms of the commonest calls, for a notebook: each opens a :class:`House` and makes one call."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from evalhouse.app.house import House

if TYPE_CHECKING:
    from evalhouse.app.results import RefreshResult
    from evalhouse.pipeline.import_eee import ImportSummary
    from evalhouse.warehouse.db import Warehouse

PathLike = str | os.PathLike[str]


def connect(db: PathLike | None = None, *, read_only: bool = True) -> Warehouse:
    """The warehouse at ``db`` (default ``$EVALHOUSE_DB`` or ``./warehouse.duckdb``), open.

    Read-only by default: readers never take the writer lock. Use as a context manager; the DuckDB
    connection is ``.con``. ``read_only=False`` takes the writer lock and migrates."""
    return House.open(db).connect(read_only=read_only)


def refresh(
    db: PathLike | None = None,
    sources: Iterable[str] | None = None,
    *,
    mirror: str | None = None,
    deadline: float | None = None,
    accept_drift: Iterable[str] = (),
    validate: bool = True,
) -> RefreshResult:
    """:meth:`House.refresh` of the warehouse at ``db``: iterate the result for each source's run."""
    return House.open(db).refresh(
        sources, mirror=mirror, deadline=deadline, accept_drift=accept_drift, validate=validate
    )


def import_eee(
    path: PathLike, db: PathLike | None = None, *, batch_size: int | None = None, validate: bool = True
) -> ImportSummary:
    """:meth:`House.import_eee` of the datastore tree at ``path`` into the warehouse at ``db``."""
    return House.open(db).import_eee(path, batch_size=batch_size, validate=validate)
