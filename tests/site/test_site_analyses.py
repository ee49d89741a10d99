"""The analyses of a site are read back as recorded for its snapshot, not fitted again.

A warehouse with item responses ('evalhouse simulate-panel': the item audit is a real fit that
takes seconds) is frozen; 'evalhouse report --snapshot' fits and records the report's sections;
'evalhouse site --snapshot' then shows them without a single fit (fits are counted: every fit
makes exactly one AnalysisRecord), with the figures the report drew, and the page's figures load
in Chromium. A section whose record is gone is fitted again, and recorded for next time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
from clirunner import CliRunner
from sitebrowser import shot

from evalhouse.cli import app
from evalhouse.schema.analysis import AnalysisRecord

runner = CliRunner()


def _run(*args: str) -> dict:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kind of every fit made while the test runs (one AnalysisRecord per fit)."""
    made: list[str] = []
    original = AnalysisRecord.__init__

    def counting(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        made.append(self.kind)

    monkeypatch.setattr(AnalysisRecord, "__init__", counting)
    return made


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("panel")
    db = root / "w.duckdb"
    _run("--db", str(db), "simulate-panel", "--items", "60")
    result = runner.invoke(app, ["--db", str(db), "snapshot", "create", str(root / "snap")])
    assert result.exit_code == 0, result.output
    return db, root / "snap"


def _sections(con: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    rows = con.execute("SELECT section, blocks, analysis_ids FROM analysis_section").fetchall()
    return {r[0]: (json.loads(r[1]), json.loads(r[2])) for r in rows}


def test_a_site_of_a_recorded_snapshot_fits_nothing(panel, fits, tmp_path: Path, browser) -> None:
    db, snap = panel
    report = _run("--db", str(db), "report", "--snapshot", str(snap), "--output", str(tmp_path / "r.html"))
    assert fits == ["item_audit"] and report["fitted"] == ["items"]
    con = duckdb.connect(str(db), read_only=True)
    recorded = _sections(con)
    runs = con.execute("SELECT analysis_id, snapshot_id, created_at FROM analysis_run").fetchall()
    con.close()
    (blocks, ids) = recorded["items"]
    assert ids == [runs[0][0]] and runs[0][1] == report["snapshot_id"]

    fits.clear()
    site = _run("--db", str(db), "site", "--snapshot", str(snap), str(tmp_path / "site"))
    assert fits == []  # nothing refitted
    by_title = {s["title"]: s for s in site["analyses"]}
    items = next(s for t, s in by_title.items() if t.startswith("Benchmark items"))
    assert items["reused"] and items["figures"] == 2
    page = (tmp_path / "site" / "analyses.html").read_text(encoding="utf-8")
    assert all(block in page for block in blocks)  # the figures the report drew, byte for byte
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT analysis_id, snapshot_id, created_at FROM analysis_run").fetchall() == runs
    con.close()

    view = browser.new_page(viewport={"width": 1366, "height": 900})
    view.goto((tmp_path / "site" / "analyses.html").as_uri())
    images = view.locator("section.analysis figure img")
    assert images.count() == 2
    for i in range(images.count()):
        assert images.nth(i).evaluate("img => img.complete && img.naturalWidth > 100")
    assert view.evaluate("document.documentElement.scrollWidth") <= 1366
    shot(view, "analyses")


def test_only_a_missing_section_is_fitted_and_recorded_for_next_time(panel, fits, tmp_path: Path) -> None:
    db, snap = panel
    _run("--db", str(db), "report", "--snapshot", str(snap), "--output", str(tmp_path / "r.html"))
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM analysis_section")
    fits.clear()
    first = _run("--db", str(db), "site", "--snapshot", str(snap), str(tmp_path / "site"))
    assert fits == ["item_audit"] and not any(s["reused"] for s in first["analyses"])
    fits.clear()
    again = _run("--db", str(db), "site", "--snapshot", str(snap), str(tmp_path / "site"))
    assert fits == [] and [s["reused"] for s in again["analyses"]] == [s["figures"] > 0 for s in again["analyses"]]
    # --no-record leaves the warehouse as it was, and a section whose fits are gone is fitted again
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM analysis_run")
    fits.clear()
    _run("--db", str(db), "site", "--snapshot", str(snap), str(tmp_path / "site"), "--no-record")
    assert fits == ["item_audit"]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM analysis_run").fetchone() == (0,)


def test_the_site_says_which_sections_it_reused(panel, tmp_path: Path) -> None:
    db, snap = panel
    _run("--db", str(db), "report", "--snapshot", str(snap), "--output", str(tmp_path / "r.html"))
    result = runner.invoke(app, ["--db", str(db), "site", "--snapshot", str(snap), str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if "Benchmark items" in x)
    assert re.search(r"ok \(2 figures; as recorded, nothing refitted\)$", line), line
