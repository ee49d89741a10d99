"""Factorability diagnostics and Tucker congruence against references and hand values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from factor_analyzer.factor_analyzer import calculate_bartlett_sphericity, calculate_kmo
from sklearn.decomposition import PCA

from evalhouse.analytics.factor.diagnostics import (
    Factorability,
    bartlett_sphericity,
    kmo,
    match_factors,
    mean_offdiag_spearman,
    pca_variance_shares,
    tucker_congruence,
)


def test_kmo_and_bartlett_match_factor_analyzer(three_factor):
    X, _, _ = three_factor
    per_item, overall = kmo(X)
    ref_items, ref_overall = calculate_kmo(X.to_numpy())
    assert overall == pytest.approx(ref_overall, rel=1e-10)
    assert np.allclose(per_item, ref_items)
    bart = bartlett_sphericity(X)
    ref_stat, ref_p = calculate_bartlett_sphericity(X.to_numpy())
    assert bart.statistic == pytest.approx(ref_stat, rel=1e-10)
    assert bart.dof == 66
    assert bart.p_value == pytest.approx(ref_p, abs=1e-300)


def test_bartlett_log_p_survives_underflow(planted):
    X = planted(np.full((12, 1), 0.9), n=400, seed=2)
    bart = bartlett_sphericity(X)
    assert bart.p_value == 0.0
    assert bart.log10_p_value < -300


def test_pca_shares_match_sklearn(three_factor):
    X, _, _ = three_factor
    z = (X - X.mean()) / X.std(ddof=0)
    assert np.allclose(pca_variance_shares(X), PCA().fit(z).explained_variance_ratio_)


def test_mean_spearman_is_pairwise_complete():
    X = pd.DataFrame({"a": [1, 2, 3, 4, 5], "b": [2, 1, 4, 3, np.nan], "c": [5, 3, 2, 1, 4]}, dtype=float)
    rho = X.corr(method="spearman").to_numpy()
    expected = (rho[0, 1] + rho[0, 2] + rho[1, 2]) / 3
    assert mean_offdiag_spearman(X) == pytest.approx(expected)
    assert mean_offdiag_spearman(X.dropna()) != pytest.approx(expected)


def test_tucker_congruence_hand_values():
    assert tucker_congruence([1, 1, 0], [1, 0, 0]) == pytest.approx(1 / np.sqrt(2))
    assert tucker_congruence([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert tucker_congruence([1, 0], [-1, 0]) == pytest.approx(-1.0)
    A = np.array([[1, 0], [1, 0], [0, 1]])
    C = tucker_congruence(A, A[:, ::-1])
    assert np.allclose(C, [[0, 1], [1, 0]])


def test_match_factors_recovers_permutation_and_sign():
    rng = np.random.default_rng(0)
    ref = rng.standard_normal((10, 3))
    shuffled = ref[:, [2, 0, 1]] * np.array([1, -1, 1])
    aligned, cong = match_factors(ref, shuffled)
    assert np.allclose(aligned, ref) and np.allclose(cong, 1.0)


def test_factorability_estimator(three_factor):
    X, _, _ = three_factor
    with_holes = X.copy()
    with_holes.iloc[:10, 0] = np.nan
    fit = Factorability().fit(with_holes)
    assert fit.n_complete_ == len(X) - 10
    assert fit.kmo_ == pytest.approx(kmo(X.iloc[10:])[1])
    assert fit.pca_shares_.sum() == pytest.approx(1.0)
    assert fit.record_.diagnostics["n_complete"] == len(X) - 10
