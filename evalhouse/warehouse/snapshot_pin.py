"""A snapshot for a command that must be pinned to one (the report, the explorer site).

``pin_snapshot`` freezes the live warehouse into ``<db stem>.snapshots/<UTC time>/`` beside it;
when the same state was frozen before and that folder still verifies, the new copy is removed and
the earlier folder is used, so running a report twice on an unchanged warehouse shares one id.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from evalhouse.common.staging import sweep
from evalhouse.config import raw_store_path
from evalhouse.errors import InputError
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore
from evalhouse.warehouse.snapshot import create_snapshot, verify_snapshot


def snapshots_dir(db_path: Path) -> Path:
    return db_path.with_name(f"{db_path.stem}.snapshots")


def pin_snapshot(wh: Warehouse, store: RawStore) -> tuple[Path, bool]:
    """The folder of a snapshot of ``wh``'s current state and whether it was created just now."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target, n = snapshots_dir(wh.path) / stamp, 1
    sweep(target, any_target=True)  # what killed freezes left, whatever second they started in
    while target.exists():  # a freeze earlier in the same second: this one gets the next name
        target, n = target.with_name(f"{stamp}-{n}"), n + 1
    created = create_snapshot(wh, target, store, name="pinned")
    earlier = created.previous_path
    if earlier and Path(earlier) != created.path and Path(earlier).is_dir() and verify_snapshot(earlier).ok:
        shutil.rmtree(created.path)
        return Path(earlier), False
    return created.path, True


def pin_warehouse(db_path: Path) -> tuple[Path, bool]:
    """:func:`pin_snapshot` of the warehouse file at ``db_path`` (taking its writer lock for the
    freeze); an error naming the path when there is no warehouse there."""
    if not db_path.exists():
        raise InputError(f"no warehouse at {db_path}: give --db, --snapshot DIR, or load data first")
    with Warehouse.open(db_path) as wh:
        return pin_snapshot(wh, RawStore(raw_store_path(db_path)))
