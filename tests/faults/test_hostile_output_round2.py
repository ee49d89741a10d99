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

import json
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


# -- the bounds of a person's SQL ------------------------------------------------------------

ENDLESS = "SELECT count(*) FROM range(10000000000000)"


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sql-bounds")
    records = [eee_record(f"org/m{i}", {"bench_a": 0.1 * i}, evaluation_id=f"c/m{i}/1") for i in range(1, 4)]
    write_tree(root / "tree", records, "c")
    db = root / "w.duckdb"
    assert runner.invoke(app, ["--db", str(db), "import-eee", str(root / "tree"), "--skip-validation"]).exit_code == 0
    assert runner.invoke(app, ["--db", str(db), "snapshot", "create", str(root / "snap")]).exit_code == 0
    write_tree(root / "later", [eee_record("org/late", {"bench_a": 0.3}, evaluation_id="d/late/1")], "d")
    return db


def _holds(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (Linux /proc)."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        return any(os.path.realpath(fd) == str(path.resolve()) for fd in fds.iterdir())
    except OSError:
        return False


def test_a_runaway_query_is_stopped_at_its_timeout_and_a_writer_then_proceeds(small_db: Path, figures) -> None:
    """A query that would run for days holds the warehouse open; an import waiting for it gets in
    once the timeout stops the query (EVALHOUSE_SQL_TIMEOUT=3) and its connection closes."""
    import time

    reader = subprocess.Popen(
        [sys.executable, "-m", "evalhouse", "--db", str(small_db), "sql", ENDLESS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "EVALHOUSE_SQL_TIMEOUT": "3"},
    )
    try:
        deadline = time.monotonic() + 60
        while not _holds(reader.pid, small_db) and time.monotonic() < deadline and reader.poll() is None:
            time.sleep(0.05)
        assert _holds(reader.pid, small_db), "the query never opened the warehouse"
        start = time.monotonic()
        writer = _cli(small_db, "--wait", "20", "import-eee", str(small_db.parent / "later"), "--skip-validation")
        waited = time.monotonic() - start
        _, err = reader.communicate(timeout=30)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
    ok = writer.returncode == 0 and reader.returncode == 1 and "statement timeout" in err
    figures.fault(
        "hostile SQL", "runaway query: timeout, then a writer proceeds", ok, err[-300:] + writer.stderr[-300:]
    )
    assert reader.returncode == 1 and "stopped after 3 s" in err and "Traceback" not in err, err[-2000:]
    assert writer.returncode == 0, writer.stderr[-2000:]
    assert "held by readers" in writer.stderr  # it really waited for the query
    assert waited < 15


def _peak_rss_mb(db: Path, *args: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the CLI in a child Python that reports its own peak resident memory (MB) on its last line."""
    code = (
        "import resource, runpy, sys\n"
        f"sys.argv = ['evalhouse', '--db', {str(db)!r}, *{list(args)!r}]\n"
        "try:\n    runpy.run_module('evalhouse', run_name='__main__')\n"
        "finally:\n    print(f'peak-rss-mb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}', "
        "file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, **env},
    )
    return proc, float(proc.stderr.rsplit("peak-rss-mb ", 1)[-1])


def test_a_query_past_its_memory_limit_is_stopped_with_the_limit_named(small_db: Path, figures) -> None:
    """string_agg over 6 * 10^7 numbers wants about 1 GB; with a 200 MB limit it is stopped early."""
    query = "SELECT length(string_agg(i::VARCHAR, ',')) AS n FROM range(60000000) t(i)"
    proc, peak = _peak_rss_mb(small_db, "sql", query, env={"EVALHOUSE_SQL_MEMORY_LIMIT": "200MB"})
    ok = proc.returncode == 1 and "memory limit 200MB" in proc.stderr and peak < 600
    figures.fault("hostile SQL", f"string_agg past the memory limit (peak {peak:.0f} MB)", ok, proc.stderr[-300:])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "memory limit 200MB" in proc.stderr and "--memory-limit" in proc.stderr
    assert peak < 600, f"peak {peak:.0f} MB"


def test_spilling_past_the_temp_limit_stops_the_query(small_db: Path, figures) -> None:
    query = "SELECT count(*) FROM (SELECT i, random() AS r FROM range(30000000) t(i) ORDER BY r)"
    result = runner.invoke(
        app, ["--db", str(small_db), "sql", query, "--memory-limit", "64MB", "--temp-limit", "32MB", "--json"]
    )
    ok = result.exit_code == 1 and "spill limit 32MB" in result.output
    figures.fault("hostile SQL", "a sort past its spill limit", ok, result.output[-300:])
    assert ok, result.output[-2000:]


def test_snapshot_open_sql_has_the_same_timeout(small_db: Path, figures) -> None:
    snap = small_db.parent / "snap"
    result = runner.invoke(app, ["snapshot", "open", str(snap), "--sql", ENDLESS, "--timeout", "1"])
    ok = result.exit_code == 1 and "stopped after 1 s" in result.output
    figures.fault("hostile SQL", "snapshot open --sql runaway query", ok, result.output[-300:])
    assert ok, result.output[-2000:]
    bad = runner.invoke(app, ["--db", str(small_db), "sql", "SELECT 1", "--memory-limit", "lots"])
    assert bad.exit_code == 2 and "not a size" in bad.output


# -- CSV, TSV, the terminal and row caps -------------------------------------------------------

FORMULAS = ["=cmd|' /C calc'!A0", "@SUM(A1)", "+1+1", "-2+3", "\t=1+1", '=HYPERLINK("http://x")']
PLAIN = ["-0.5", "+3", "1e-3", "a=b", "plain", ""]


def _values_sql(values: list[str]) -> str:
    quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"SELECT unnest([{quoted}]) AS v"


@pytest.mark.parametrize("fmt", ["--csv", "tsv"])
def test_csv_and_tsv_cells_never_start_a_formula(small_db: Path, fmt: str, figures) -> None:
    import csv
    import io

    args = ["--db", str(small_db), "sql", _values_sql(FORMULAS + PLAIN), *([fmt] if fmt != "tsv" else [])]
    safe = runner.invoke(app, args)
    raw = runner.invoke(app, [*args, "--raw"])
    assert safe.exit_code == 0 and raw.exit_code == 0, safe.output
    sep = "," if fmt == "--csv" else "\t"
    cells = [r[0] for r in csv.reader(io.StringIO(safe.stdout), delimiter=sep)][1:]
    raw_cells = [r[0] for r in csv.reader(io.StringIO(raw.stdout), delimiter=sep)][1:]
    neutral = all(c.startswith("'") and c[1:] == v for c, v in zip(cells, FORMULAS, strict=False))
    figures.fault("hostile output", f"formula cells in {fmt.strip('-')}", neutral, str(cells[:4]))
    assert cells == ["'" + v for v in FORMULAS] + PLAIN
    assert raw_cells == FORMULAS + PLAIN  # --raw: exactly as stored


def _on_a_terminal(db: Path, *args: str) -> tuple[int, bytes]:
    """The CLI with stdout and stderr on a pseudo-terminal: its exit code and every byte it wrote."""
    import pty

    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalhouse", "--db", str(db), *args],
        stdout=child,
        stderr=child,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "200", "TERM": "xterm"},
    )
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    return proc.wait(timeout=120), b"".join(chunks)


ESCAPES = {
    "clear screen": "\x1b[2J",
    "OSC 8 link": "\x1b]8;;http://x\x07",
    "title": "\x1b]0;pwned\x07",
    "CSI 8-bit": "\x9b2J",
}


@pytest.mark.parametrize("fmt", [[], ["--csv"]])
def test_terminal_escapes_in_the_data_are_shown_not_obeyed(small_db: Path, fmt: list[str], figures) -> None:
    query = "SELECT " + ", ".join(f"'{v}x' AS c{i}" for i, v in enumerate(ESCAPES.values()))
    code, output = _on_a_terminal(small_db, "sql", query, *fmt)
    assert code == 0, output[-2000:]
    obeyed = [name for name, seq in ESCAPES.items() if seq.encode() in output]
    figures.fault("hostile output", f"terminal escapes in sql {fmt or 'table'}", not obeyed, str(obeyed))
    assert not obeyed, obeyed
    assert b"\\x1b[2Jx" in output  # shown as text


def test_the_default_row_cap_fails_loudly_off_a_terminal(small_db: Path, figures) -> None:
    query = "SELECT range AS i FROM range(10005)"
    capped = runner.invoke(app, ["--db", str(small_db), "sql", query])
    rows = capped.stdout.strip().splitlines()
    ok = capped.exit_code == 1 and len(rows) == 10_001 and "default limit of 10,000 rows" in capped.stderr
    figures.fault("hostile output", "sql > file stops at the default cap", ok, capped.stderr[-300:])
    assert ok, (capped.exit_code, len(rows), capped.stderr[-500:])
    asked = runner.invoke(app, ["--db", str(small_db), "sql", query, "--limit", "10000"])
    assert asked.exit_code == 0 and len(asked.stdout.strip().splitlines()) == 10_001
    assert "stopped at --limit 10,000" in asked.stderr
    everything = runner.invoke(app, ["--db", str(small_db), "sql", query, "--limit", "0", "--json"])
    assert everything.exit_code == 0 and len(json.loads(everything.stdout)) == 10_005
    snap = runner.invoke(app, ["snapshot", "open", str(small_db.parent / "snap"), "--sql", query])
    assert snap.exit_code == 1 and "default limit" in snap.stderr
    code, output = _on_a_terminal(small_db, "sql", query)
    assert code == 0 and b"stopped at --limit 10,000" in output  # a person sees the note
