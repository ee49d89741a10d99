"""A real warehouse for tests of what users see: the two pinned sources of ../shared loaded by the
real refresh over loopback (mirror built by ``mirror_from_shared``, served by ``httpserver``).

``build(shared, root)`` returns the warehouse path; its raw store is ``root/w.raw``. The session
fixtures ``real_warehouse`` and ``real_snapshot`` in ``conftest.py`` build one per test run, shared
by the xdist workers; tests that write to a warehouse copy it first (:func:`copy_warehouse`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from httpserver import serve

SOURCES = ["epoch-benchmarks", "artificial-analysis"]  # the two sources mirror_from_shared pins
LEGACY = "datasets/eee-datastore-legacy"


def build(shared: Path, root: Path) -> Path:
    from evalhouse.ingest.http import HttpClient
    from evalhouse.ingest.pinned import mirror_from_shared
    from evalhouse.pipeline import refresh as R
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw.store import RawStore

    mirror_from_shared(shared, root / "mirror" / "m")
    path = root / "w.duckdb"
    with Warehouse.open(path) as wh, serve(static_dir=root / "mirror") as srv:
        results = R.refresh(
            wh,
            RawStore(root / "w.raw"),
            SOURCES,
            R.RefreshOptions(mirror=f"{srv.url}/m", client_factory=lambda m: HttpClient(mirror=m, trust_env=False)),
        )
    statuses = {r.status for r in results}
    assert statuses <= {"completed", "partial"}, statuses
    return path


def snapshot(db: Path, out: Path) -> Path:
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw.store import RawStore
    from evalhouse.warehouse.snapshot.freeze import create_snapshot

    with Warehouse.open(db) as wh:
        create_snapshot(wh, out, RawStore(db.with_suffix(".raw")))
    return out


def import_legacy(shared: Path, db: Path) -> Path:
    """The legacy EEE datastore imported into ``db`` by the real command (``evalhouse import-eee
    --skip-validation``; exit 1 is its 160 HELM placeholders quarantined, the rest loaded)."""
    from clirunner import CliRunner

    from evalhouse.cli import app

    imported = CliRunner().invoke(app, ["--db", str(db), "import-eee", str(shared / LEGACY), "--skip-validation"])
    assert imported.exit_code in (0, 1), imported.output
    return db


def copy_warehouse(db: Path, target_dir: Path) -> Path:
    """A private copy (file + raw store) a test may write to."""
    target_dir.mkdir(parents=True, exist_ok=True)
    copy = target_dir / db.name
    shutil.copy2(db, copy)
    shutil.copytree(db.with_suffix(".raw"), copy.with_suffix(".raw"))
    return copy
