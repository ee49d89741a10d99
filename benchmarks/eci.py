"""Timing of the capabilities-index fit (``evalhouse analyze eci``) against a per-cell loop.

Builds a scratch warehouse from the Epoch hub export in ../shared (the real ``epoch-benchmarks``
source), screens its cells, then prints in CPU seconds (``time.process_time``, this process only):
the main fit (cross-validated penalties, chosen on inner folds), the bootstrap of B = 100 cell
resamples (target <= 30 s on 2 cores), and one Gauss-Newton system assembled cell by cell in Python
(the per-cell loop the vectorised ``np.bincount`` assembly replaces), with the ratio.

Run: ``.venv/bin/python benchmarks/eci.py [--bootstrap 100]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from threadpoolctl import threadpool_limits

from evalhouse.analytics.equate.eci import CapabilitiesIndex, Problem, _normal_equations
from evalhouse.analytics.equate.eci_data import hub_cells, prepare
from evalhouse.analytics.equate.eci_pipeline import _anchors
from evalhouse.ingest.pinned import epoch_zip
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EVALHOUSE_SHARED", REPO.parent / "shared"))
EPOCH = SHARED / "datasets" / "epoch-benchmarks-2025-11"


def loop_normal_equations(x: np.ndarray, pr: Problem) -> tuple[np.ndarray, np.ndarray]:
    """The gradient and Gauss-Newton matrix of the cell term, one cell at a time (reference)."""
    n = len(x)
    grad, H = np.zeros(n), np.zeros((n, n))
    for g, b, p in zip(pr.g, pr.b, pr.p, strict=True):
        d = 0.0 if b == pr.anchor else x[pr.n_g + b]
        a = 0.0 if b == pr.anchor else x[pr.n_g + pr.n_b + b]
        alpha = np.exp(a)
        s = expit(alpha * (x[g] - d))
        ds = s * (1 - s)
        idx = [g] if b == pr.anchor else [g, pr.n_g + b, pr.n_g + pr.n_b + b]
        val = [ds * alpha] if b == pr.anchor else [ds * alpha, -ds * alpha, ds * alpha * (x[g] - d)]
        for i, vi in zip(idx, val, strict=True):
            grad[i] += vi * (s - p)
            for j, vj in zip(idx, val, strict=True):
                H[i, j] += vi * vj
    return grad, H


def cpu(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", type=int, default=100)
    args = parser.parse_args()
    if not EPOCH.is_dir():
        print(f"skipped: {EPOCH} not found (set EVALHOUSE_SHARED)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "benchmark_data.zip").write_bytes(epoch_zip(EPOCH))
        with Warehouse.open(root / "w.duckdb") as wh:
            ingest_file(wh, RawStore(root / "raw"), "epoch-benchmarks", str(root / "benchmark_data.zip"))
            cells = prepare(hub_cells(wh.con))
    anchors = _anchors(cells)
    frame = cells.cells
    print(f"cells: {len(frame)} ({frame['group'].nunique()} models x {frame['benchmark'].nunique()} benchmarks)")
    fit, t_fit = cpu(
        lambda: CapabilitiesIndex(n_bootstrap=0, heldout_folds=0).fit(frame, anchor="winogrande", scale_anchors=anchors)
    )
    print(
        f"fit (penalties chosen on 3 inner folds, then the full fit): {t_fit:.2f} s CPU, {fit.iterations_} iterations"
    )
    _, t_boot = cpu(
        lambda: CapabilitiesIndex(penalty=None, n_bootstrap=args.bootstrap, heldout_folds=0).fit(
            frame, anchor="winogrande", scale_anchors=anchors
        )
    )
    print(
        f"fit + bootstrap B = {args.bootstrap}: {t_boot:.2f} s CPU "
        f"(bootstrap alone ~{t_boot - t_fit:.2f} s; target <= 30 s)"
    )
    groups = pd.Index(sorted(frame["group"].unique()))
    benches = pd.Index(sorted(frame["benchmark"].unique()))
    pr = Problem(
        groups.get_indexer(frame["group"]),
        benches.get_indexer(frame["benchmark"]),
        frame["p"].to_numpy(),
        len(groups),
        len(benches),
        int(benches.get_loc("winogrande")),
    )
    x = np.zeros(pr.n_g + 2 * pr.n_b)
    with threadpool_limits(1):
        _, t_vec = cpu(lambda: [_normal_equations(x, pr, (0.01, 0.01), False) for _ in range(50)])
    _, t_loop = cpu(lambda: [loop_normal_equations(x, pr) for _ in range(5)])
    per_vec, per_loop = t_vec / 50, t_loop / 5
    print(
        f"one Gauss-Newton system: vectorised {per_vec * 1e3:.2f} ms vs per-cell loop {per_loop * 1e3:.1f} ms "
        f"(x{per_loop / per_vec:.0f})"
    )
    print(
        f"fit + bootstrap with the per-cell loop (same iterations): ~{t_boot * per_loop / per_vec:.0f} s CPU "
        "(extrapolated)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
