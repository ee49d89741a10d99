"""A snapshot for a command that must be pinned to one (the report, the explorer site).

``pin_snapshot`` freezes the live warehouse into ``<db stem>.snapshots/<UTC time>/`` beside it.
Before writing anything it digests the state a snapshot would hold (every table the snapshot
freezes, row by row, with the versions its manifest names: :func:`state_key`); when a pin of the
same state is recorded (``_snapshot_pin``) and its folder still verifies, that folder is used
and nothing is written. So a report or a site run twice on an unchanged warehouse shares one
snapshot and one id, and recording the analyses of a report (tables a snapshot leaves out, and
the caches :func:`state_key` leaves out) changes nothing.

Pins are pruned by one rule: after each pin, the ``keep`` pins used most recently stay and every
older pin folder in ``<db>.snapshots/`` is removed. A pin folder is one whose manifest is named
``pinned`` (only ``pin_snapshot`` names them so); a snapshot made with ``evalhouse snapshot
create``, or any folder elsewhere, is never touched. The ``snapshot`` register keeps its row of a
pruned snapshot (the analyses recorded on it still cite its id).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from evalhouse.common.resources import read_sql
from evalhouse.common.staging import sweep
from evalhouse.config import raw_store_path
from evalhouse.errors import InputError
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot.format import canonical_json
from evalhouse.warehouse.snapshot.freeze import create_snapshot, relations, warehouse_facts
from evalhouse.warehouse.snapshot.manifest import SnapshotError
from evalhouse.warehouse.snapshot.verify import load_manifest, verify_snapshot
from evalhouse.warehouse.state import SKIPPED_TABLES, tables_digest

PIN_NAME = "pinned"
#: How many pins ``keep`` leaves by default: the newest few, enough to compare a site with the
#: one before it, without a 34 MB folder per run piling up.
KEEP_DEFAULT = 5


@dataclass
class Pin:
    """The pinned folder, whether it was written just now, and the old pins removed after it."""

    path: Path
    created: bool
    pruned: list[Path] = field(default_factory=list)


def snapshots_dir(db_path: Path) -> Path:
    return db_path.with_name(f"{db_path.stem}.snapshots")


def _sql(name: str) -> str:
    return read_sql("evalhouse.warehouse", name)


def _new_folder(root: Path) -> Path:
    """``root/<UTC time>``, or ``<UTC time>-2``, ``-3``… when a pin of the same second is there."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target, n = root / stamp, 1
    while target.exists():
        n += 1
        target = root / f"{stamp}-{n}"
    return target


def state_key(wh: Warehouse) -> str:
    """sha256 of what a snapshot of ``wh`` would hold: the row digests of every table it freezes
    and the facts its manifest states (versions, migrations, registry, runs, excluded tables).

    Tables of results about the state rather than the state are left out, as the warehouse-state
    id leaves them out (:data:`evalhouse.warehouse.state.SKIPPED_TABLES`: the embeddings and texts
    a report's task comparison caches, validation results): recording a report must not make the
    site that follows it freeze the warehouse again, and find no analyses for the new id."""
    tables = [rel.name for rel in relations(wh.con) if rel.kind == "table" and rel.name not in SKIPPED_TABLES]
    digest = hashlib.sha256(canonical_json(warehouse_facts(wh)))
    digest.update(tables_digest(wh.con, tables).encode())
    return digest.hexdigest()


def _reusable(path: str | None, snapshot_id: str | None) -> bool:
    if not path or not Path(path).is_dir():
        return False
    try:
        report = verify_snapshot(path)
    except SnapshotError:
        return False
    return report.ok and (snapshot_id is None or report.snapshot_id == snapshot_id)


def pin_snapshot(wh: Warehouse, store: RawStore, *, keep: int | None = KEEP_DEFAULT) -> Pin:
    """Pin ``wh``'s current state to a snapshot folder; prune to the ``keep`` most recently used
    pins (``None``: prune nothing)."""
    key = state_key(wh)
    found = wh.con.execute(_sql("snapshot_pin_find.sql"), [key]).fetchall()
    if found and _reusable(found[0][1], found[0][0]):
        folder, created, snapshot_id = Path(found[0][1]), False, found[0][0]
    else:
        target = _new_folder(snapshots_dir(wh.path))
        sweep(target, any_target=True)  # what killed freezes left, whatever second they started in
        made = create_snapshot(wh, target, store, name=PIN_NAME)
        folder, created, snapshot_id = made.path, True, made.snapshot_id
        earlier = made.previous_path
        if earlier and Path(earlier) != made.path and _reusable(earlier, snapshot_id):
            shutil.rmtree(made.path)  # the same state was frozen before: keep that folder, and say so
            folder, created = Path(earlier), False
            with wh.transaction() as con:
                con.execute(_sql("snapshot_repoint.sql"), [str(folder), snapshot_id])
    now = datetime.now(UTC).replace(tzinfo=None)
    with wh.transaction() as con:
        con.execute(_sql("snapshot_pin_record.sql"), [key, snapshot_id, str(folder), now, now])
    pruned = prune_pins(wh, keep, current=folder) if keep is not None else []
    return Pin(folder, created, pruned)


def prune_pins(wh: Warehouse, keep: int, *, current: Path | None = None) -> list[Path]:
    """Remove the pin folders of ``<db>.snapshots/`` beyond the ``keep`` most recently used
    (``current`` always stays); returns the folders removed."""
    if keep < 1:
        raise InputError(f"--keep must be at least 1 (the pin just made or reused stays), not {keep}")
    root = snapshots_dir(wh.path)
    used = {Path(p).resolve(): t for p, t in wh.con.execute(_sql("snapshot_pins.sql")).fetchall()}
    pins: list[tuple[datetime, Path]] = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if folder.name.startswith(".") or not folder.is_dir():
            continue
        try:
            manifest, _ = load_manifest(folder)
        except SnapshotError:
            continue  # not a snapshot, or a damaged one: a person should look at it, not a pruner
        if manifest.get("name") != PIN_NAME:
            continue
        made = datetime.fromisoformat(manifest["created_at"].replace("Z", "+00:00")).replace(tzinfo=None)
        pins.append((used.get(folder.resolve(), made), folder))
    pins.sort(key=lambda p: (p[0], p[1].name), reverse=True)
    stays = {current.resolve()} if current is not None else set()
    for _, folder in pins:
        if len(stays) >= keep:
            break
        stays.add(folder.resolve())
    removed = [folder for _, folder in pins if folder.resolve() not in stays]
    for folder in removed:
        shutil.rmtree(folder)
    if removed:
        with wh.transaction() as con:
            con.execute(_sql("snapshot_pin_forget.sql"), [json.dumps([str(f) for f in removed])])
    return removed


def pin_warehouse(db_path: Path, *, keep: int | None = KEEP_DEFAULT) -> Pin:
    """:func:`pin_snapshot` of the warehouse file at ``db_path`` (taking its writer lock for the
    freeze); an error naming the path when there is no warehouse there."""
    if not db_path.exists():
        raise InputError(f"no warehouse at {db_path}: give --db, --snapshot DIR, or load data first")
    if keep is not None and keep < 1:
        raise InputError(f"--keep must be at least 1 (the pin just made or reused stays), not {keep}")
    with Warehouse.open(db_path) as wh:
        return pin_snapshot(wh, RawStore(raw_store_path(db_path)), keep=keep)
