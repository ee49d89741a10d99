"""Eq. 1's v* at scale: the K x K Cholesky route against a dense solve — in one run.

v* = (M + r Sigma)^-1 M w with M = A C^-1 A' of rank K = 3 (the training axes) and diagonal Sigma
is solved by :meth:`evalhouse.analytics.items.optimal.ItemModel.v_star` without forming M. The
baseline is the dense solve ``numpy.linalg.solve(M + r Sigma, M w)``, which needs the m x m matrix
(m = 10^6 would be 8 TB): both run at ``--dense`` items, where they must agree, and the Cholesky
route then runs at ``--items`` (default 10^6) items, with the welfare of v*, the diagonal rule
and the best uniform weights (each one more pass over the items).

    .venv/bin/python benchmarks/items_vstar.py            # 10^6 items; dense baseline at 3,000
    .venv/bin/python benchmarks/items_vstar.py --small    # 10^5 items; dense baseline at 1,000
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from evalhouse.analytics.items.optimal import ItemModel

KAPPA = np.array([8.2e-8, 2.0e-4, 5.0e-4])  # the default cost scenario (paper 003 section 4.2)


def panel(n: int, seed: int = 0) -> ItemModel:
    """Slopes of the simulator's size (gain 0-0.25 over each axis's effort range), seed variance, w."""
    rng = np.random.default_rng(seed)
    ranges = np.array([2.0e8, 8.0e4, 3.2e4])
    a = rng.uniform(-0.02, 0.25, (n, 3)) / ranges
    return ItemModel.from_slopes(a, KAPPA, rng.uniform(0.01, 0.12, n) ** 2, rng.uniform(1, 5, n))


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--dense", type=int, default=3000)
    ap.add_argument("--small", action="store_true", help="10^5 items, dense baseline at 1,000")
    args = ap.parse_args()
    n, n_dense = (100_000, 1000) if args.small else (args.items, args.dense)
    small = panel(n_dense)
    r = small.r0()
    m = small.B @ small.B.T
    dense_s = best_of(lambda: np.linalg.solve(m + r * np.diag(small.sigma), m @ small.w))
    chol_small = best_of(lambda: small.v_star(r))
    direct = np.linalg.solve(m + r * np.diag(small.sigma), m @ small.w)
    err = float(np.max(np.abs(small.v_star(r) - direct)) / np.max(np.abs(direct)))
    big = panel(n, seed=1)
    r_big = big.r0()
    chol_big = best_of(lambda: big.v_star(r_big))
    t0 = time.perf_counter()
    v = big.v_star(r_big)
    shares = {
        "diagonal": big.welfare(big.diagonal_rule(r_big), r_big) / big.welfare(v, r_big),
        "uniform": big.welfare(big.uniform(r_big), r_big) / big.welfare(v, r_big),
    }
    with_welfare = time.perf_counter() - t0
    print(
        f"dense baseline at {n_dense:,} items: numpy.linalg.solve {dense_s * 1e3:.1f} ms vs Cholesky of the 3 x 3 "
        f"system {chol_small * 1e3:.3f} ms: ratio {dense_s / chol_small:,.0f}x (max relative difference {err:.1e})"
    )
    print(
        f"{n:,} items: v* in {chol_big * 1e3:.1f} ms; with the welfare of v*, the diagonal rule and uniform weights "
        f"{with_welfare * 1e3:.1f} ms (at r = r0: diagonal rule {shares['diagonal']:.3f}, uniform "
        f"{shares['uniform']:.3f} of W(v*)); a dense solve would hold an {n:,} x {n:,} matrix "
        f"({8 * n * n / 1e12:,.0f} TB)"
    )
    print(json.dumps({"n_dense": n_dense, "dense_s": dense_s, "cholesky_small_s": chol_small, "max_rel_diff": err,
                      "n": n, "cholesky_s": chol_big, "with_welfare_s": with_welfare, "shares": shares}))  # fmt: skip


if __name__ == "__main__":
    main()
