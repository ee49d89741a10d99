"""Wall time of the paper-000 pipeline, of paper 002's factor grid as a user runs it, and of
vectorised vs looped parallel analysis.

Run: ``.venv/bin/python benchmarks/factor.py [--all-learners] [--n-jobs N] [--legacy]``. Reads the
AA CSV and the Epoch export from ../shared (or $EVALHOUSE_SHARED); the parallel-analysis comparison
runs without them. The factor grid is `evalhouse analyze factor-grid --no-record` in a process of
its own (GNU time: wall, CPU, peak RSS) on a scratch warehouse holding the Epoch export: the
paper's whole grid (the default: raw, C, R, S x eight imputers, ranks 1..10, 50-400 trees) next to
the grid that was the default before (C, R, S x SoftImpute rank 1..6, kNN, zero fill), whose
target was 60 s. ``--legacy`` also loads the legacy EEE datastore with ``evalhouse import-eee`` and
runs the whole grid over every source at the Std collapse.
"""

from __future__ import annotations

import argparse
import json
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
LEGACY_DIR = SHARED / "datasets" / "eee-datastore-legacy"
BEFORE_GRID = ["--densifiers", "C,R,S", "--imputers", "softimpute,knn,corr_zero", "--max-rank", "6"]


def _timed(args: list[str]) -> tuple[float, float, int, int, str]:
    """``evalhouse ARGS`` under GNU time: (wall s, CPU s, peak MB, exit code, stdout)."""
    cmd = [sys.executable, "-c", "from evalhouse.cli import main; main()", *args]
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", *cmd], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    user, system, rss = proc.stderr.strip().splitlines()[-1].split()
    return wall, float(user) + float(system), int(rss) // 1024, proc.returncode, proc.stdout


def _report(label: str, figures: tuple[float, float, int, int, str]) -> None:
    wall, cpu, rss, code, out = figures
    cells = ""
    if code == 0:
        payload = json.loads(out)
        failed = sum(c["heldout_r2"] is None for c in payload["cells"])
        m = payload["matrix"]
        cells = (
            f"; {len(payload['cells'])} cells ({failed} failed on their matrix) on {m['n_models']} x "
            f"{m['n_benchmarks']}, {sum(c['factored'] for c in payload['cells'])} factored"
        )
    print(f"{label}, exit {code}{cells}:")
    print(f"  wall {wall:7.1f} s   cpu {cpu:7.1f} s   peak {rss:6d} MB   load average {os.getloadavg()[0]:.1f}")


def bench_factor_grid(legacy: bool) -> None:
    if not EPOCH_DIR.is_dir():
        print(f"factor grid skipped: {EPOCH_DIR} not found (set EVALHOUSE_SHARED)")
        return
    from evalhouse.ingest.pinned import epoch_zip
    from evalhouse.pipeline.ingest_file import ingest_file
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw.store import RawStore

    with tempfile.TemporaryDirectory(prefix="evalhouse-bench-grid-") as tmp:
        root = Path(tmp)
        (root / "benchmark_data.zip").write_bytes(epoch_zip(EPOCH_DIR))
        with Warehouse.open(root / "w.duckdb") as wh:
            ingest_file(wh, RawStore(root / "w.raw"), "epoch-benchmarks", str(root / "benchmark_data.zip"))
        db = ["--db", str(root / "w.duckdb"), "analyze", "factor-grid", "--no-record", "--json"]
        before = _timed([*db, *BEFORE_GRID])
        _report("analyze factor-grid, the grid that was the default (3 densifiers x 3 imputers), Epoch hub", before)
        print(f"  target <= {GRID_TARGET_S:.0f} s wall: {before[0] / GRID_TARGET_S:.2f}x of it")
        whole = _timed(db)
        _report("analyze factor-grid, paper 002's whole grid (the default now: 4 densifiers x 8 imputers)", whole)
        print(f"  {whole[0] / before[0]:.1f}x the wall time and {whole[1] / before[1]:.1f}x the CPU of the grid before")
        if legacy and LEGACY_DIR.is_dir():
            ldb = root / "legacy.duckdb"
            load = _timed(["import-eee", str(LEGACY_DIR), "--db", str(ldb), "--skip-validation", "--json"])
            print(f"import-eee of the legacy datastore: wall {load[0]:.1f} s, cpu {load[1]:.1f} s, exit {load[3]}")
            args = ["--db", str(ldb), "analyze", "factor-grid", "--no-record", "--json", "--source", "all", "--level"]
            _report("analyze factor-grid --source all --level std, the legacy datastore", _timed([*args, "std"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--all-learners", action="store_true", help="ridge, elastic net, RF and GBM (minutes)")
    parser.add_argument("--n-jobs", type=int, default=None, help="targets in parallel")
    parser.add_argument("--legacy", action="store_true", help="also the whole grid on the legacy EEE datastore")
    parser.add_argument("--grid-only", action="store_true", help="only the factor grid")
    args = parser.parse_args()
    print(f"cpu count: {os.cpu_count()}")
    if not args.grid_only:
        bench_paper000(args.all_learners, args.n_jobs)
    bench_factor_grid(args.legacy)
    if not args.grid_only:
        bench_parallel()


if __name__ == "__main__":
    main()
