"""Wall time of the paper-000 pipeline, of paper 002's default factor grid as a user runs it, and
of vectorised vs looped parallel analysis.

Run: ``.venv/bin/python benchmarks/factor.py [--all-learners] [--n-jobs N]``. Reads the AA CSV and
the Epoch export from ../shared (or $EVALHOUSE_SHARED); the parallel-analysis comparison runs
without them. The factor grid is `evalhouse analyze factor-grid --no-record` in a process of its
own (GNU time: wall, CPU, peak RSS) on a scratch warehouse holding the Epoch export, against the
60 s target.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from evalhouse.analytics.factor.learners import LEARNERS
from evalhouse.analytics.factor.parallel import simulate_eigenvalues, simulate_eigenvalues_loop
from evalhouse.analytics.reproduce.paper000 import reproduce_paper000

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the AA CSV test helper lives with the tests
from synthetic import aa_frames_from_csv  # noqa: E402

SHARED = Path(os.environ.get("EVALHOUSE_SHARED", REPO.parent / "shared"))
AA_CSV = SHARED / "datasets" / "artificial-analysis-2026-07-06" / "aa_models_raw_parsed.csv"


def _best_of(fn, repeats: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_parallel(n: int = 96, p: int = 12, sims: int = 2000) -> None:
    t_vec, vec = _best_of(lambda: simulate_eigenvalues(n, p, sims, random_state=42))
    t_loop, loop = _best_of(lambda: simulate_eigenvalues_loop(n, p, sims, random_state=42))
    same = float(np.abs(np.asarray(vec) - np.asarray(loop)).max())
    print(f"parallel analysis, {sims} simulations at {n}x{p} (best of 3):")
    print(f"  vectorised  {t_vec * 1e3:8.1f} ms")
    print(f"  numpy loop  {t_loop * 1e3:8.1f} ms")
    print(f"  speed-up    {t_loop / t_vec:8.2f}x   (max |difference| {same:.1e}, same draws)")


def bench_paper000(all_learners: bool, n_jobs: int | None) -> None:
    if not AA_CSV.is_file():
        print(f"paper-000 pipeline skipped: {AA_CSV} not found (set EVALHOUSE_SHARED)")
        return
    learners = LEARNERS if all_learners else ("ridge",)
    t0 = time.perf_counter()
    wide, meta = aa_frames_from_csv(AA_CSV)
    result = reproduce_paper000(wide, meta, learners=learners, n_jobs=n_jobs)
    elapsed = time.perf_counter() - t0
    ok = sum(q["ok"] for q in result["quantities"])
    print(f"paper-000 pipeline (learners={','.join(learners)}, n_jobs={n_jobs}): {elapsed:.1f} s")
    print(f"  {ok}/{len(result['quantities'])} quantities within tolerance (2 known paper artefacts)")


GRID_TARGET_S = 60.0
EPOCH_DIR = SHARED / "datasets" / "epoch-benchmarks-2025-11"


def bench_factor_grid() -> None:
    if not EPOCH_DIR.is_dir():
        print(f"factor grid skipped: {EPOCH_DIR} not found (set EVALHOUSE_SHARED)")
        return
    from evalhouse.ingest.pinned import epoch_zip
    from evalhouse.pipeline.ingest_file import ingest_file
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw_store import RawStore

    with tempfile.TemporaryDirectory(prefix="evalhouse-bench-grid-") as tmp:
        root = Path(tmp)
        (root / "benchmark_data.zip").write_bytes(epoch_zip(EPOCH_DIR))
        with Warehouse.open(root / "w.duckdb") as wh:
            ingest_file(wh, RawStore(root / "w.raw"), "epoch-benchmarks", str(root / "benchmark_data.zip"))
        cmd = [sys.executable, "-c", "from evalhouse.cli import main; main()", "--db", str(root / "w.duckdb"),
               "analyze", "factor-grid", "--no-record", "--json"]  # fmt: skip
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", *cmd], capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
    user, system, rss = proc.stderr.strip().splitlines()[-1].split()
    print(f"analyze factor-grid (default 3 densifiers x 3 imputers, Epoch hub), exit {proc.returncode}:")
    print(f"  wall {wall:6.1f} s   cpu {float(user) + float(system):6.1f} s   peak {int(rss) / 1024:6.0f} MB")
    print(f"  target <= {GRID_TARGET_S:.0f} s wall: {wall / GRID_TARGET_S:.2f}x of it")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--all-learners", action="store_true", help="ridge, elastic net, RF and GBM (minutes)")
    parser.add_argument("--n-jobs", type=int, default=None, help="targets in parallel")
    args = parser.parse_args()
    print(f"cpu count: {os.cpu_count()}")
    bench_paper000(args.all_learners, args.n_jobs)
    bench_factor_grid()
    bench_parallel()


if __name__ == "__main__":
    main()
