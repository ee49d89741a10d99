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
from clirunner import CliRunner
from eee_records import eee_record, write_file, write_tree

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
    from evalhouse.warehouse.raw.store import RawStore

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


def test_clicking_a_stored_script_url_runs_nothing_in_chromium(script_site: Path, browser, figures) -> None:
    pages = _pages_with(script_site, PWNED)
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
    once the timeout stops the query (EVALHOUSE_SQL_TIMEOUT=8: long enough that the import, started
    after the query holds the warehouse, is surely waiting for it on a loaded machine) and its connection
    closes."""
    import time

    reader = subprocess.Popen(
        [sys.executable, "-m", "evalhouse", "--db", str(small_db), "sql", ENDLESS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "EVALHOUSE_SQL_TIMEOUT": "8"},
    )
    try:
        deadline = time.monotonic() + 60
        while not _holds(reader.pid, small_db) and time.monotonic() < deadline and reader.poll() is None:
            time.sleep(0.05)
        assert _holds(reader.pid, small_db), "the query never opened the warehouse"
        start = time.monotonic()
        writer = _cli(small_db, "--wait", "60", "import-eee", str(small_db.parent / "later"), "--skip-validation")
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
    assert reader.returncode == 1 and "stopped after 8 s" in err and "Traceback" not in err, err[-2000:]
    assert writer.returncode == 0, writer.stderr[-2000:]
    assert "held by readers" in writer.stderr  # it really waited for the query
    assert waited < 45  # the query stopped at 8 s; the import then loads one record


def _peak_rss_mb(db: Path, *args: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the CLI in a child Python that reports its own peak resident memory (MB) on its last line.

    The peak is the address space's own high-water mark (``VmHWM``): ``ru_maxrss`` is kept across
    ``execve`` on Linux, so a child spawned by a large pytest worker would report the worker's size."""
    code = (
        "import resource, runpy, sys\n"
        "def peak():\n"
        "    try:\n"
        "        with open('/proc/self/status') as f:\n"
        "            return next(int(l.split()[1]) for l in f if l.startswith('VmHWM:')) / 1024\n"
        "    except (OSError, StopIteration):\n"
        "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        f"sys.argv = ['evalhouse', '--db', {str(db)!r}, *{list(args)!r}]\n"
        "try:\n    runpy.run_module('evalhouse', run_name='__main__')\n"
        "finally:\n    print(f'peak-rss-mb {peak():.0f}', file=sys.stderr)\n"
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


# -- long names ---------------------------------------------------------------------------------

LONG_COLLECTION = "c" * 245  # the folder fits a file system; "source_key=eee-" + it does not
LONGER_COLLECTION = "k" * 252  # "<it>.jsonl" does not fit either


@pytest.fixture(scope="module")
def long_names(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("long-names")
    write_tree(root / "tree", [eee_record("org/alpha", {"bench_a": 0.6}, evaluation_id="x/alpha/1")], LONG_COLLECTION)
    write_tree(root / "tree", [eee_record("org/beta", {"bench_a": 0.4}, evaluation_id="y/beta/1")], LONGER_COLLECTION)
    records = [eee_record(f"org/m{i}", {"bench_a": 0.01 * i}, evaluation_id=f"z/m{i}/1") for i in range(17)]
    records.append(eee_record("org/" + "m" * 300, {"bench_a": 0.5}, evaluation_id="z/long/1"))
    for i, rec in enumerate(records):  # write_tree files a record under its model name: too long here
        write_file(root / "tree", f"z/org/rec{i}/{_uuid()}.json", rec)
    db = root / "w.duckdb"
    imported = runner.invoke(app, ["--db", str(db), "import-eee", str(root / "tree"), "--skip-validation"])
    assert imported.exit_code == 0, imported.output
    return db


def _uuid() -> str:
    import uuid

    return str(uuid.uuid4())


def test_a_long_collection_name_never_blocks_snapshot_site_or_report(long_names: Path, tmp_path: Path, figures) -> None:
    from evalhouse.warehouse.snapshot.reader import open_snapshot
    from evalhouse.warehouse.snapshot.verify import load_manifest

    runs = {
        "snapshot create": ["snapshot", "create", str(tmp_path / "s")],
        "snapshot create --eee-tree": ["snapshot", "create", str(tmp_path / "t"), "--eee-tree"],
        "site": ["site", str(tmp_path / "site"), "--no-analyses"],
        "report": ["report", "--output", str(tmp_path / "r.html")],
    }
    for name, args in runs.items():
        proc = _cli(long_names, *args)
        ok = proc.returncode == 0 and "Traceback" not in proc.stderr
        figures.fault(
            "long names", f"{name} after a {len(LONG_COLLECTION)}-character collection", ok, proc.stderr[-300:]
        )
        assert ok, (name, proc.stderr[-3000:])
    manifest, _ = load_manifest(tmp_path / "s")
    entry = manifest["tables"]["score_value"]
    assert "partition_by" not in entry and "longer than 255 bytes" in entry["not_partitioned"]
    assert all(len(part.encode()) <= 255 for rel in manifest["files"] for part in rel.split("/"))
    assert manifest["eee"]["shortened"] == {LONGER_COLLECTION: next(iter(manifest["eee"]["shortened"].values()))}
    con = open_snapshot(tmp_path / "s")  # the rows and their source keys came through whole
    keys = dict(con.execute("SELECT source_key, count(*) FROM score GROUP BY 1").fetchall())
    con.close()
    assert keys[f"eee-{LONG_COLLECTION}"] == 1 and keys[f"eee-{LONGER_COLLECTION}"] == 1 and keys["eee-z"] == 18


def test_a_model_id_part_over_255_bytes_is_exported_under_a_hashed_name(
    long_names: Path, tmp_path: Path, figures
) -> None:
    proc = _cli(long_names, "export-eee", str(tmp_path / "out"), "--json")
    summary = json.loads(proc.stdout) if proc.returncode == 0 else {}
    files = sorted((tmp_path / "out" / "data" / "z").rglob("*.json"))
    ok = proc.returncode == 0 and len(files) == 18
    figures.fault("long names", "export-eee of a 300-byte model id part", ok, proc.stderr[-300:])
    assert ok, (proc.returncode, len(files), proc.stderr[-3000:])
    (short,) = summary["shortened"]
    assert short["name"] == "m" * 300 and short["evaluation_id"] == "z/long/1"
    assert len(short["written_as"].encode()) <= 255 and short["written_as"].startswith("m" * 200)
    written = next(f for f in files if json.loads(f.read_text())["evaluation_id"] == "z/long/1")
    assert written.parent.name == short["written_as"] and json.loads(written.read_text())["model_info"]["id"].endswith(
        "m" * 300
    )
    assert "shortened a path part of z/long/1" in proc.stderr


def test_bounded_names_keep_apart_what_differs() -> None:
    from evalhouse.common.naming import bounded_name

    a, b = bounded_name("x" * 300 + "a"), bounded_name("x" * 300 + "b")
    assert a != b and len(a.encode()) == len(b.encode()) == 255
    assert bounded_name("é" * 200, reserve=6).encode().__len__() <= 249  # cut at a character
    assert bounded_name("short") == "short" and bounded_name("x" * 255) == "x" * 255


# -- disk full and kill -9 ----------------------------------------------------------------------

#: Each writer's output holds a file larger than this; the CLI runs with it as RLIMIT_FSIZE, so
#: the kernel refuses the write past it (EFBIG) as a full disk would (ENOSPC), without root.
FSIZE = 1_000_000


@pytest.fixture(scope="module")
def big_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """130 small records and one large one (700 results, 1.2 MB of notes), and a snapshot."""
    import secrets

    root = tmp_path_factory.mktemp("disk-full")
    records = [
        eee_record(f"org/m{i}", {"bench_a": 0.001 * i, "bench_b": 0.5}, evaluation_id=f"c/m{i}/1") for i in range(130)
    ]
    big = eee_record("org/big", {f"bench_{j}": 0.5 for j in range(700)}, evaluation_id="c/big/1")
    big["model_info"]["additional_details"]["notes"] = secrets.token_hex(600_000)
    write_tree(root / "tree", [*records, big], "c")
    db = root / "w.duckdb"
    assert _cli(db, "import-eee", str(root / "tree"), "--skip-validation").returncode == 0
    assert _cli(db, "snapshot", "create", str(root / "snap")).returncode == 0
    return db


def _limited(db: Path, limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with a file size limit: a write past ``limit`` bytes fails with EFBIG."""
    import resource
    import signal

    def limit_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the kernel kills the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return _cli(db, *args, preexec_fn=limit_files)


def _tree_digest(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


def _staging_left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".partial-" in p.name or ".old-" in p.name)


@pytest.mark.parametrize(
    ("writer", "limit"),
    # 1 MB: the large record's JSON or JSON Lines; 300 KB: its Parquet, written by DuckDB; 600 KB: its
    # audit page (the snapshot's catalog the site opens first takes 270 KB)
    [("export-eee", FSIZE), ("snapshot create", FSIZE), ("snapshot create", 300_000), ("site", 600_000)],
)
def test_a_full_disk_is_one_clear_error_and_nothing_half_written(
    big_world: Path, tmp_path: Path, writer: str, limit: int, figures
) -> None:
    """Into a new folder, and over an earlier export or site: exit 1 naming the folder, no
    traceback, the new folder absent or the earlier one as it was, no staging folder left."""
    target = tmp_path / "out"
    args = {
        "export-eee": ["export-eee", str(target)],
        "snapshot create": ["snapshot", "create", str(target)],
        "site": ["site", str(target), "--snapshot", str(big_world.parent / "snap"), "--no-analyses"],
    }[writer]
    cases = ["new folder"] + (["over an earlier one"] if writer != "snapshot create" else [])
    for case in cases:
        if case == "over an earlier one":
            assert _cli(big_world, *args).returncode == 0
        before = _tree_digest(target) if target.exists() else None
        proc = _limited(big_world, limit, *args)
        after = _tree_digest(target) if target.exists() else None
        ok = (
            proc.returncode == 1
            and "Traceback" not in proc.stderr
            and f"no room to write {target}" in proc.stderr
            and after == before
            and not _staging_left(tmp_path)
        )
        figures.fault("disk full", f"{writer} ({case}, files limited to {limit:,} bytes)", ok, proc.stderr[-300:])
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        assert f"no room to write {target}" in proc.stderr and "nothing of it was kept" in proc.stderr
        assert after == before, "the folder changed"
        assert not _staging_left(tmp_path)


def test_a_full_disk_keeps_the_previous_report(tmp_path: Path, figures) -> None:
    import resource
    import signal

    report = tmp_path / "r.html"
    report.write_text("the previous report")
    code = (
        "import resource, signal\n"
        "from pathlib import Path\n"
        "from evalhouse.common.staging import write_whole\n"
        f"write_whole(Path({str(report)!r}), 'x' * 2_000_000)\n"
    )

    def limit_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))

    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limit_files, check=False
    )
    ok = (
        "DiskFull" in proc.stderr and report.read_text() == "the previous report" and len(list(tmp_path.iterdir())) == 1
    )
    figures.fault("disk full", "the report page", ok, proc.stderr[-300:])
    assert ok, proc.stderr[-2000:]


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _kill_when(cmd: list[str], folder: Path, marker: str) -> tuple[int, list[str]]:
    """Start ``cmd``, SIGKILL it as soon as a ``marker`` folder appears in ``folder``; its exit and what it left."""
    import signal
    import time

    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if folder.is_dir() and any(marker in p.name for p in folder.iterdir()):
                time.sleep(0.05)  # let it write into the staging folder for a moment
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.01)
    finally:
        code = proc.wait(timeout=60)
    return code, sorted(p.name for p in folder.iterdir() if marker in p.name) if folder.is_dir() else []


@pytest.mark.parametrize("writer", ["snapshot create", "site", "site (pinned snapshot)", "export-eee"])
def test_what_kill_9_left_is_swept_by_the_next_run(big_world: Path, tmp_path: Path, writer: str, figures) -> None:
    """A writer killed mid-write leaves its staging folder; the next run of the same command
    removes it (its pid is dead), keeps a live process's, and completes."""
    db = tmp_path / "w.duckdb"  # a copy: the pinned freeze records itself in the warehouse
    for p in big_world.parent.iterdir():
        if p.name.startswith("w.") and p.is_file():
            shutil.copy2(p, tmp_path / p.name)
        elif p.name == "w.raw":
            shutil.copytree(p, tmp_path / p.name)
    target = tmp_path / "out"
    args = {
        "snapshot create": ["snapshot", "create", str(target)],
        "site": ["site", str(target), "--snapshot", str(big_world.parent / "snap"), "--no-analyses"],
        "site (pinned snapshot)": ["site", str(target), "--no-analyses"],
        "export-eee": ["export-eee", str(target)],
    }[writer]
    watched = tmp_path / "w.snapshots" if writer == "site (pinned snapshot)" else tmp_path
    (tmp_path / "w.snapshots").mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "evalhouse", "--db", str(db), *args]
    code, left = _kill_when(cmd, watched, ".partial-")
    assert code == -9 and left, f"the writer was not caught mid-write (exit {code})"
    # an .old folder of a dead writer, and a live process's staging folder (this test's own pid)
    (tmp_path / f".out.old-{_dead_pid()}").mkdir()
    live = tmp_path / f".out.partial-{os.getpid()}"
    live.mkdir()
    rerun = _cli(db, *args)
    remaining = [n for n in _staging_left(watched) + _staging_left(tmp_path) if n != live.name]
    ok = rerun.returncode == 0 and not remaining and live.is_dir()
    figures.kill_trials[writer] += 1
    figures.kill_consistent[writer] += ok
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert not remaining, remaining
    assert live.is_dir()  # a live writer's folder is never touched


def test_an_old_folder_whose_target_is_missing_is_put_back(tmp_path: Path) -> None:
    """Killed between its two renames, a writer leaves the previous version only as .old-PID."""
    from evalhouse.common.staging import sweep

    target = tmp_path / "site"
    old = tmp_path / f".site.old-{_dead_pid()}"
    old.mkdir()
    (old / "index.html").write_text("previous")
    assert sweep(target) == [] and (target / "index.html").read_text() == "previous" and not old.exists()


# -- export-eee's exit codes ------------------------------------------------------------------


def test_export_eee_of_the_pinned_data_exits_0_with_warnings(real_warehouse: Path, tmp_path: Path, figures) -> None:
    """Epoch + AA: 108 Epoch records name developer 'unknown' (EEE's layout refuses it: warnings),
    and AA records the source gave without results are valid EEE and are written."""
    import duckdb

    out = tmp_path / "out"
    proc = _cli(real_warehouse, "export-eee", str(out), "--json")
    ok = proc.returncode == 0 and "Traceback" not in proc.stderr
    figures.fault("exit codes", "export-eee of the pinned Epoch + AA warehouse", ok, proc.stderr[-300:])
    assert ok, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    con = duckdb.connect(str(real_warehouse), read_only=True)
    # the source said 'unknown' and evalhouse's resolver knew no developer for the model either
    total, unknown, empty = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE model_source_id LIKE 'unknown/%' AND bm.developer_id = 'unknown'),"
        " count(*) FILTER (WHERE json_array_length(record->'evaluation_results') = 0)"
        " FROM evaluation e LEFT JOIN model_config mc USING (config_id) LEFT JOIN base_model bm USING (base_model_id)"
    ).fetchone()
    con.close()
    reasons = [n["reason"] for n in summary["not_exported"]]
    assert len(reasons) == unknown == 108 and all("'unknown'" in r for r in reasons)
    assert summary["written"] + len(reasons) == total  # each record written or named with its reason
    assert summary["written"] == len(list((out / "data").rglob("*.json")))
    assert not summary["failed"] and empty >= 1
    no_results = [p for p in (out / "data").rglob("*.json") if not json.loads(p.read_text())["evaluation_results"]]
    assert len(no_results) == empty
    validated = subprocess.run(
        [sys.executable, "-m", "every_eval_ever", "validate", "--format", "json"]
        + [p.relative_to(out).as_posix() for p in no_results],
        cwd=out,
        capture_output=True,
        text=True,
        check=False,
    )
    assert all(r["valid"] for r in json.loads(validated.stdout)), validated.stdout[-2000:]
    strict = _cli(real_warehouse, "export-eee", str(out), "--strict")
    assert strict.returncode == 1 and "108 record(s) not exported" in strict.stderr


def test_write_whole_sweeps_a_killed_writers_file_and_keeps_a_live_ones(tmp_path: Path) -> None:
    from evalhouse.common.staging import write_whole

    dead = tmp_path / f".r.html.partial-{_dead_pid()}"
    dead.write_text("half a page")
    live = tmp_path / f".r.html.partial-{os.getppid()}"
    live.write_text("another writer's page, still being written")
    write_whole(tmp_path / "r.html", "<html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["r.html", live.name])
    assert (tmp_path / "r.html").read_text() == "<html>"
