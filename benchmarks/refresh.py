"""Refresh throughput and the cost of a quiet night.

Serves a mirror of the pinned datasets (../shared) from a real HTTP server on 127.0.0.1 and, in
one process: (1) refreshes Epoch + AA into an empty warehouse (rows/s, with the expectations
checkpoint), (2) refreshes again, when nothing changed (target: <= 2 s beyond fetching), and
(3) fetches the same URLs alone to measure what "fetching" costs. Usage:
`.venv/bin/python benchmarks/refresh.py [path/to/shared]`.
"""

from __future__ import annotations

import functools
import shutil
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from evalhouse.ingest.catalog import catalog
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.pinned import mirror_from_shared
from evalhouse.ingest.source import SourceState
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.expectations import prepare
from evalhouse.warehouse.expectations_sql import checkpoint_after_load
from evalhouse.warehouse.raw_store import RawStore

NOOP_TARGET_S = 2.0
#: The sources mirror_from_shared pins (the leaderboard sources are measured by benchmarks/sources.py).
PINNED = ["epoch-benchmarks", "artificial-analysis"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def main(shared: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="evalhouse-refresh-"))
    mirror_from_shared(shared, tmp / "mirror")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(tmp / "mirror")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    mirror = f"http://127.0.0.1:{server.server_address[1]}"
    client = functools.partial(HttpClient, trust_env=False)
    try:
        prepare()  # import great-expectations outside the timed part, as a long-lived process would
        with Warehouse.open(tmp / "w.duckdb") as wh:
            store = RawStore(tmp / "w.raw")
            t0 = time.perf_counter()
            results = R.refresh(
                wh,
                store,
                PINNED,
                R.RefreshOptions(
                    mirror=mirror, client_factory=lambda m: client(mirror=m), after_load=checkpoint_after_load
                ),
            )
            full = time.perf_counter() - t0
            rows = sum(r.report.records_read + r.report.parse_failures for r in results)
            scores = sum(r.report.scores_loaded for r in results)
            for r in results:
                print(
                    f"  {r.source_key}: {r.status}, {r.report.records_loaded} records, {r.report.scores_loaded} scores"
                )
            print(
                f"full refresh: {rows:,} source rows ({scores:,} scores) in {full:.2f} s = {rows / full:,.0f} rows/s"
                f" ({scores / full:,.0f} scores/s)"
            )

            t0 = time.perf_counter()
            again = R.refresh(
                wh,
                store,
                PINNED,
                R.RefreshOptions(
                    mirror=mirror, client_factory=lambda m: client(mirror=m), after_load=checkpoint_after_load
                ),
            )
            noop = time.perf_counter() - t0
            assert {r.status for r in again} == {"unchanged"}, [r.status for r in again]

        t0 = time.perf_counter()
        with client(mirror=mirror) as c:
            for module in (catalog()[k] for k in PINNED):
                for request in module.plan(SourceState()):
                    c.fetch(request)
        fetching = time.perf_counter() - t0
        beyond = max(noop - fetching, 0.0)
        print(f"no-op refresh: {noop:.3f} s total, {fetching:.3f} s of it fetching, {beyond:.3f} s beyond fetching")
        print(f"target <= {NOOP_TARGET_S:.1f} s beyond fetching: ratio {beyond / NOOP_TARGET_S:.3f} of the budget")
    finally:
        server.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[1].parent / "shared"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
