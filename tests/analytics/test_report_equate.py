"""The paper-004 report section: the Epoch hub on one scale, the ECI comparison, a task example."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from evalhouse.analytics.report_equate import TITLE, section
from evalhouse.warehouse.db import Warehouse


@pytest.fixture(scope="module")
def loaded_db(tmp_path_factory, epoch_dir: Path, aa_csv: Path) -> Path:
    from evalhouse.ingest.pinned import epoch_zip
    from evalhouse.pipeline.ingest_file import ingest_file
    from evalhouse.warehouse.raw_store import RawStore

    root = tmp_path_factory.mktemp("report")
    path = root / "w.duckdb"
    zip_path = root / "benchmark_data.zip"
    zip_path.write_bytes(epoch_zip(epoch_dir))
    with Warehouse.open(path) as wh:
        store = RawStore(root / "raw")
        assert ingest_file(wh, store, "epoch-benchmarks", str(zip_path)).status in ("completed", "partial")
        assert ingest_file(wh, store, "artificial-analysis", str(aa_csv)).status == "completed"
    return path


def test_section_on_a_loaded_warehouse_records_its_fits(loaded_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.duckdb"
    shutil.copy(loaded_db, db)
    with Warehouse.open(db) as wh:
        s = section(wh.con, wh)
        kinds = dict(wh.con.execute("SELECT kind, count(*) FROM analysis_run GROUP BY kind").fetchall())
    assert s.title == TITLE and s.status == "ok"
    html = "\n".join(s.blocks)
    assert sum("<img" in b for b in s.blocks) == 3  # theta by release date, curves, theta vs ECI
    assert "Capabilities Index" in html and "Spearman" in html
    assert "software-engineering agent" in html and "terminal_bench" in html  # the AA task example
    assert "recorded as analysis" in html
    assert kinds == {"equating": 1, "task_comparison": 1}


def test_section_read_only_records_nothing(loaded_db: Path) -> None:
    with Warehouse.open(loaded_db, read_only=True) as wh:
        s = section(wh.con, None)
        runs = wh.con.execute("SELECT count(*) FROM analysis_run").fetchone()[0]
    assert s.status == "ok" and runs == 0
    assert "recorded as analysis" not in "\n".join(s.blocks)


def test_section_on_an_empty_warehouse_explains(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "empty.duckdb") as wh:
        s = section(wh.con, wh)
    assert s.status != "ok"
    assert "no epoch-benchmarks scores" in s.status and "no artificial-analysis records" in s.status
    assert not any("<img" in b for b in s.blocks)


def test_section_on_something_that_is_not_a_warehouse() -> None:
    con = duckdb.connect()
    s = section(con, None)
    assert s.status != "ok" and "cannot be" in s.status
    con.close()
