"""Leaderboard sources against a local server: pages/s and rows/s for the spiders and API clients.

Builds the replay mirror of every leaderboard source (tests/ingest/fixture_mirror.py: the real
../shared payloads and the authored fixtures), serves it from a real HTTP server on 127.0.0.1
and, in one process, refreshes each source into an empty warehouse (expectations checkpoint
off: this measures fetching, crawling, parsing and loading). It prints per source and per
runner (scrapy crawl vs httpx) the pages fetched, records loaded, wall seconds, CPU seconds,
pages/s and rows/s, and the ratio against the stated baselines. Usage:
`.venv/bin/python benchmarks/sources.py [path/to/shared]`.

Baselines (chosen, not measured elsewhere): a polite crawl of a static site is limited by its
AutoThrottle delay in live runs, so against a local mirror the spider should sustain >= 50
pages/s; an API client should load >= 500 rows/s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "ingest")]

from fixture_mirror import ENV, build  # noqa: E402
from httpserver import serve  # noqa: E402

from evalhouse.ingest.catalog import catalog  # noqa: E402
from evalhouse.ingest.http import HttpClient  # noqa: E402
from evalhouse.pipeline import refresh as R  # noqa: E402
from evalhouse.warehouse.db import Warehouse  # noqa: E402
from evalhouse.warehouse.raw.store import RawStore  # noqa: E402

BASELINE_PAGES_S = 50.0
BASELINE_ROWS_S = 500.0


def main(shared: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="evalhouse-sources-"))
    build(tmp / "m", shared)
    keys = [k for k, m in catalog().items() if k not in ("epoch-benchmarks", "artificial-analysis")]
    totals: dict[str, list[float]] = {"scrapy": [0, 0, 0, 0], "httpx": [0, 0, 0, 0]}
    print(
        f"{'source':36} {'runner':7} {'pages':>6} {'rows':>6} {'wall s':>7} {'cpu s':>6} {'pages/s':>8} {'rows/s':>8}"
    )

    def client(mirror: str | None) -> HttpClient:
        return HttpClient(mirror=mirror, trust_env=False)

    with serve(static_dir=tmp) as srv, Warehouse.open(tmp / "w.duckdb") as wh:
        store = RawStore(tmp / "raw")
        R.refresh(wh, store, ["lexam"], R.RefreshOptions(mirror=f"{srv.url}/m", env=ENV))  # start the reactor once
        wh.con.execute("DELETE FROM score; DELETE FROM evaluation; DELETE FROM ingest_run")
        for key in keys:
            runner = "scrapy" if getattr(catalog()[key], "SPIDER", None) else "httpx"
            wall, cpu = time.perf_counter(), time.process_time()
            (result,) = R.refresh(
                wh, store, [key], R.RefreshOptions(mirror=f"{srv.url}/m", env=ENV, client_factory=client)
            )
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            pages = _pages(wh, result.run_id)
            rows = result.report.records_loaded
            t = totals[runner]
            t[0] += pages
            t[1] += rows
            t[2] += wall
            t[3] += cpu
            print(
                f"{key:36} {runner:7} {pages:6d} {rows:6d} {wall:7.2f} {cpu:6.2f} "
                f"{pages / wall:8.1f} {rows / wall:8.1f}  {result.status}"
            )
    for runner, (pages, rows, wall, cpu) in totals.items():
        print(
            f"{runner}: {pages:.0f} pages, {rows:.0f} rows in {wall:.2f} s wall ({cpu:.2f} s CPU): "
            f"{pages / wall:.1f} pages/s (x{pages / wall / BASELINE_PAGES_S:.2f} of {BASELINE_PAGES_S:.0f}), "
            f"{rows / wall:.1f} rows/s (x{rows / wall / BASELINE_ROWS_S:.2f} of {BASELINE_ROWS_S:.0f})"
        )


def _pages(wh: Warehouse, run_id: str) -> int:
    """Pages the run asked for: fetched payloads plus the pages that failed (e.g. Swallow's 404s)."""
    fetched = wh.scalar("SELECT count(*) FROM raw_snapshot WHERE run_id = ?", [run_id])
    missing = wh.scalar(
        "SELECT coalesce(json_array_length(details->'$.figures.missing'), 0) FROM ingest_run WHERE run_id = ?", [run_id]
    )
    return int(fetched) + int(missing or 0)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared")
