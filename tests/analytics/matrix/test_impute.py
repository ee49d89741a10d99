"""Imputers and the paper-002 held-out evaluation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalhouse.analytics.matrix.correlation import (
    CorrelationImputer,
    conditional_gaussian_predict,
    repair_correlation,
)
from evalhouse.analytics.matrix.holdout import evaluate_imputer, heldout_score, holdout_mask, select_imputer
from evalhouse.analytics.matrix.impute import GowerKNNImputer, MissForestImputer, SoftImpute, gower_distances, top_svd

N = np.nan


def low_rank(n: int = 80, p: int = 12, *, rank: int = 2, missing: float = 0.3, noise: float = 0.05, seed: int = 0):
    rng = np.random.default_rng(seed)
    full = rng.standard_normal((n, rank)) @ rng.standard_normal((rank, p)) + noise * rng.standard_normal((n, p))
    holes = full.copy()
    holes[rng.random((n, p)) < missing] = np.nan
    cols = [f"b{j}" for j in range(p)]
    return pd.DataFrame(full, columns=cols), pd.DataFrame(holes, columns=cols)


def test_holdout_counts_follow_the_paper_formula():
    counts = [10, 5, 4, 3, 2, 1]
    n = max(counts)
    X = pd.DataFrame({f"c{c}": [1.0] * c + [N] * (n - c) for c in counts})
    mask = holdout_mask(X, random_state=0)
    # max(1, min(floor(0.2 n), n - 2)) for n > 2; none for n <= 2
    assert mask.sum(axis=0).tolist() == [2, 1, 1, 1, 0, 0]
    assert not (mask & X.isna().to_numpy()).any()
    assert np.array_equal(mask, holdout_mask(X, random_state=0))


def test_heldout_score_by_hand():
    X = pd.DataFrame({"a": [0.0, 2, 4, 6, 8], "b": [1.0, 3, 5, 7, 9]})
    mask = np.zeros((5, 2), dtype=bool)
    mask[4, 0] = mask[0, 1] = True
    completed = X.copy()
    completed.iloc[4, 0] = 5.0  # truth 8; training mean 3, var 20/3
    completed.iloc[0, 1] = 6.0  # truth 1; predicts the training mean
    s = heldout_score(X, mask, completed)
    assert s.mse.tolist() == pytest.approx([1.35, 3.75])
    assert s.base.tolist() == pytest.approx([3.75, 3.75])
    assert s.r2 == pytest.approx(1 - 2.55 / 3.75)
    assert s.rmse == pytest.approx(np.sqrt(2.55))
    assert s.factored


def test_softimpute_recovers_low_rank_and_keeps_observed_cells():
    full, holes = low_rank()
    imp = SoftImpute(2, random_state=0)
    done = imp.fit_transform(holes)
    seen = holes.notna().to_numpy()
    assert np.array_equal(done.to_numpy()[seen], holes.to_numpy()[seen])
    err = (done - full).to_numpy()[~seen]
    assert np.sqrt((err**2).mean()) < 0.2 * full.to_numpy().std()
    assert len(imp.lambdas_) == 30 and imp.lambdas_[0] / imp.lambdas_[-1] == pytest.approx(100)
    assert imp.rank_ <= 2 and imp.path_r2_ is not None
    again = SoftImpute(2, random_state=0).fit_transform(holes)
    assert np.array_equal(done.to_numpy(), again.to_numpy())


def test_softimpute_transform_projects_new_rows():
    full, holes = low_rank(n=120, seed=1)
    imp = SoftImpute(2, shrinkage=0.5).fit(holes.iloc[:100])
    new = holes.iloc[100:]
    filled = imp.transform(new)
    gap = new.isna().to_numpy()
    err = (filled - full.iloc[100:]).to_numpy()[gap]
    assert np.sqrt((err**2).mean()) < 0.3 * full.to_numpy().std()


def test_select_imputer_picks_the_planted_rank():
    _, holes = low_rank(rank=2, seed=2)
    best, score, table = select_imputer(SoftImpute(random_state=0), {"rank": [1, 2, 3, 4]}, holes, random_state=0)
    assert best.rank in (2, 3)
    assert score.r2 == pytest.approx(table["r2"].max())
    assert score.r2 > 0.9


def test_gower_distance_by_hand():
    A = np.array([[0.0, 0.0], [1.0, N], [0.5, 1.0]])
    D = gower_distances(A, A, np.array([1.0, 1.0]))
    assert D[0, 1] == pytest.approx(1.0) and D[0, 2] == pytest.approx(0.75) and D[1, 2] == pytest.approx(0.5)
    assert np.isinf(gower_distances(np.array([[N, 1.0]]), np.array([[1.0, N]]), np.ones(2))[0, 0])


@pytest.mark.parametrize("density", [0.05, 0.3, 0.6, 0.95, 1.0])
def test_gower_distance_equals_the_pairwise_definition(density: float):
    """Sparse columns take the observed block, dense ones the whole rows: both give each pair's
    mean of |a - b| / range over its co-observed columns, as written pair by pair."""
    rng = np.random.default_rng(int(density * 100))
    A, B = rng.random((40, 9)), rng.random((25, 9))
    A[rng.random(A.shape) > density] = N
    B[rng.random(B.shape) > density] = N
    ranges = rng.uniform(0.5, 2.0, 9)
    want = np.full((40, 25), np.inf)
    for i in range(40):
        for k in range(25):
            co = [j for j in range(9) if not np.isnan(A[i, j]) and not np.isnan(B[k, j])]
            if co:
                want[i, k] = sum(abs(A[i, j] - B[k, j]) / ranges[j] for j in co) / len(co)
    got = gower_distances(A, B, ranges)
    assert np.array_equal(np.isinf(got), np.isinf(want))
    assert np.allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-12, atol=0)


def test_knn_weighted_mean_by_hand():
    X = pd.DataFrame({"a": [0.0, 1.0, 0.5, 0.9], "b": [0.0, N, 1.0, 0.8]})
    # r1's donors for b by Gower distance on a: r3 0.1, r2 0.5, r0 1.0
    weighted = GowerKNNImputer(2).fit_transform(X)
    assert weighted.loc[1, "b"] == pytest.approx((0.9 * 0.8 + 0.5 * 1.0) / 1.4)
    plain = GowerKNNImputer(2, weighted=False).fit_transform(X)
    assert plain.loc[1, "b"] == pytest.approx(0.9)
    new = GowerKNNImputer(1).fit(X).transform(pd.DataFrame({"a": [0.45], "b": [N]}))
    assert new.loc[0, "b"] == pytest.approx(1.0)


def test_conditional_gaussian_predictor():
    theta = np.array([[1.0, 0.5], [0.5, 1.0]])
    assert conditional_gaussian_predict(np.array([[1.0, N]]), theta)[0, 1] == pytest.approx(0.5)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 4))
    theta = repair_correlation(A @ A.T)
    z = np.array([[0.3, N, -1.2, N], [N, N, N, N]])
    out = conditional_gaussian_predict(z, theta)
    S, M = [0, 2], [1, 3]
    expected = theta[np.ix_(M, S)] @ np.linalg.inv(theta[np.ix_(S, S)]) @ z[0, S]
    assert out[0, M] == pytest.approx(expected)
    assert out[1].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_repair_returns_a_correlation_matrix():
    C = np.array([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]])  # indefinite
    fixed = repair_correlation(C, eig_floor=0.01)
    assert np.allclose(np.diag(fixed), 1.0) and np.allclose(fixed, fixed.T)
    assert np.linalg.eigvalsh(fixed).min() > 0


@pytest.mark.parametrize("fill", ["zero", "mean", "softimpute"])
def test_correlation_imputer_fills_never_coobserved_pairs(fill):
    full, _ = low_rank(n=90, p=6, rank=1, noise=0.3, seed=3)
    X = full.copy()
    X.iloc[:45, 0] = N  # b0 and b1 are never observed together
    X.iloc[45:, 1] = N
    imp = CorrelationImputer(fill, random_state=0).fit(X)
    assert imp.n_filled_ == 2
    assert np.linalg.eigvalsh(imp.correlation_.to_numpy()).min() > 0
    assert not imp.completed_.isna().any().any()
    if fill == "zero":
        # repaired matrix keeps the filled 0 close to 0 for the (b0, b1) pair
        assert abs(imp.correlation_.loc["b0", "b1"]) < 0.5


def test_missforest_runs_and_is_seeded():
    _, holes = low_rank(n=40, p=5, seed=4)
    imp = MissForestImputer(10, max_iter=2, random_state=0)
    a = imp.fit_transform(holes)
    assert imp.record_.diagnostics["n_iter"] <= 2
    b = MissForestImputer(10, max_iter=2, random_state=0).fit_transform(holes)
    assert not a.isna().any().any() and np.array_equal(a.to_numpy(), b.to_numpy())


def test_r2_gate_flags_unfactorable_fits():
    rng = np.random.default_rng(0)
    noise = pd.DataFrame(rng.standard_normal((80, 8)))
    noise[rng.random((80, 8)) < 0.3] = N
    score = evaluate_imputer(CorrelationImputer("zero"), noise, random_state=0)
    assert score.r2 < 0.2 and not score.factored
    _, holes = low_rank(seed=5)
    assert evaluate_imputer(SoftImpute(2, random_state=0), holes, random_state=0).factored


def test_imputer_input_errors():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [N, N, 1.0]})
    with pytest.raises(ValueError, match=r"fewer than 2 observations.*\['b'\]"):
        SoftImpute().fit(X)
    with pytest.raises(ValueError, match=r"\['zero', 'mean', 'softimpute', 'usvt'\]"):
        CorrelationImputer("median").fit(pd.DataFrame({"a": [1.0, 2, 3], "b": [2.0, 1, 3]}))


@pytest.mark.parametrize("shape", [(281, 43), (12, 40), (6, 6), (60, 3)])
def test_top_svd_equals_the_leading_part_of_a_full_svd(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    X = rng.normal(size=shape) @ np.diag(np.geomspace(1, 0.05, shape[1]))  # a spread spectrum
    u, s, vt = np.linalg.svd(X, full_matrices=False)
    for k in (1, 3, min(shape)):
        U, S, VT = top_svd(X, k)
        assert np.allclose(S, s[:k], atol=1e-10)
        assert np.allclose((U * S) @ VT, (u[:, :k] * s[:k]) @ vt[:k], atol=1e-9)
        assert np.allclose(U.T @ U, np.eye(k), atol=1e-8)  # orthonormal where s > 0
    U, S, VT = top_svd(np.zeros((4, 3)), 2)
    assert not S.any() and not U.any()  # a null matrix: zero components, no division by zero
