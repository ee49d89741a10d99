"""The explorer in a real browser: Playwright driving Debian's Chromium over the built files.

The site is built by the real command from a copy of the real warehouse (Epoch + AA through the
real refresh over loopback) after 'evalhouse validate --docs', so it pins its own snapshot, runs
the analyses and links the Data Docs. The test opens the index, searches a model, follows a score
to its audit chain and checks every number shown against the warehouse; it screenshots each
page kind into $EVALHOUSE_TEST_ARTIFACTS/site-screenshots/ (outside the repository) and reads the
core content again with JavaScript off.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import duckdb
import pytest
from realwarehouse import copy_warehouse
from typer.testing import CliRunner

from evalhouse.cli import app
from evalhouse.site.build import _num

# kept after the run, outside the repository ($EVALHOUSE_TEST_ARTIFACTS, else the temporary folder)
SHOTS = Path(os.environ.get("EVALHOUSE_TEST_ARTIFACTS", Path(tempfile.gettempdir()) / "evalhouse-test-artifacts"))
SHOTS = SHOTS / "site-screenshots"
runner = CliRunner()


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on this machine: 'make test' installs Debian's package (apt-get install chromium)")


@pytest.fixture(scope="module")
def built(real_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("site")
    db = copy_warehouse(real_warehouse, root / "db")
    validated = runner.invoke(app, ["--db", str(db), "validate", "--docs"])
    assert validated.exit_code == 0, validated.output
    result = runner.invoke(app, ["--db", str(db), "site", str(root / "site"), "--json"])
    assert result.exit_code == 0, result.output
    return db, root / "site"


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra ('make test')")
    executable = chromium()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield b
        b.close()


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)
    assert (SHOTS / f"{name}.png").stat().st_size > 10_000


def _one(con: duckdb.DuckDBPyConnection, sql: str, params: list) -> tuple:
    rows = con.execute(sql, params).fetchall()
    assert len(rows) == 1, (sql, params, rows)
    return rows[0]


def test_search_a_model_follow_a_score_to_its_audit_and_check_the_numbers(built, browser) -> None:
    db, site = built
    con = duckdb.connect(str(db), read_only=True)
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.goto((site / "index.html").as_uri())
    n_models = con.execute(
        "SELECT count(DISTINCT mc.base_model_id) FROM v_cell_candidates JOIN model_config mc USING (config_id)"
    ).fetchone()[0]
    assert page.locator("#model-list tbody tr").count() == n_models
    _shot(page, "index")

    page.fill("#q", "gpt-4o")
    visible = page.locator("#model-list tbody tr:visible")
    assert 0 < visible.count() < n_models
    for text in visible.all_inner_texts():
        assert "gpt-4o" in text.lower() or "4o" in text.lower()
    _shot(page, "index-search")
    page.locator("#model-list tbody tr:visible a", has_text=re.compile(r"^openai/gpt-4o$")).click()
    assert page.locator("h1.model-title").inner_text() == "openai/gpt-4o"
    _shot(page, "model")

    # every score on the page is the warehouse's current score of that base model, same value
    expected = dict(
        con.execute(
            "SELECT c.score_id, c.value FROM v_cell_candidates c JOIN model_config mc USING (config_id)"
            " WHERE mc.base_model_id = 'openai/gpt-4o'"
        ).fetchall()
    )
    rows = page.locator("#scores tbody tr")
    shown = {int(r.get_attribute("data-score-id")): r for r in rows.all()}
    assert set(shown) == set(expected)
    link = page.locator("#scores tbody tr a.score").first
    score_id = int(page.locator("#scores tbody tr").first.get_attribute("data-score-id"))
    assert float(link.get_attribute("data-value")) == expected[score_id]
    assert link.inner_text() == _num(expected[score_id])

    link.click()
    assert page.url.endswith(f"#score-{score_id}")
    chain = page.locator(f"#score-{score_id}")
    assert chain.is_visible()
    value, raw_value, locator, sha, url, steps = _one(
        con,
        "SELECT s.value, s.raw_value, s.locator, p.raw_sha256, p.url, s.canonical_steps::VARCHAR"
        " FROM score s JOIN v_provenance p USING (score_id) WHERE s.score_id = ?",
        [score_id],
    )
    assert float(chain.locator(".value").get_attribute("data-value")) == value
    assert float(chain.locator(".raw-value").get_attribute("data-value")) == raw_value
    assert chain.locator(".locator").inner_text() == locator
    assert chain.locator(".score-id").inner_text() == str(score_id)
    assert page.locator("code.sha256").inner_text() == sha
    assert page.locator(".url a").inner_text() == url
    assert chain.locator(".steps li").count() == len(json.loads(steps))
    _shot(page, "audit")
    con.close()


def test_benchmark_page_lists_every_model_and_sorts(built, browser) -> None:
    db, site = built
    con = duckdb.connect(str(db), read_only=True)
    bench, metric = con.execute(
        "SELECT benchmark_id, metric_id FROM v_benchmark_metric WHERE benchmark_id = 'gpqa_diamond'"
    ).fetchone()
    cells = con.execute(
        "SELECT config_id, value FROM v_scores_canonical WHERE benchmark_id = ? AND metric_id = ?", [bench, metric]
    ).fetchall()
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.goto((site / "index.html").as_uri())
    page.fill("#q", "gpqa")
    page.locator("#benchmark-list tbody tr:visible a", has_text=re.compile(r"^gpqa_diamond$")).click()
    table = page.locator("#cells tbody tr")
    assert table.count() == len(cells)
    values = [float(v) for v in page.locator("#cells a.score").evaluate_all("els => els.map(e => e.dataset.value)")]
    assert sorted(values) == sorted(v for _, v in cells)
    assert values == sorted(values, reverse=True)  # best first (higher is better on accuracy)
    page.locator("#cells thead th", has_text="value").click()  # sort ascending
    ascending = [float(v) for v in page.locator("#cells a.score").evaluate_all("els => els.map(e => e.dataset.value)")]
    assert ascending == sorted(values)
    _shot(page, "benchmark")
    con.close()


def test_disagreeing_cells_are_highlighted(built, browser) -> None:
    db, site = built
    con = duckdb.connect(str(db), read_only=True)
    base, n = con.execute(
        "SELECT mc.base_model_id, count(*) FROM v_cell_candidates c JOIN model_config mc USING (config_id)"
        " JOIN v_scores_canonical v USING (cell_id) WHERE v.disagreement GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1"
    ).fetchone()
    con.close()
    page = browser.new_page()
    page.goto((site / "index.html").as_uri())
    page.locator("#model-list a", has_text=re.compile(f"^{re.escape(base)}$")).click()
    assert page.locator("#scores tbody tr.disagree").count() == n
    assert page.locator("#scores tbody tr.disagree .flag.conflict").count() == n


def test_analyses_figures_and_data_docs_are_linked(built, browser) -> None:
    _, site = built
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.goto((site / "index.html").as_uri())
    page.click("nav >> text=Analyses")
    sections = page.locator("section.analysis")
    assert sections.count() >= 2
    for i in range(sections.count()):
        if sections.nth(i).locator(".status").count() == 0:  # the section ran: its figures are there
            assert sections.nth(i).locator("figure img").count() >= 1
    images = page.locator("figure img")
    assert images.count() >= 4
    for i in range(images.count()):
        assert images.nth(i).evaluate("img => img.complete && img.naturalWidth > 100")
    _shot(page, "analyses")
    suites = page.locator("#validations tbody tr")
    assert suites.count() >= 6  # referential integrity, orphans, bounds, uniqueness, coverage, release dates
    link = page.locator("#validations a", has_text="uniqueness.scores")
    link.click()
    assert "Expectation Suite: uniqueness.scores" in page.inner_text("body")
    assert "Succeeded" in page.inner_text("body")
    _shot(page, "data-docs-validation")
    page.go_back()
    page.click("nav >> text=Data Docs")
    assert page.url.endswith("data-docs/index.html")
    assert page.title() == "Data Docs created by Great Expectations"


def test_core_content_works_with_javascript_off(built, browser) -> None:
    _, site = built
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto((site / "index.html").as_uri())
    rows = page.locator("#model-list tbody tr")
    assert rows.count() == page.locator("#model-list tbody tr:visible").count() > 100
    assert page.locator("noscript").count() == 1
    page.locator("#model-list a", has_text=re.compile(r"^openai/gpt-4o$")).click()
    assert page.locator("#scores tbody tr:visible").count() > 10
    page.locator("#scores a.score").first.click()
    assert page.locator("code.sha256").inner_text()
    _shot(page, "audit-no-js")
    context.close()
