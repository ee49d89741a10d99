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


#: The tests' JVM: Spark's few small queries here end before the JVM's optimising compiler (C2) and
#: its parallel collector pay for the CPU they burn. The client compiler alone and the serial
#: collector took the Spark test from 36-46 to 20-25 CPU s of the machine (and 22-29 s to 16-21 s
#: wall; docs/development.md). A user's local session keeps the JVM's defaults.
TEST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark", reason="the spark extra is not installed (pip install -e '.[spark]')")
    from evalhouse.analytics.items.engine import local_spark

    session = local_spark("evalhouse-tests", conf={"spark.driver.extraJavaOptions": TEST_JVM})
    yield session
    session.stop()
