"""What a writer pays to let readers in around a fetch: DuckDB closed and reopened, or the file
detached and attached again.

A refresh or an import releases the warehouse file around every source's fetch and parse
(``Warehouse.released``), so that readers can open it, and takes it back for the load. This script
builds the warehouse a user has after a night's refresh of the pinned sources (from a mirror of
../shared), then times one release and retake followed by a read of the ``score`` view,
alternating:

1. the baseline: the connection closed and a new DuckDB opened on the file (``duckdb.connect``), as
   the writer did before its DuckDB outlived the file's attachment;
2. as shipped: ``Warehouse.released()`` (the file detached from the writer's in-memory DuckDB and
   attached again; the lock file's notes included).

It prints the median CPU and wall time of one cycle of each and their ratio.

Usage: `.venv/bin/python benchmarks/release.py [path/to/shared]`.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

import evalhouse
from evalhouse import House
from evalhouse.config import duckdb_config
from evalhouse.warehouse.db import Warehouse

PINNED = ("epoch-benchmarks", "artificial-analysis")
CYCLES = 60
READ = "SELECT count(*) FROM score"


def _baseline(db: Path) -> list[tuple[float, float]]:
    con = duckdb.connect(str(db), config=duckdb_config())
    out = []
    for _ in range(CYCLES):
        w0, c0 = time.perf_counter(), time.process_time()
        con.close()
        con = duckdb.connect(str(db), config=duckdb_config())
        con.execute("SET enable_progress_bar = false")
        con.execute(READ).fetchall()
        out.append((time.perf_counter() - w0, time.process_time() - c0))
    con.close()
    return out


def _shipped(db: Path) -> list[tuple[float, float]]:
    out = []
    with Warehouse.open(db) as wh:
        for _ in range(CYCLES):
            w0, c0 = time.perf_counter(), time.process_time()
            with wh.released():
                pass
            wh.con.execute(READ).fetchall()
            out.append((time.perf_counter() - w0, time.process_time() - c0))
    return out


def main(shared: Path) -> None:
    if not (shared / "datasets").is_dir():
        sys.exit(f"{shared} holds no datasets: pass the path to ../shared")
    root = Path(tempfile.mkdtemp(prefix="evalhouse-release-"))
    mirror = root / "mirror"
    evalhouse.mirror_from_shared(mirror, shared=shared)
    db = root / "w.duckdb"
    House.open(db).refresh(PINNED, mirror=str(mirror))  # a house holds no connection between calls
    times: dict[str, list[tuple[float, float]]] = {"baseline": [], "shipped": []}
    for _ in range(3):
        times["baseline"] += _baseline(db)
        times["shipped"] += _shipped(db)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    size = db.stat().st_size / 2**20
    print(f"the pinned sources' warehouse ({size:.0f} MB): one release and retake + a read, median of {3 * CYCLES}")
    labels = {"baseline": "DuckDB closed and reopened (baseline)", "shipped": "detached and attached (shipped)"}
    for label, name in labels.items():
        print(f"{name:<40}{1000 * med[label][0]:7.1f} ms wall {1000 * med[label][1]:7.1f} ms CPU")
    print(
        f"ratio: {med['baseline'][1] / med['shipped'][1]:.2f}x less CPU, "
        f"{med['baseline'][0] / med['shipped'][0]:.2f}x less wall"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared")
