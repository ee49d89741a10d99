"""What every run shares: where its input comes from, how it is recorded, how errors are named."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from evalhouse.analytics.base import AnalysisRecord
from evalhouse.analytics.data.pin import file_pin
from evalhouse.errors import EvalhouseError, InputError, RunFailed
from evalhouse.pipeline.scratch import IngestFailed, ingested
from evalhouse.warehouse.analysis import record_analysis
from evalhouse.warehouse.db import Warehouse, WarehouseError
from evalhouse.warehouse.snapshot.manifest import SnapshotError
from evalhouse.warehouse.snapshot.reader import open_snapshot


@dataclass
class Outcome:
    """A finished run: the JSON payload to print, whether its verdict is positive, where it was recorded."""

    payload: dict[str, Any]
    ok: bool = True
    analysis_id: str | None = None
    recorded_in: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    exact: bool = False  # the payload's keys are a contract: add nothing to them

    def as_dict(self) -> dict[str, Any]:
        if self.exact:
            return dict(self.payload)
        return {**self.payload, "analysis_id": self.analysis_id, "recorded_in": self.recorded_in}


@contextmanager
def named_errors() -> Iterator[None]:
    """Re-raise the lower layers' errors as evalhouse's (InputError: exit 2, RunFailed: exit 1)."""
    try:
        yield
    except IngestFailed as exc:  # the file given could not be read by the source's parser: bad input
        raise InputError(str(exc)) from exc
    except EvalhouseError:
        raise
    except SnapshotError as exc:
        raise InputError(str(exc)) from exc
    except (WarehouseError, duckdb.Error) as exc:
        raise RunFailed(str(exc)) from exc


@contextmanager
def reading(db: Path, snapshot: Path | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection: the snapshot when given, else the live warehouse at ``db``."""
    with named_errors():
        if snapshot is not None:
            con = open_snapshot(snapshot)
            try:
                yield con
            finally:
                con.close()
            return
        if not Path(db).exists():
            raise InputError(
                f"no warehouse at {db}: run 'evalhouse refresh' first (offline: 'make mirror && make run "
                "MIRROR=build/mirror'), or pass --snapshot DIR"
            )
        with Warehouse.open(db, read_only=True) as wh:
            yield wh.con


@contextmanager
def ingesting(source_key: str, location: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A scratch warehouse holding one pinned payload, ingested through the real parser and checkpoint."""
    with named_errors(), ingested(source_key, location) as (wh, _run):
        yield wh.con


@contextmanager
def source_input(
    db: Path, *, source_key: str, input_path: Path | None, snapshot: Path | None
) -> Iterator[tuple[duckdb.DuckDBPyConnection, str | None]]:
    """``(con, pin)``: a pinned payload ingested into a scratch warehouse (pinned to its sha256), else
    :func:`reading` (pinned by the frames it yields)."""
    if input_path is not None:
        with ingesting(source_key, input_path) as con:
            yield con, file_pin(input_path)
        return
    with reading(db, snapshot) as con:
        yield con, None


def record(
    db: Path | None,
    rec: AnalysisRecord,
    results: Mapping[str, Any],
    *,
    also: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> tuple[str | None, str | None]:
    """Write the run into ``db`` in one transaction (``db=None``: not recorded); ``(analysis_id, db)``.

    The warehouse is created and migrated if missing; the writer lock is held only here. ``also``
    runs inside the same transaction (texts and vectors a comparison used).
    """
    if db is None:
        return None, None
    with named_errors(), Warehouse.open(db) as wh, wh.transaction() as con:
        if also is not None:
            also(con)
        analysis_id = record_analysis(con, rec, **results)
    return analysis_id, str(db)


def pinned(rec: AnalysisRecord, pin: str | None) -> AnalysisRecord:
    """The record with its pin (snapshot id, state id or file sha256) where a snapshot id goes."""
    return rec if pin is None or rec.snapshot_id == pin else rec.model_copy(update={"snapshot_id": pin})
