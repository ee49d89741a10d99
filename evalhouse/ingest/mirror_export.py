"""Write a mirror tree from the raw store: record a night once, replay it forever."""

from __future__ import annotations

from pathlib import Path

from evalhouse.ingest.mirror import MirrorKey, build_mirror
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore


def export_mirror(wh: Warehouse, store: RawStore, directory: Path) -> dict[MirrorKey, Path]:
    """The newest payload of every http(s) URL any refresh fetched (of every body POSTed to it),
    laid out for ``--mirror``."""
    rows = wh.con.execute(
        "SELECT url, json_extract_string(request_params, '$.body') AS body, arg_max(sha256, retrieved_at)"
        " FROM raw_snapshot WHERE url LIKE 'http%' GROUP BY url, body ORDER BY url, body"
    ).fetchall()
    return build_mirror(
        directory, {(url if body is None else (url, body.encode("utf-8"))): store.get(sha) for url, body, sha in rows}
    )
