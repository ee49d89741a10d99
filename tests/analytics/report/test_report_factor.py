"""The report's factor section: paper 000's figures from a warehouse holding the AA snapshot."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from evalhouse.analytics.data.aa import aa_frames
from evalhouse.analytics.kept_fits import fit_key
from evalhouse.analytics.report.factor import NO_DATA, TITLE, section
from evalhouse.config import raw_store_path
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot.freeze import create_snapshot
from evalhouse.warehouse.snapshot.reader import open_snapshot


@pytest.fixture(scope="module")
def aa_db(aa_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("report") / "aa.duckdb"
    with Warehouse.open(db) as wh:
        result = ingest_file(wh, RawStore(raw_store_path(db)), "artificial-analysis", str(aa_csv))
    assert result.status == "completed", result.error
    return db


def test_section_draws_the_paper000_figures_and_carries_the_fit(aa_db: Path) -> None:
    with Warehouse.open(aa_db, read_only=True) as wh:
        s = section(wh.con)
    assert s.title == TITLE and s.status == "ok"
    figures = [b for b in s.blocks if "<img" in b]
    assert len(figures) >= 4
    captions = " ".join(figures)
    for text in ("parallel analysis", "release date", "Table 3", "dMSE"):
        assert text in captions
    tables = [b for b in s.blocks if "<table" in b]
    assert len(tables) == 2 and "grid_retained" in tables[0] and "artefact" in tables[0]
    [(rec, results, _)] = s.records
    assert rec.estimator == "evalhouse.analytics.reproduce.paper000.reproduce_paper000" and rec.run_id in s.intro
    assert rec.snapshot_id.startswith("warehouse-state:") and rec.snapshot_id in s.intro
    assert len(results["quantity"]) == 44 + 8  # the paper's 44, and H4 against each rung and over split seeds


def test_section_on_a_snapshot_cites_its_id(aa_db: Path, tmp_path: Path) -> None:
    with Warehouse.open(aa_db) as wh:
        created = create_snapshot(wh, tmp_path / "snap", RawStore(raw_store_path(aa_db)))
    con = open_snapshot(created.path)
    try:
        s = section(con)
    finally:
        con.close()
    assert s.status == "ok" and sum("<img" in b for b in s.blocks) >= 4
    assert created.snapshot_id in s.intro and s.records[0][0].snapshot_id == created.snapshot_id
    # the snapshot holds the warehouse's rows: its fit is the warehouse's, kept under one key
    con = open_snapshot(created.path)
    try:
        from_snapshot = aa_frames(con)
    finally:
        con.close()
    with Warehouse.open(aa_db, read_only=True) as wh:
        from_warehouse = aa_frames(wh.con)
    assert fit_key("paper000", from_snapshot, {}) == fit_key("paper000", from_warehouse, {})


def test_section_without_aa_data_explains_how_to_load_it(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "empty.duckdb") as wh:
        s = section(wh.con)
    assert s.status == NO_DATA and "evalhouse ingest artificial-analysis" in s.status
    assert s.blocks == []
    # A connection without the warehouse's tables at all is also a status, not an exception.
    s = section(duckdb.connect())
    assert s.status != "ok" and s.blocks == []
