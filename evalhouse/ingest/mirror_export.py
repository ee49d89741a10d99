"""Write a mirror tree from the raw store: record a night once, replay it forever."""

from __future__ import annotations

from pathlib import Path

from evalhouse.ingest.mirror import build_mirror
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore


def export_mirror(wh: Warehouse, store: RawStore, directory: Path) -> dict[str, Path]:
    """The newest payload of every http(s) URL any refresh fetched, laid out for ``--mirror``."""
    rows = wh.con.execute(
        "SELECT url, arg_max(sha256, retrieved_at) FROM raw_snapshot WHERE url LIKE 'http%' GROUP BY url ORDER BY url"
    ).fetchall()
    return build_mirror(directory, {url: store.get(sha) for url, sha in rows})
