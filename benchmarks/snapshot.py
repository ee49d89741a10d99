"""Snapshot throughput: create and verify a snapshot of a warehouse holding 10^6 scores.

The warehouse is a real DuckDB file, but its rows are generated with SQL straight into the tables
(``benchmarks/snapshot_synthetic.sql``: 10 sources, 1,000 model configurations, 100 benchmarks,
10,000 evaluation records, N scores) rather than through the EEE loader, which would take
minutes and is measured by ``import_eee.py``. Prints, for create and verify, seconds and MB/s
over the snapshot's total bytes, plus the row count, the file count and the bytes; then checks
that a second create of the same state gives the same id. Usage:
``.venv/bin/python benchmarks/snapshot.py [N_SCORES]`` (default 1,000,000).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore
from evalhouse.warehouse.snapshot import create_snapshot, open_snapshot, snapshot_id, verify_snapshot

SYNTHETIC_SQL = Path(__file__).with_name("snapshot_synthetic.sql")


def build(db: Path, n_scores: int) -> float:
    """Fill a fresh warehouse with synthetic rows; returns the seconds it took."""
    t0 = time.perf_counter()
    with Warehouse.open(db) as wh:
        wh.con.execute("SET enable_progress_bar = false")
        with wh.transaction() as con:
            con.execute(SYNTHETIC_SQL.read_text(encoding="utf-8"), {"n_scores": n_scores})
    return time.perf_counter() - t0


def main(n_scores: int = 1_000_000) -> None:
    with tempfile.TemporaryDirectory(prefix="evalhouse-bench-snapshot-") as tmp:
        root = Path(tmp)
        db = root / "w.duckdb"
        print(f"building a warehouse of {n_scores:,} synthetic scores (SQL inserts, not the EEE loader)...")
        print(f"  built in {build(db, n_scores):.1f} s")
        store = RawStore(root / "w.raw")
        with Warehouse.open(db) as wh:
            t0 = time.perf_counter()
            created = create_snapshot(wh, root / "snap", store, name="benchmark")
            t_create = time.perf_counter() - t0
            rows = wh.scalar("SELECT count(*) FROM score")
        size = created.total_bytes
        files = len(created.manifest["files"]) + 1
        t0 = time.perf_counter()
        report = verify_snapshot(created.path)
        t_verify = time.perf_counter() - t0
        assert report.ok, report.problems()
        t0 = time.perf_counter()
        con = open_snapshot(created.path, verify=False)
        n_cells = con.execute("SELECT count(*) FROM v_scores_canonical").fetchone()[0]
        assert snapshot_id(con) == created.snapshot_id
        con.close()
        t_query = time.perf_counter() - t0
        mb = size / 1e6
        print(f"score rows: {rows:,}; snapshot: {files:,} files, {mb:,.1f} MB ({size:,} bytes)")
        print(f"create: {t_create:6.2f} s  {mb / t_create:8.1f} MB/s  ({rows / t_create:,.0f} scores/s)")
        print(f"verify: {t_verify:6.2f} s  {mb / t_verify:8.1f} MB/s")
        print(f"open + count v_scores_canonical ({n_cells:,} cells): {t_query:.2f} s")
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"(machine: {os.cpu_count()} CPUs, load average {load}; the writer uses one thread by design)")
        with Warehouse.open(db) as wh:
            again = create_snapshot(wh, root / "snap2", store)
        same = again.snapshot_id == created.snapshot_id
        print(f"second create of the same state: same id {same} ({created.snapshot_id[:16]}…)")
        if not same:
            raise SystemExit("snapshot ids differ for the same warehouse state")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
