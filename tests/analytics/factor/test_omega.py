"""Schmid-Leiman and omega: a population hierarchical model and hand-derivable cases."""

from __future__ import annotations

import numpy as np
import pytest

from evalhouse.analytics.factor.efa import EFA
from evalhouse.analytics.factor.omega import Omega, schmid_leiman


def hierarchical_population():
    lam = np.zeros((9, 3))
    for f in range(3):
        lam[3 * f : 3 * f + 3, f] = [0.8, 0.7, 0.6]
    gamma = np.array([0.8, 0.7, 0.6])
    phi = np.outer(gamma, gamma)
    np.fill_diagonal(phi, 1.0)
    R = lam @ phi @ lam.T
    np.fill_diagonal(R, 1.0)
    return lam, gamma, phi, R


def test_population_bifactor_recovers_known_omega():
    lam, gamma, phi, R = hierarchical_population()
    g = lam @ gamma
    expected = g.sum() ** 2 / R.sum()  # = 0.63479
    efa = EFA(3, method="minres").fit_correlation(R)
    res = schmid_leiman(efa.loadings_, efa.phi_, efa.correlation_)
    assert res.omega_h == pytest.approx(expected, abs=1e-4)
    assert np.sort(res.sl_loadings["g"].to_numpy()) == pytest.approx(np.sort(g), abs=1e-3)
    groups = np.sort(np.abs(res.sl_loadings.drop(columns="g").to_numpy()).max(axis=1))
    assert groups == pytest.approx(np.sort((lam * np.sqrt(1 - gamma**2)).max(axis=1)), abs=1e-3)
    # every item is explained by the hierarchical model: omega_total = 1 - sum(u2) / Vt
    assert res.omega_total == pytest.approx(1 - (1 - (lam**2).sum(axis=1)).sum() / R.sum(), abs=1e-4)
    assert res.phi_mean_offdiag == pytest.approx(phi[np.triu_indices(3, 1)].mean(), abs=1e-3)


def test_known_loadings_give_exact_sl():
    lam, gamma, phi, R = hierarchical_population()
    res = schmid_leiman(lam, phi, R)
    assert res.second_order.to_numpy() == pytest.approx(gamma, abs=1e-4)
    assert res.sl_loadings["g"].to_numpy() == pytest.approx(lam @ gamma, abs=1e-4)
    # first-order variance per factor is diag(Phi L'L); their sum is the total communality
    assert res.variance.sum() == pytest.approx(np.trace(lam @ phi @ lam.T), rel=1e-9)
    assert res.cumulative == pytest.approx(np.trace(lam @ phi @ lam.T) / 9)
    assert res.ave == pytest.approx(res.cumulative / 3)


def test_one_factor_omega_by_hand():
    # lambda = 0.8 on four items: omega_h = 3.2^2 / (3.2^2 + 4 * 0.36) = 10.24 / 11.68
    lam = np.full((4, 1), 0.8)
    R = lam @ lam.T
    np.fill_diagonal(R, 1.0)
    res = schmid_leiman(lam, np.eye(1), R)
    assert res.omega_h == pytest.approx(10.24 / 11.68)
    assert list(res.sl_loadings.columns) == ["g"]
    assert np.isnan(res.phi_mean_offdiag)


def test_two_factors_use_equal_second_order_loadings():
    lam = np.array([[0.7, 0], [0.6, 0], [0, 0.8], [0, 0.5]])
    phi = np.array([[1.0, 0.49], [0.49, 1.0]])
    res = schmid_leiman(lam, phi)
    assert res.second_order.to_numpy() == pytest.approx([0.7, 0.7])
    assert res.sl_loadings["g"].to_numpy() == pytest.approx(lam.sum(axis=1) * 0.7)
    assert res.sl_loadings["G1"].to_numpy()[:2] == pytest.approx([0.7 * np.sqrt(0.51), 0.6 * np.sqrt(0.51)])


def test_no_sign_flipping_negative_item_lowers_omega():
    lam = np.full((4, 1), 0.8)
    flipped = lam.copy()
    flipped[0] = -0.8
    R = flipped @ flipped.T
    np.fill_diagonal(R, 1.0)
    res = schmid_leiman(flipped, np.eye(1), R)
    # (sum g)^2 = 1.6^2; Vt = sum(R) = 4 + 2 * (3 * 0.64 - 3 * 0.64) = 4
    assert res.omega_h == pytest.approx(1.6**2 / R.sum())
    assert res.omega_h < schmid_leiman(lam, np.eye(1)).omega_h


def test_omega_estimator_on_sampled_data(planted):
    lam, _, phi, _ = hierarchical_population()
    X = planted(lam, phi, n=2000, seed=0)
    est = Omega(3).fit(X)
    lam_pop, gamma, _, R = hierarchical_population()
    assert est.omega_h_ == pytest.approx((lam_pop @ gamma).sum() ** 2 / R.sum(), abs=0.05)
    assert est.record_.diagnostics["omega_h"] == pytest.approx(est.omega_h_)
    with pytest.raises(ValueError, match=r"\['oblimin', 'promax'\]"):
        Omega(3, rotation="none").fit(X)
