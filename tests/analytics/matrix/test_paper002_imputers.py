"""Paper 002's imputers added to the grid, each checked against a reference on a small matrix:
USVT and one-sided matrix completion against the paper's formulas written out here, mean fill
against correlations computed pair by pair, missForest against Stekhoven & Bühlmann's
algorithm written out here, and the eigenvalue floor chosen on training cells only.
Tolerances are chosen ones (floating point), none is a paper's precision.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor

from evalhouse.analytics.matrix.correlation import EIG_FLOORS, CorrelationImputer, usvt
from evalhouse.analytics.matrix.holdout import holdout_mask
from evalhouse.analytics.matrix.impute import MissForestImputer, standardise
from evalhouse.analytics.matrix.osmc import OneSidedMC, osmc_loss, product_statistics


def factor_data(n: int = 120, p: int = 8, missing: float = 0.4, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    loadings = rng.standard_normal((2, p)) + np.array([[1.2], [0.0]])
    X = rng.standard_normal((n, 2)) @ loadings + 0.4 * rng.standard_normal((n, p))
    X[rng.random(X.shape) < missing] = np.nan
    return pd.DataFrame(X, columns=[f"b{j}" for j in range(p)])


def test_usvt_is_chatterjees_estimator() -> None:
    """Chatterjee (2015), written out: zero-fill the unobserved entries, q = observed share, keep the
    singular values >= (2 + eta) sqrt(n q), divide by q, clip to [-1, 1]."""
    rng = np.random.default_rng(1)
    L = rng.uniform(0.5, 0.95, 30)
    C = np.outer(L, L)
    np.fill_diagonal(C, 1.0)
    observed = rng.random(C.shape) < 0.7
    observed = observed & observed.T
    np.fill_diagonal(observed, True)
    eta, n = 0.01, 30
    q = observed.sum() / observed.size
    Y = np.where(observed, C, 0.0)
    U, s, Vt = np.linalg.svd(Y)
    expected = np.zeros_like(Y)
    for k in range(len(s)):
        if s[k] >= (2 + eta) * np.sqrt(n * q):
            expected += s[k] * np.outer(U[:, k], Vt[k])
    expected = np.clip(expected / q, -1, 1)
    np.testing.assert_allclose(usvt(C, observed, eta=eta), expected, atol=1e-12)
    assert np.abs(expected[~observed] - C[~observed]).mean() < 0.2  # it recovers the one-factor structure
    # nothing above the threshold: the estimate is 0, so the gaps get 0 (zero fill)
    assert not usvt(0.01 * C, observed, eta=eta).any()


def test_usvt_imputer_fills_only_the_gaps() -> None:
    X = factor_data(p=6)
    X.iloc[:60, 0] = np.nan  # b0 and b1 never co-observed
    X.iloc[60:, 1] = np.nan
    imp = CorrelationImputer("usvt", random_state=0).fit(X)
    Z, _, _ = standardise(X)
    pairwise = pd.DataFrame(Z).corr(min_periods=3).to_numpy().copy()
    gaps = np.isnan(pairwise)
    assert gaps.sum() == 2 and imp.n_filled_ == 2
    np.testing.assert_allclose(imp.filled_[~gaps], pairwise[~gaps], atol=1e-12)
    np.fill_diagonal(pairwise, 1.0)
    want = usvt(np.nan_to_num(pairwise), ~np.isnan(pairwise), eta=0.01)
    assert imp.filled_[0, 1] == pytest.approx(want[0, 1])
    assert not imp.completed_.isna().any().any()


def test_mean_fill_is_the_mean_of_the_observed_pairwise_correlations() -> None:
    X = factor_data(p=5, seed=2)
    X.iloc[:60, 0] = np.nan
    X.iloc[60:, 1] = np.nan
    imp = CorrelationImputer("mean", random_state=0).fit(X)
    Z, _, _ = standardise(X)
    seen = ~np.isnan(Z)
    corr = {}
    for i in range(5):
        for j in range(i + 1, 5):
            both = seen[:, i] & seen[:, j]
            if both.sum() >= 3:
                corr[(i, j)] = np.corrcoef(Z[both, i], Z[both, j])[0, 1]
    assert (0, 1) not in corr
    assert imp.filled_[0, 1] == pytest.approx(np.mean(list(corr.values())), abs=1e-12)
    assert imp.filled_[2, 3] == pytest.approx(corr[(2, 3)], abs=1e-12)


def brute_force_loss(V: np.ndarray, Z: np.ndarray) -> float:
    """Paper 002, Appendix G.1, literally: every product of two observed standardised scores in one
    row against v_j.v_j', off-diagonal and diagonal terms each averaged over their own count."""
    off, diag = [], []
    for row in Z:
        seen = np.flatnonzero(~np.isnan(row))
        for j in seen:
            for k in seen:
                term = (row[j] * row[k] - V[j] @ V[k]) ** 2
                (diag if j == k else off).append(term)
    return float(np.mean(off) + np.mean(diag))


def test_osmc_minimises_the_papers_loss_and_predicts_in_factor_space() -> None:
    X = factor_data(n=40, p=5, seed=3)
    imp = OneSidedMC(2).fit(X)
    Z, mean, sd = standardise(X)
    V = imp.components_
    rng = np.random.default_rng(0)
    W = rng.standard_normal(V.shape)
    assert osmc_loss(W, product_statistics(Z))[0] == pytest.approx(brute_force_loss(W, Z), rel=1e-10)
    # the fitted V is a minimum of the paper's loss: zero gradient, and no nearby point is lower
    at = brute_force_loss(V, Z)
    eps = 1e-5
    grad = np.zeros_like(V)
    for idx in np.ndindex(V.shape):
        E = np.zeros_like(V)
        E[idx] = eps
        grad[idx] = (brute_force_loss(V + E, Z) - brute_force_loss(V - E, Z)) / (2 * eps)
    assert np.abs(grad).max() < 1e-5
    assert all(brute_force_loss(V + 0.01 * rng.standard_normal(V.shape), Z) > at for _ in range(5))
    # z_j = v_j' V_S^+ z_S: least-squares factor scores from the row's observed cells
    i = int(np.flatnonzero(np.isnan(Z).any(axis=1) & ((~np.isnan(Z)).sum(axis=1) >= 2))[0])
    seen = ~np.isnan(Z[i])
    scores = np.linalg.lstsq(V[seen], Z[i, seen], rcond=None)[0]
    expected = (V[~seen] @ scores) * sd[~seen] + mean[~seen]
    np.testing.assert_allclose(imp.completed_.iloc[i].to_numpy()[~seen], expected, atol=1e-9)
    theta = V @ V.T
    np.testing.assert_allclose(imp.correlation_.to_numpy(), theta / np.sqrt(np.outer(np.diag(theta), np.diag(theta))))
    assert OneSidedMC(50).fit(X).rank_ == 5  # capped at the number of benchmarks


def missforest_reference(X: np.ndarray, trees: int, max_iter: int, seed: int) -> tuple[np.ndarray, list[float]]:
    """Stekhoven & Buhlmann's algorithm as their paper states it: mean start; columns by increasing
    missingness; a forest per column on its observed rows; stop when the change
    sum((new - old)^2) / sum(new^2) increases, keeping the previous imputation. Forest k seeded seed + k."""
    miss = np.isnan(X)
    ximp = np.where(miss, np.nanmean(X, axis=0), X)
    cols = sorted((j for j in range(X.shape[1]) if miss[:, j].any()), key=lambda j: (miss[:, j].sum(), j))
    changes: list[float] = []
    k = 0
    for _ in range(max_iter):
        old = ximp.copy()
        for j in cols:
            rest = [c for c in range(X.shape[1]) if c != j]
            forest = RandomForestRegressor(n_estimators=trees, max_features="sqrt", random_state=seed + k)
            forest.fit(ximp[~miss[:, j]][:, rest], X[~miss[:, j], j])
            ximp[miss[:, j], j] = forest.predict(ximp[miss[:, j]][:, rest])
            k += 1
        change = np.sum((ximp - old) ** 2) / np.sum(ximp**2)
        if changes and change > changes[-1]:
            return old, changes
        changes.append(float(change))
    return ximp, changes


def test_missforest_is_the_published_algorithm() -> None:
    X = factor_data(n=50, p=5, seed=4)
    imp = MissForestImputer(15, max_iter=6, random_state=3)
    ours = imp.fit_transform(X)
    ref, changes = missforest_reference(X.to_numpy(), 15, 6, 3)
    np.testing.assert_allclose(ours.to_numpy(), ref, atol=1e-12)
    assert imp.changes_ == pytest.approx(changes) and imp.n_iter_ == len(changes)
    assert all(a >= b for a, b in itertools.pairwise(changes))  # kept rounds never grow


def test_the_eigenvalue_floor_is_chosen_on_training_cells_only() -> None:
    """The floor is the best of EIG_FLOORS by held-out R2 on a mask of the cells fit() is given; the
    cells held out from fit() cannot move it."""
    X = factor_data(n=150, p=8, seed=5)
    outer = holdout_mask(X, random_state=7)
    train = X.mask(outer)
    imp = CorrelationImputer("zero", random_state=0).fit(train)
    assert set(imp.floor_r2_) == set(EIG_FLOORS)
    assert imp.eig_floor_ == max(imp.floor_r2_, key=imp.floor_r2_.get)
    garbage = X.copy()
    garbage[outer] = 1e6  # only the outer cells change
    again = CorrelationImputer("zero", random_state=0).fit(garbage.mask(outer))
    assert again.eig_floor_ == imp.eig_floor_ and again.floor_r2_ == imp.floor_r2_
    fixed = CorrelationImputer("zero", eig_floor=0.05).fit(train)
    assert fixed.eig_floor_ == 0.05 and fixed.floor_r2_ is None
