"""Freezing the live warehouse for a report or a site: one folder per state, named for its second."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalhouse.warehouse import snapshot_pin
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore
from evalhouse.warehouse.snapshot import verify_snapshot


class _OneSecond(datetime):
    """A clock stopped in one second: every freeze starts in it."""

    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 12, 4, 23, 0, 0, tzinfo=UTC)


def test_a_second_freeze_in_the_same_second_reuses_the_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder the first freeze took is not overwritten nor refused: the second is written
    beside it, found to hold the same state, and removed for the first."""
    monkeypatch.setattr(snapshot_pin, "datetime", _OneSecond)
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        store = RawStore(tmp_path / "w.raw")
        first, created_first = snapshot_pin.pin_snapshot(wh, store)
        second, created_second = snapshot_pin.pin_snapshot(wh, store)
    assert (created_first, created_second) == (True, False)
    assert second == first and first.name == "20261204T230000Z"
    assert verify_snapshot(first).ok
    assert [p.name for p in snapshot_pin.snapshots_dir(db).iterdir()] == [first.name]
