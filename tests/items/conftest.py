"""Fixtures of the item-level tests: a warehouse with the ingest entry point, and one SparkSession."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load.ledger import RunResult
from evalhouse.warehouse.raw.store import RawStore


class Ingest:
    def __init__(self, wh: Warehouse, store: RawStore) -> None:
        self.wh, self.store = wh, store

    def __call__(self, key: str, path: Path | str) -> RunResult:
        return ingest_file(self.wh, self.store, key, str(path))

    def rows(self, sql: str, params: list | None = None) -> list[tuple]:
        return self.wh.con.execute(sql, params or []).fetchall()


@pytest.fixture
def ingest(tmp_path: Path) -> Iterator[Ingest]:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        yield Ingest(wh, RawStore(tmp_path / "raw"))


@pytest.fixture(scope="session")
def formats(shared: Path) -> Path:
    return shared / "formats"


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark", reason="the spark extra is not installed (pip install -e '.[spark]')")
    from evalhouse.analytics.items.engine import local_spark

    session = local_spark("evalhouse-tests")
    yield session
    session.stop()
