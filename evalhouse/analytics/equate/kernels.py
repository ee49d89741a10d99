"""Numerical kernels of characteristic-curve equating, vectorised over observed cells.

The grid search is a chunked (models x grid x benchmarks) contraction written as two matrix
products; the curve fit accumulates its 2x2 normal equations with ``np.bincount`` over observed
cells. There is no Python loop over models, benchmarks or cells.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from scipy.stats import rankdata

from evalhouse.errors import InputError

# Bytes of float64 working memory per row chunk of the grid search (models x grid and
# models x benchmarks blocks); keeps 10^4 x 500 inputs well below a gigabyte.
CHUNK_BYTES = 32 * 2**20


def midrank_percentiles(S: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Within-column mid-rank percentiles ``(rank - 0.5) / n`` with average ranks for ties."""
    filled = np.where(obs, S, np.nan)
    # rankdata with nan_policy="omit" ranks each column over its observed cells only.
    ranks = rankdata(filled, axis=0, method="average", nan_policy="omit")
    n = obs.sum(axis=0)
    return np.where(obs, (ranks - 0.5) / np.maximum(n, 1), np.nan)


def standardise(x: np.ndarray) -> np.ndarray:
    sd = float(np.std(x))
    if not sd > 0:
        raise InputError("all initial abilities are equal: every model has the same within-benchmark ranks")
    return (x - float(np.mean(x))) / sd


def robust_cells(z: np.ndarray, cap: float, floor: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.maximum(floor, np.minimum(1.0, (cap / np.abs(z)) ** 2))


def residual_sd(r: np.ndarray, cols: np.ndarray, n_i: int, floor: float) -> np.ndarray:
    """Population SD of the observed residuals per benchmark, floored."""
    n = np.bincount(cols, minlength=n_i).astype(float)
    mean = np.bincount(cols, r, minlength=n_i) / n
    var = np.bincount(cols, (r - mean[cols]) ** 2, minlength=n_i) / n
    return np.maximum(np.sqrt(var), floor)


def logit_start(
    t: np.ndarray,
    s: np.ndarray,
    cols: np.ndarray,
    n_i: int,
    *,
    a_bounds: tuple[float, float],
    b_bounds: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray]:
    """Per-benchmark linear regression of logit(s) on θ as a starting point (a = slope)."""
    y = np.log(np.clip(s, 0.02, 0.98) / (1 - np.clip(s, 0.02, 0.98)))
    n = np.bincount(cols, minlength=n_i).astype(float)
    mt = np.bincount(cols, t, minlength=n_i) / n
    my = np.bincount(cols, y, minlength=n_i) / n
    ctt = np.bincount(cols, (t - mt[cols]) ** 2, minlength=n_i)
    cty = np.bincount(cols, (t - mt[cols]) * (y - my[cols]), minlength=n_i)
    slope = np.where(ctt > 0, cty / np.where(ctt > 0, ctt, 1), 1.0)
    a = np.clip(slope, *a_bounds)
    b = np.clip(mt - my / a, *b_bounds)
    return a, b


def fit_curves_batched(
    t: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    cols: np.ndarray,
    n_i: int,
    *,
    a0: np.ndarray,
    b0: np.ndarray,
    a_bounds: tuple[float, float],
    b_bounds: tuple[float, float],
    max_iter: int,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Bounded weighted least squares for all curves at once (projected Levenberg–Marquardt).

    Minimises ``Σ_m w_mi (s_mi - f(θ_m; a_i, b_i))²`` per benchmark. The 2×2 normal equations of
    every benchmark are accumulated with ``bincount`` over observed cells and solved in closed
    form; a parameter sitting on a bound whose descent direction points outward is held fixed
    (active set), the others take the damped Gauss–Newton step, and the trial point is
    projected onto the box. Status per benchmark: 1 converged, 2 hit ``max_iter``.
    """
    a, b = a0.astype(float).copy(), b0.astype(float).copy()
    a_lo, a_hi = a_bounds
    b_lo, b_hi = b_bounds

    def loss_of(a_: np.ndarray, b_: np.ndarray) -> np.ndarray:
        r = s - expit(a_[cols] * (t - b_[cols]))
        return np.bincount(cols, w * r * r, minlength=n_i)

    loss = loss_of(a, b)
    mu = np.full(n_i, 1e-3)
    done = np.zeros(n_i, dtype=bool)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        ac, bc = a[cols], b[cols]
        d = t - bc
        f = expit(ac * d)
        r = s - f
        dfd = f * (1 - f)
        ja = dfd * d
        jb = -ac * dfd
        ga = np.bincount(cols, w * ja * r, minlength=n_i)
        gb = np.bincount(cols, w * jb * r, minlength=n_i)
        haa = np.bincount(cols, w * ja * ja, minlength=n_i)
        hab = np.bincount(cols, w * ja * jb, minlength=n_i)
        hbb = np.bincount(cols, w * jb * jb, minlength=n_i)
        # Active set: on a bound with the (descent) gradient pointing out of the box.
        act_a = ((a <= a_lo) & (ga < 0)) | ((a >= a_hi) & (ga > 0))
        act_b = ((b <= b_lo) & (gb < 0)) | ((b >= b_hi) & (gb > 0))
        daa = haa * (1 + mu) + 1e-12
        dbb = hbb * (1 + mu) + 1e-12
        det = daa * dbb - hab * hab
        det = np.where(det > 0, det, 1e-300)
        step_a = (dbb * ga - hab * gb) / det
        step_b = (daa * gb - hab * ga) / det
        step_a = np.where(act_b & ~act_a, ga / daa, step_a)
        step_b = np.where(act_a & ~act_b, gb / dbb, step_b)
        step_a = np.where(act_a | done, 0.0, step_a)
        step_b = np.where(act_b | done, 0.0, step_b)
        a_new = np.clip(a + step_a, a_lo, a_hi)
        b_new = np.clip(b + step_b, b_lo, b_hi)
        new_loss = loss_of(a_new, b_new)
        accept = (new_loss <= loss) & ~done
        small = (loss - new_loss) <= tol * (loss + tol)
        moved = np.maximum(np.abs(a_new - a), np.abs(b_new - b))
        # Converged when an accepted step no longer lowers the loss, the projected step is
        # (numerically) zero, or damping has grown so large that no descent is left.
        newly_done = ~done & ((accept & small) | (moved < 1e-12) | (mu > 1e12))
        a = np.where(accept, a_new, a)
        b = np.where(accept, b_new, b)
        loss = np.where(accept, new_loss, loss)
        mu = np.where(accept, np.maximum(mu * 0.3, 1e-12), mu * 10.0)
        done |= newly_done
        if done.all():
            break
    status = np.where(done, 1, 2)
    return a, b, status, it


def fit_theta_grid(
    S: np.ndarray,
    obs: np.ndarray,
    w_cells: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    *,
    a: np.ndarray,
    b: np.ndarray,
    sigma: np.ndarray,
    omega: np.ndarray,
    grid: np.ndarray,
    step: float,
) -> tuple[np.ndarray, int]:
    """Grid search plus parabolic refinement of every ability, batched over models.

    ``L_m(g) = Σ_i B_mi (s_mi - f_i(g))² = const - 2 (A F)_mg + (B F²)_mg`` with
    ``B = ω w / σ²`` and ``A = B s``: the (models × grid × benchmarks) contraction is two matrix
    products per row chunk. The three losses around each minimum are then recomputed exactly
    from the observed cells (no cancellation) for the parabola.
    """
    n_m, n_i = S.shape
    k = grid.size
    F = expit(a[:, None] * (grid[None, :] - b[:, None]))  # benchmarks × grid
    F2 = F * F
    Wd = np.zeros((n_m, n_i))
    Wd[rows, cols] = w_cells
    scale = omega / sigma**2
    chunk = max(1, int(CHUNK_BYTES // (8 * (3 * n_i + 2 * k))))
    best = np.empty(n_m, dtype=np.int64)
    for start in range(0, n_m, chunk):
        stop = min(n_m, start + chunk)
        B = Wd[start:stop] * scale[None, :]
        A = B * np.where(obs[start:stop], S[start:stop], 0.0)
        L = B @ F2 - 2.0 * (A @ F)
        best[start:stop] = np.argmin(L, axis=1)
    idx = np.clip(best, 1, k - 2)
    # Exact losses at idx-1, idx, idx+1 from the observed cells.
    cb = scale[cols] * w_cells
    s_cells = S[rows, cols]
    losses = np.empty((3, n_m))
    for j, off in enumerate((-1, 0, 1)):
        g = grid[idx[rows] + off]
        r = s_cells - expit(a[cols] * (g - b[cols]))
        losses[j] = np.bincount(rows, cb * r * r, minlength=n_m)
    lm, l0, lp = losses
    denom = lm - 2 * l0 + lp
    with np.errstate(divide="ignore", invalid="ignore"):
        offset = 0.5 * step * (lm - lp) / denom
    interior = (best > 0) & (best < k - 1)
    ok = interior & (denom > 0) & np.isfinite(offset)
    offset = np.where(ok, np.clip(offset, -step, step), 0.0)
    theta = grid[best] + np.where(best == idx, offset, 0.0)
    edge = int(np.sum(~interior))
    return theta, edge
