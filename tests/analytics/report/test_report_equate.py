"""The paper-004 report section: the Epoch hub on one scale, the ECI comparison, a task example."""

from __future__ import annotations

from pathlib import Path

import duckdb

from evalhouse.analytics.report.equate import TITLE, section
from evalhouse.analytics.runs import report
from evalhouse.warehouse.db import Warehouse


def test_section_on_a_loaded_warehouse_carries_its_fits(real_warehouse: Path) -> None:
    with Warehouse.open(real_warehouse, read_only=True) as wh:
        before = wh.con.execute("SELECT count(*) FROM analysis_run").fetchone()[0]
        s = section(wh.con)
        runs = wh.con.execute("SELECT count(*) FROM analysis_run").fetchone()[0] - before
    assert s.title == TITLE and s.status == "ok"
    html = "\n".join(s.blocks)
    assert sum("<img" in b for b in s.blocks) == 3  # theta by release date, curves, theta vs ECI
    assert "Capabilities Index" in html and "Spearman" in html
    assert "software-engineering agent" in html and "terminal_bench" in html  # the AA task example
    assert sorted(rec.kind for rec, _, _ in s.records) == ["capabilities_index", "equating", "task_comparison"]
    assert "Held-out RMSE" in html and "Epoch&#x27;s objective as published" in html and "90% intervals" in html
    assert runs == 0  # a section never writes: the run layer records


def test_report_records_every_fit_at_the_end(real_warehouse: Path, tmp_path: Path) -> None:
    from realwarehouse import copy_warehouse

    db = copy_warehouse(real_warehouse, tmp_path)
    outcome = report(tmp_path / "r.html", db=db, record_into=db)
    assert (tmp_path / "r.html").stat().st_size == outcome.payload["bytes"]
    con = duckdb.connect(str(db), read_only=True)
    kinds = dict(con.execute("SELECT kind, count(*) FROM analysis_run GROUP BY kind").fetchall())
    pins = {r[0] for r in con.execute("SELECT snapshot_id FROM analysis_run").fetchall()}
    con.close()
    assert kinds == {"equating": 1, "task_comparison": 1, "paper000_reproduction": 1, "capabilities_index": 1}
    assert len(pins) == 1 and next(iter(pins)).startswith("warehouse-state:")
    assert set(outcome.payload["analysis_ids"]) == {outcome.analysis_id, *outcome.payload["analysis_ids"]}


def test_section_on_an_empty_warehouse_explains(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "empty.duckdb") as wh:
        s = section(wh.con)
    assert s.status != "ok"
    assert "no epoch-benchmarks scores" in s.status and "no artificial-analysis records" in s.status
    assert "capabilities index" in s.status
    assert not any("<img" in b for b in s.blocks) and s.records == []


def test_section_on_something_that_is_not_a_warehouse() -> None:
    con = duckdb.connect()
    s = section(con)
    assert s.status != "ok" and "cannot be" in s.status
    con.close()
