"""What ML factor extraction costs with its analytic gradient, against L-BFGS-B's finite differences.

`evalhouse.analytics.factor.extraction` gives the ML objective R's analytic gradient (``FAgr``);
factor_analyzer 0.5.1 — the baseline — lets L-BFGS-B difference the objective (p + 1 objective
evaluations per gradient). Both are timed here in one run on the same correlation matrices: the
72 of the extraction test (planted factor models and plain noise, 5-12 variables, k = 1-3) and
the prediction ladder's fold matrices on the pinned Artificial Analysis snapshot (paper 000's 12
benchmarks less one target, k = 3). The script prints the time of each, their ratio, and how far
the two optima are apart (objective and loadings).

Usage: `.venv/bin/python benchmarks/efa_extraction.py [path/to/shared]`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from evalhouse.analytics.factor.extraction import (
    UNIQUENESS_BOUNDS,
    extract,
    ml_objective,
    start_values,
)

REPEATS = 5


def planted(seed: int = 7, n: int = 120) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(12):
        p, k = int(rng.integers(5, 13)), int(rng.integers(1, 4))
        loadings = rng.uniform(0.3, 0.9, size=(p, k)) * rng.choice([-1, 1], size=(p, k))
        X = rng.normal(size=(n, k)) @ loadings.T + rng.normal(scale=0.6, size=(n, p))
        out += [np.corrcoef(X, rowvar=False), np.corrcoef(rng.normal(size=(n, p)), rowvar=False)]
    return out


def aa_folds(shared: Path) -> list[np.ndarray]:
    """Leave-one-benchmark-out correlation matrices of paper 000's complete-case grid, 5 folds each."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from synthetic import aa_frames_from_csv  # the tests' reader of the pinned AA CSV

    from evalhouse.analytics.reproduce.paper000 import analysis_grids

    csv = shared / "datasets" / "artificial-analysis-2026-07-06" / "aa_models_raw_parsed.csv"
    wide, meta = aa_frames_from_csv(csv)
    Z = analysis_grids(wide, meta)["complete_case"].to_numpy(dtype=float)
    rng = np.random.default_rng(0)
    out = []
    for t in range(Z.shape[1]):
        X = np.delete(Z, t, axis=1)
        for fold in np.array_split(rng.permutation(len(X)), 5):
            out.append(np.corrcoef(np.delete(X, fold, axis=0), rowvar=False))
    return out


def finite_differences(corr: np.ndarray, k: int) -> np.ndarray:
    """factor_analyzer's ML fit: the same objective and start, no gradient given."""
    x0 = start_values(corr.copy(), "smc")
    res = minimize(
        ml_objective, x0, method="L-BFGS-B", bounds=[UNIQUENESS_BOUNDS] * len(x0), options={"maxiter": 1000},
        args=(corr, k),
    )  # fmt: skip
    return res.x


def timed(fits: list[tuple[np.ndarray, int]], fit) -> tuple[float, list]:
    best, results = float("inf"), []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        results = [fit(c, k) for c, k in fits]
        best = min(best, time.perf_counter() - t0)
    return best, results


def main() -> None:
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared"
    sets = {"72 test matrices (k = 1-3)": [(c, k) for c in planted() for k in (1, 2, 3)]}
    if (shared / "datasets").is_dir():
        sets["paper 000 ladder folds (k = 3)"] = [(c, 3) for c in aa_folds(shared)]
    else:
        print(f"(no ../shared at {shared}: the paper-000 folds are skipped)")
    head = ("matrices", "n", "analytic", "finite diff", "ratio", "Δ objective", "Δ uniqueness")
    print("{:34} {:>4} {:>10} {:>12} {:>6} {:>12} {:>13}".format(*head))
    for name, fits in sets.items():
        t_an, ours = timed(fits, lambda c, k: extract(c, k, "ml", "smc"))
        t_fd, theirs = timed(fits, finite_differences)
        pairs = list(zip(ours, theirs, fits, strict=True))
        d_obj = max(ml_objective(o.uniquenesses, c, k) - ml_objective(x, c, k) for o, x, (c, k) in pairs)
        d_psi = float(np.median([np.abs(o.uniquenesses - x).max() for o, x, _ in pairs]))
        row = (name, len(fits), f"{t_an * 1e3:.1f} ms", f"{t_fd * 1e3:.1f} ms", f"{t_fd / t_an:.1f}×", f"{d_obj:.1e}")
        print("{:34} {:4d} {:>10} {:>12} {:>6} {:>12} {:>13.1e}".format(*row, d_psi))
    print("ratio = finite differences / analytic (best of 5 runs); Δ objective = the largest ours - theirs")
    print("(≤ ~0: the analytic fit is never worse); Δ uniqueness = the median largest |ψ ours - ψ theirs|")


if __name__ == "__main__":
    main()
