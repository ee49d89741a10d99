"""A scratch warehouse holding one pinned payload, for reproductions run from a file.

``evalhouse reproduce paper-000 --input aa_models_raw_parsed.csv`` must go through the same
parser, curation and checkpoint as a nightly refresh, not a side door: this ingests the file into
a temporary warehouse (or into ``--db`` when given) and hands back the open warehouse.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evalhouse.config import raw_store_path
from evalhouse.errors import RunFailed
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.pipeline.refresh import RefreshOptions
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load.ledger import RunResult, checkpoint
from evalhouse.warehouse.raw.store import RawStore


class IngestFailed(RunFailed):
    """The pinned payload a reproduction needs could not be ingested."""


@contextmanager
def ingested(
    source_key: str, location: str | Path, db: Path | None = None, *, validate: bool = True
) -> Iterator[tuple[Warehouse, RunResult]]:
    """Open ``db`` (or a temporary warehouse), ingest ``location`` with ``source_key``'s parser."""
    with tempfile.TemporaryDirectory(prefix="evalhouse-scratch-") as tmp:
        path = Path(db) if db is not None else Path(tmp) / "scratch.duckdb"
        options = RefreshOptions(after_load=checkpoint(skip=not validate))
        with Warehouse.open(path) as wh:
            result = ingest_file(wh, RawStore(raw_store_path(path)), source_key, str(location), options)
            if result.status == "failed":
                raise IngestFailed(f"ingesting {location} with {source_key} failed: {result.error}")
            yield wh, result
