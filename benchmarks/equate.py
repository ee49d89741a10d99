"""Timing of characteristic-curve equating: vectorised estimator vs a per-cell scipy loop.

Prints fit times for the Artificial Analysis snapshot (when ../shared is beside the checkout)
and for a synthetic 10,000 models × 500 benchmarks matrix at 10% density (target <= 60 s),
next to a straightforward implementation of the same algorithm: one bounded
``scipy.optimize.least_squares`` per benchmark and, per model, a Python loop over its observed
cells to build the grid loss. The naive version is timed on a row subsample of the synthetic
matrix at two sizes and extrapolated linearly in the number of observed cells (both of its
loops are linear in cells); the printout says so.

Run: ``.venv/bin/python benchmarks/equate.py [--models N --benchmarks N --density F]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import least_squares
from scipy.special import expit
from scipy.stats import rankdata

from evalhouse.analytics.bob.lobo import eligible_rows
from evalhouse.analytics.equate.curves import CharacteristicCurveEquating

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the synthetic 2PL generator lives with the tests
from synthetic import aa_frames_from_csv, simulate_2pl  # noqa: E402

SHARED = Path(os.environ.get("EVALHOUSE_SHARED", REPO.parent / "shared"))
AA_CSV = SHARED / "datasets" / "artificial-analysis-2026-07-06" / "aa_models_raw_parsed.csv"


def naive_equating(wide: pd.DataFrame, n_rounds: int = 6) -> pd.Series:
    """The same alternating fit written cell by cell (reference for timing and agreement)."""
    S = wide.to_numpy(dtype=float)
    lo, hi = np.nanmin(S, axis=0), np.nanmax(S, axis=0)
    S = (S - lo) / (hi - lo)
    n_m, n_i = S.shape
    obs = [np.flatnonzero(np.isfinite(S[m])) for m in range(n_m)]
    cols = [np.flatnonzero(np.isfinite(S[:, i])) for i in range(n_i)]
    pct = np.full_like(S, np.nan)
    for i in range(n_i):
        pct[cols[i], i] = (rankdata(S[cols[i], i]) - 0.5) / len(cols[i])
    theta = np.nanmean(pct, axis=1)
    theta = (theta - theta.mean()) / theta.std()
    grid = np.arange(-3.5, 3.5 - 1e-12, 0.02)
    a, b, sigma = np.ones(n_i), np.zeros(n_i), np.ones(n_i)
    W = np.where(np.isfinite(S), 1.0, 0.0)
    for rnd in range(1, n_rounds + 1):
        if rnd >= 2:
            for m in range(n_m):
                for i in obs[m]:
                    z = (S[m, i] - expit(a[i] * (theta[m] - b[i]))) / sigma[i]
                    W[m, i] = max(1e-3, min(1.0, (3 / abs(z)) ** 2)) if z != 0 else 1.0
        for i in range(n_i):
            rows = cols[i]
            sw = np.sqrt(W[rows, i])

            def resid(
                p: np.ndarray,
                rows: np.ndarray = rows,
                sw: np.ndarray = sw,
                i: int = i,
                th: np.ndarray = theta,
            ) -> np.ndarray:
                return sw * (S[rows, i] - expit(p[0] * (th[rows] - p[1])))

            fit = least_squares(resid, [a[i], b[i]], bounds=([0.2, -4], [20, 4]))
            a[i], b[i] = fit.x
            r = S[rows, i] - expit(a[i] * (theta[rows] - b[i]))
            sigma[i] = max(float(np.std(r)), 1e-4)
        new = np.empty(n_m)
        for m in range(n_m):
            loss = np.zeros_like(grid)
            for i in obs[m]:  # the per-cell loop
                loss += W[m, i] * (S[m, i] - expit(a[i] * (grid - b[i]))) ** 2 / sigma[i] ** 2
            k = int(np.argmin(loss))
            t = grid[k]
            if 0 < k < len(grid) - 1:
                den = loss[k - 1] - 2 * loss[k] + loss[k + 1]
                if den > 0:
                    t += float(np.clip(0.5 * 0.02 * (loss[k - 1] - loss[k + 1]) / den, -0.02, 0.02))
            new[m] = t
        mu, sd = new.mean(), new.std()
        theta = (new - mu) / sd
        a, b = np.clip(a * sd, 0.2, 20), np.clip((b - mu) / sd, -4, 4)
    return pd.Series(theta, index=wide.index)


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10_000)
    parser.add_argument("--benchmarks", type=int, default=500)
    parser.add_argument("--density", type=float, default=0.10)
    parser.add_argument("--naive-rows", type=int, default=1000, help="largest row subsample for the naive fit")
    parser.add_argument("--naive-full", action="store_true", help="also time the naive fit on the full matrix")
    args = parser.parse_args()

    if AA_CSV.is_file():
        wide, _ = aa_frames_from_csv(AA_CSV)
        wide = eligible_rows(wide, 5)
        est, t_fast = timed(CharacteristicCurveEquating().fit, wide)
        ref, t_naive = timed(naive_equating, wide.loc[est.models_, list(est.benchmarks_)])
        rho = np.corrcoef(est.theta_.loc[est.models_], ref)[0, 1]
        print(
            f"AA snapshot {wide.shape[0]} x {wide.shape[1]} ({int(wide.notna().sum().sum())} cells): "
            f"vectorised {t_fast:.3f} s, naive per-cell {t_naive:.2f} s, ratio {t_naive / t_fast:.0f}x, "
            f"theta agreement r = {rho:.4f}"
        )
    else:
        print(f"AA snapshot not found at {AA_CSV}; skipping")

    wide, _, _ = simulate_2pl(args.models, args.benchmarks, density=args.density, random_state=0)
    cells = int(wide.notna().sum().sum())
    est, t_fast = timed(CharacteristicCurveEquating().fit, wide)
    verdict = "OK" if t_fast <= 60 else "OVER TARGET"
    print(
        f"synthetic {args.models} x {args.benchmarks} at {args.density:.0%} ({cells} cells): "
        f"vectorised {t_fast:.2f} s (target <= 60 s: {verdict})"
    )
    # Two subsample sizes give a fixed cost (per-benchmark solver set-up) plus a per-cell slope,
    # so the extrapolation does not scale the fixed part with the matrix.
    points = []
    for n_rows in (args.naive_rows // 2, args.naive_rows):
        sub = wide.iloc[:n_rows]
        sub = sub.loc[:, sub.notna().sum() >= 3]
        sub_cells = int(sub.notna().sum().sum())
        _, t_sub = timed(naive_equating, sub)
        points.append((sub_cells, t_sub))
        print(f"naive per-cell scipy on a {n_rows}-row subsample ({sub_cells} cells): {t_sub:.2f} s")
    (c1, t1), (c2, t2) = points
    slope = max((t2 - t1) / (c2 - c1), t2 / c2 * 0.5)
    t_naive = t2 + slope * (cells - c2)
    print(
        f"naive extrapolated to the full matrix (linear in cells through both subsamples): "
        f"{t_naive:.0f} s; ratio naive/vectorised ~ {t_naive / t_fast:.0f}x (extrapolated, not measured)"
    )
    if args.naive_full:
        ref, t_full = timed(naive_equating, wide.loc[est.models_, list(est.benchmarks_)])
        rho = np.corrcoef(est.theta_.loc[est.models_], ref)[0, 1]
        print(
            f"naive per-cell scipy on the full matrix (measured): {t_full:.1f} s; ratio "
            f"{t_full / t_fast:.1f}x; theta agreement r = {rho:.6f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
