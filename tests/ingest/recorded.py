"""Replaying a source's recorded real payloads through the real refresh, over loopback.

``mirror_of(key, out, shared)`` writes the replay mirror of one verified source from the files its
``verified_on`` recording names (``tests/fixtures`` always; ``../shared`` ones only when the folder
is there), so a test runs on the fixtures alone and on everything when the pinned datasets are
present. ``refresh_from(mirror, keys, tmp_path)`` serves that tree from a real HTTP server on
127.0.0.1 and runs ``evalhouse.pipeline.refresh`` against it with a real warehouse and raw store.

``accounted(result)`` is what one run did with the cells it read: loaded + quarantined + duplicate
(a test compares it with the cells it counted in the payload itself, never with the parser's count).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from httpserver import serve

from evalhouse.ingest.catalog import get_source
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import MirrorKey, build_mirror
from evalhouse.ingest.recordings import DEFAULT_FIXTURES, Roots
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load import ledger
from evalhouse.warehouse.raw.store import RawStore

REPO = Path(__file__).resolve().parents[2]


def pinned() -> Path | None:
    """The pinned datasets folder (``../shared``, or ``$EVALHOUSE_SHARED``) when it is there."""
    path = Path(os.environ.get("EVALHOUSE_SHARED", REPO.parent / "shared"))
    return path if (path / "datasets").is_dir() else None


FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 5.0, "trust_env": False, "max_retries": 0}


def replayed(key: str, shared: Path | None) -> dict[MirrorKey, bytes]:
    """``{live URL (or (URL, POST body)): bytes}`` of the recorded files present."""
    recording = get_source(key).SOURCE.verified_on
    assert recording is not None, f"{key} has no recorded real payload"
    roots = Roots(fixtures=DEFAULT_FIXTURES, shared=shared or Path("/nonexistent"))
    out: dict[MirrorKey, bytes] = {}
    for entry in recording.replay:
        path = roots.path(entry[1])
        if path.is_file():
            out[entry[0] if len(entry) == 2 else (entry[0], entry[2].encode())] = path.read_bytes()
    return out


def mirror_of(key: str, out: Path, shared: Path | None) -> dict[MirrorKey, bytes]:
    payloads = replayed(key, shared)
    build_mirror(out, payloads)
    return payloads


@dataclass
class Night:
    db: Path
    results: dict[str, ledger.RunResult]


def refresh_from(mirror: Path, keys: list[str], tmp_path: Path, *, env: dict[str, str] | None = None) -> Night:
    db = tmp_path / "w.duckdb"

    def client(m: str | None) -> HttpClient:
        return HttpClient(mirror=m, **FAST)

    with serve(static_dir=mirror) as srv, Warehouse.open(db) as wh:
        options = R.RefreshOptions(mirror=srv.url, client_factory=client, env=env or {})
        results = R.refresh(wh, RawStore(tmp_path / "raw"), keys, options)
    return Night(db, {r.source_key: r for r in results})


def accounted(result: ledger.RunResult) -> int:
    """Cells the run read and put somewhere: loaded, quarantined (per cell) or duplicate."""
    r = result.report
    return (
        r.scores_loaded
        + r.scores_quarantined
        + r.scores_in_duplicates
        + r.scores_in_quarantined_records
        + r.parse_failures
    )
