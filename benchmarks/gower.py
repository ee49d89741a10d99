"""Gower distances (the kNN imputer of paper 002's grid) over only the rows observed on both sides.

`evalhouse.analytics.matrix.impute.gower_distances` adds, column by column, ``|a - b| / range`` over the
pairs observed on both sides. The baseline is the former form, kept here: every column summed over the
whole rows x rows matrix with the unobserved pairs masked out. One run, seeded random matrices of the
shapes and densities the grid meets (a sparse many-source matrix like the legacy datastore's, a
denser one, a dense one); the script checks the two give the same matrix, bit for bit.

Usage: `.venv/bin/python benchmarks/gower.py`.
"""

from __future__ import annotations

import time

import numpy as np

from evalhouse.analytics.matrix.impute import gower_distances


def whole_rows(A: np.ndarray, B: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """The baseline: each column over every pair of rows, the unobserved pairs masked to zero."""
    num = np.zeros((A.shape[0], B.shape[0]))
    den = np.zeros_like(num)
    for j in range(A.shape[1]):
        a, b = A[:, j], B[:, j]
        both = ~np.isnan(a)[:, None] & ~np.isnan(b)[None, :]
        num += np.where(both, np.abs(a[:, None] - b[None, :]) / ranges[j], 0.0)
        den += both
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.inf)


def best_of(fn, *args, repeat: int = 3) -> tuple[float, np.ndarray]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'matrix':>26}  {'baseline':>9}  {'now':>9}  ratio  same")
    for n, p, density in ((1500, 100, 0.1), (1500, 100, 0.3), (1500, 100, 0.5), (800, 60, 0.6), (400, 40, 1.0)):
        A = rng.random((n, p))
        A[rng.random((n, p)) > density] = np.nan
        ranges = np.nanmax(A, axis=0) - np.nanmin(A, axis=0)
        base_s, base = best_of(whole_rows, A, A, ranges)
        now_s, now = best_of(gower_distances, A, A, ranges)
        same = np.array_equal(base, now)
        label = f"{n} x {p}, {density:.0%} observed"
        print(f"{label:>26}  {base_s * 1000:7.0f} ms  {now_s * 1000:7.0f} ms  {base_s / now_s:4.1f}x  {same}")
        if not same:
            raise SystemExit("the two forms disagree")


if __name__ == "__main__":
    main()
