"""Hostile output, second round: what evalhouse writes must not turn on whoever reads it.

* stored ``javascript:`` URLs never become links on the site (checked in Chromium);
* ``sql`` has a statement timeout and a memory limit, and a stopped reader lets a writer in;
* path parts and partition folders are bounded, so a long name never blocks a later command;
* disk full is a clear error with nothing half-written, and kill -9 leftovers are swept;
* a figure on a log scale survives zeros (the report of a harness log);
* CSV/TSV cells cannot start a spreadsheet formula, terminal escapes in data are shown inert,
  and a row cap off a terminal fails loudly;
* ``export-eee`` exits 0 when what EEE's layout can hold was written (the rest are warnings).

Each case is a fault of the suite (``figures.fault``), named by what was tried.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from eee_records import eee_record, write_tree
from typer.testing import CliRunner

from evalhouse.cli import app

runner = CliRunner()
PWNED = "window.__pwned"


def _cli(db: Path, *args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalhouse", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=kw.pop("timeout", 300),
        check=False,
        env={**os.environ, **(env or {})},
        **kw,
    )


# -- stored script links ----------------------------------------------------------------------

#: Where a source's URL reaches a page, each carrying a script that sets window.__pwned to its number.
SCRIPT_URLS = {
    "original_source_url": "javascript:window.__pwned=1",
    "source_data.url": " \tjavascript:window.__pwned=2",
    "source_organization_url": "JaVaScRiPt:window.__pwned=3",
}


def _script_link_records() -> list[dict]:
    """Three records, each with one hostile URL where the site shows it (audit chain, evidence)."""
    out = []
    for i, (where, url) in enumerate(SCRIPT_URLS.items()):
        rec = eee_record(f"org/m{i}", {"bench_a": 0.5}, evaluation_id=f"c/m{i}/1", release_date="2024-05-01")
        if where == "original_source_url":
            details = {"evalhouse.original_source": "the paper", "evalhouse.original_source_url": url}
            rec["source_metadata"]["additional_details"] = details
        elif where == "source_data.url":
            rec["evaluation_results"][0]["source_data"]["url"] = [url]
        else:
            rec["source_metadata"]["source_organization_url"] = url
        out.append(rec)
    return out


@pytest.fixture(scope="module")
def script_site(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site over a warehouse holding hostile URLs from EEE records and from a real model card
    whose second ``source.url`` was replaced by a script."""
    from evalhouse.config import raw_store_path
    from evalhouse.pipeline.ingest_file import ingest_file
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw_store import RawStore

    root = tmp_path_factory.mktemp("script-links")
    write_tree(root / "tree", _script_link_records(), "c")
    db = root / "w.duckdb"
    assert runner.invoke(app, ["--db", str(db), "import-eee", str(root / "tree"), "--skip-validation"]).exit_code == 0
    card = (shared / "formats/hf-model-cards/calme-2.3-phi3-4b.README.md").read_bytes()
    real = (
        b"url: https://huggingface.co/spaces/HuggingFaceH4/open_llm_leaderboard?query=MaziyarPanahi/calme-2.3-phi3-4b"
    )
    assert card.count(real) >= 2
    first = card.index(real) + len(real)
    hostile = card[:first] + card[first:].replace(real, b"url: javascript:window.__pwned=4", 1)
    (root / "README.md").write_bytes(hostile)
    with Warehouse.open(db) as wh:
        run = ingest_file(wh, RawStore(raw_store_path(db)), "model-cards", str(root / "README.md"))
        assert run.status in ("completed", "partial"), run
        stored = wh.scalar("SELECT count(*) FROM evaluation WHERE original_source_url LIKE 'javascript:%'")
        assert stored >= 1  # the card's hostile URL is in the warehouse, as evidence of what it said
    built = runner.invoke(app, ["--db", str(db), "site", str(root / "site"), "--no-analyses"])
    assert built.exit_code == 0, built.output
    return root / "site"


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.skip("no Chromium on this machine: 'make test' installs Debian's package (apt-get install chromium)")
    return found


def _pages_with(site: Path, needle: str) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if needle in p.read_text(encoding="utf-8"))


def test_no_stored_url_of_another_scheme_becomes_a_link(script_site: Path, figures) -> None:
    """The fast check, on the built HTML: every href the data gave is http(s) or a page of the site."""
    from bs4 import BeautifulSoup

    pages = _pages_with(script_site, PWNED)
    assert {p.parent.name for p in pages} >= {"audit", "models"}  # the URLs are shown (as text)
    bad = []
    for page in script_site.rglob("*.html"):
        for a in BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").find_all("a", href=True):
            href = "".join(ch for ch in a["href"] if ch not in "\t\n\r").strip().lower()
            if ":" in href.split("/")[0] and not href.startswith(("http://", "https://")):
                bad.append((page.name, a["href"]))
    figures.fault("hostile output", "stored javascript: URLs as hrefs", not bad, str(bad[:3]))
    assert not bad


def test_clicking_a_stored_script_url_runs_nothing_in_chromium(script_site: Path, figures) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra ('make test')")
    pages = _pages_with(script_site, PWNED)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            tried = 0
            for path in pages:
                page = browser.new_page()
                page.goto(path.as_uri())
                # what shows a hostile URL, and any link that carries one whatever it says
                shown = page.get_by_text(PWNED).or_(page.locator("a[href*='pwned' i]"))
                for i in range(shown.count()):
                    shown.nth(i).click()
                    tried += 1
                ran = page.evaluate(f"() => {PWNED} === undefined ? null : {PWNED}")
                figures.fault("hostile output", f"click stored script URLs on {path.parent.name}", ran is None)
                assert ran is None, f"{path.name}: a click ran the stored script {ran}"
                hrefs = page.locator("a").evaluate_all("els => els.map(e => e.href)")
                assert not [h for h in hrefs if h.lower().startswith("javascript:")], (path.name, hrefs)
                page.close()
            assert tried >= 4  # each hostile URL was on a page and clicked
        finally:
            browser.close()


# -- figures on a log scale -------------------------------------------------------------------


def _items(costs: list[float | None], excluded: list[str | None] | None = None):
    import pandas as pd

    n = len(costs)
    return pd.DataFrame(
        {
            "item_id": [f"q{i}" for i in range(n)],
            "benchmark": ["b"] * n,
            "marginal_cost": costs,
            "sigma2": [0.01 * (i + 1) for i in range(n)],
            "cheapest_axis": ["RL"] * n,
            "excluded": excluded or [None] * n,
        }
    )


@pytest.mark.parametrize(
    ("costs", "drawn"),
    [
        ([0.0, 0.0, 0.0], 0),
        ([0.0, -1.0, 2.5, float("inf"), None], 1),
        ([], 0),
        ([0.5, 3.0], 2),
    ],
)
def test_the_cost_noise_figure_survives_zeros_and_says_what_it_left_out(costs, drawn: int, figures) -> None:
    import io

    from evalhouse.analytics.items.report import cost_noise_figure

    fig = cost_noise_figure(_items(costs))
    fig.savefig(io.BytesIO(), format="png")  # matplotlib raised here on a log axis of no positive value
    (ax,) = fig.axes
    texts = " ".join(t.get_text() for t in ax.texts)
    points = sum(len(c.get_offsets()) for c in ax.collections)
    assert points == drawn
    assert ax.get_xscale() == ("log" if drawn else "linear")
    skipped = len(costs) - drawn
    if skipped and drawn:
        assert f"{skipped} item(s) with a zero, negative or missing value not shown" in texts
    if not drawn:
        assert "nothing to draw on a log scale" in texts
    figures.fault("hostile output", f"log-scale figure over {costs}", True)


def test_no_module_sets_a_log_scale_but_the_one_that_tolerates_zeros() -> None:
    import re

    import evalhouse

    root = Path(evalhouse.__file__).parent
    log_calls = re.compile(r"set_[xy]scale\b|\.loglog\(|\.semilog[xy]\(|LogNorm|xscale=|yscale=")
    users = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py") if log_calls.search(p.read_text()))
    assert users == ["analytics/report/log_scale.py"], users


def test_report_after_a_harness_log_is_written_with_a_note(shared: Path, tmp_path: Path, figures) -> None:
    """ingest inspect-log of a real Inspect log, then report --live: every item is excluded, so the
    cost figure has no positive cost to draw; the report is written and says so."""
    db = tmp_path / "w.duckdb"
    log = shared / "formats/inspect/data_arc_sonnet.json"
    ingested = _cli(db, "ingest", "inspect-log", str(log), "--skip-validation")
    assert ingested.returncode == 0, ingested.stderr[-2000:]
    report = tmp_path / "r.html"
    proc = _cli(db, "report", "--live", "--output", str(report))
    ok = proc.returncode == 0 and "Traceback" not in proc.stderr and report.is_file()
    figures.fault("hostile output", "report --live after ingest inspect-log", ok, proc.stderr[-300:])
    assert ok, proc.stderr[-3000:]
    page = report.read_text(encoding="utf-8")
    assert "Benchmark items" in page and "nothing to draw on a log scale" in page
