"""Wall time of the paper-000 pipeline and of vectorised vs looped parallel analysis.

Run: ``.venv/bin/python benchmarks/factor.py [--all-learners] [--n-jobs N]``. Reads the AA CSV
from ../shared (or $EVALHOUSE_SHARED); the parallel-analysis comparison runs without it.
"""

from __future__ import annotations

import argparse
import os
import sys
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--all-learners", action="store_true", help="ridge, elastic net, RF and GBM (minutes)")
    parser.add_argument("--n-jobs", type=int, default=None, help="targets in parallel")
    args = parser.parse_args()
    print(f"cpu count: {os.cpu_count()}")
    bench_paper000(args.all_learners, args.n_jobs)
    bench_parallel()


if __name__ == "__main__":
    main()
