"""Date residualisation, the logistic date fit and the change in s1."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalhouse.analytics.factor.detrend import DateAdjustment, date_r2, logistic4, logistic_fit, ols_r2, residualize


def dated(n: int = 300, seed: int = 0):
    """General factor = date trend + noise; three group factors; 12 items."""
    rng = np.random.default_rng(seed)
    dates = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D")
    t = (dates - dates.min()).days.to_numpy(dtype=float)
    t = (t - t.mean()) / t.std()
    g = 0.8 * t + 0.6 * rng.standard_normal(n)
    groups = rng.standard_normal((n, 3))
    X = np.empty((n, 12))
    for j in range(12):
        X[:, j] = 0.7 * g + 0.5 * groups[:, j // 4] + 0.4 * rng.standard_normal(n)
    return pd.DataFrame(X, columns=[f"b{j}" for j in range(12)]), pd.Series(dates)


def test_residuals_are_orthogonal_to_date_and_compute():
    X, dates = dated()
    days = (dates - dates.min()).dt.days.to_numpy(dtype=float)
    res = residualize(X, dates)
    assert np.allclose(res.to_numpy().T @ days, 0, atol=1e-7)
    assert np.allclose(res.mean(), 0, atol=1e-10)
    compute = np.random.default_rng(1).standard_normal(len(X))
    res2 = residualize(X, dates, compute)
    assert np.allclose(res2.to_numpy().T @ compute, 0, atol=1e-7)
    with pytest.raises(ValueError, match="release date"):
        residualize(X, dates.where(dates.index != 3))


def test_logistic_fit_recovers_a_noiseless_curve():
    x = np.linspace(0, 700, 120)
    t = (x - x.mean()) / x.std()
    y = logistic4(t, -1.0, 2.0, 2.5, 0.3)
    params, r2 = logistic_fit(x, y)
    assert r2 == pytest.approx(1.0, abs=1e-8)
    assert params == pytest.approx([-1.0, 2.0, 2.5, 0.3], abs=1e-4)
    # a falling curve is found too
    assert logistic_fit(x, -y)[1] == pytest.approx(1.0, abs=1e-8)


def test_date_r2_table():
    x = pd.Series(pd.date_range("2025-01-01", periods=50, freq="7D"))
    days = np.arange(50) * 7.0
    y = pd.DataFrame({"lin": days + np.sin(days), "flat": np.cos(days)})
    table = date_r2(y, x)
    assert table.loc["lin", "ols_r2"] == pytest.approx(ols_r2(days, y["lin"]))
    assert table.loc["lin", "logistic_r2"] >= table.loc["lin", "ols_r2"] - 1e-6
    assert table.loc["flat", "ols_r2"] < 0.1


def test_date_adjustment_lowers_the_first_factor_share():
    X, dates = dated()
    adj = DateAdjustment(3).fit(X, dates)
    assert adj.s1_drop_ > 0.05
    assert adj.s1_drop_ == pytest.approx(adj.s1_raw_ - adj.s1_adjusted_)
    assert adj.benchmark_date_r2_.min() > 0.1
    assert adj.score_date_r2_.loc["F1", "ols_r2"] > 0.3
    assert adj.record_.diagnostics["s1_raw"] == pytest.approx(adj.s1_raw_)
    with pytest.raises(ValueError, match=r"\['ml', 'minres'\]"):
        DateAdjustment(3, method="uls").fit(X, dates)
