"""LOBO prediction ladder: the fast ridge equals GridSearchCV, planted signal, bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV

from evalhouse.analytics.factor.ladder import PredictionLadder, k_sweep
from evalhouse.analytics.factor.learners import RIDGE_ALPHAS, FastRidgeCV, paired_bootstrap


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("p", [1, 3, 7])
def test_fast_ridge_equals_gridsearchcv(seed, p):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((77, p))
    y = X @ rng.standard_normal(p) * (seed + 0.2) + rng.standard_normal(77)
    fast = FastRidgeCV().fit(X, y)
    ref = GridSearchCV(Ridge(), {"alpha": list(RIDGE_ALPHAS)}, cv=5, scoring="neg_mean_squared_error").fit(X, y)
    assert fast.best_params_ == ref.best_params_
    Xt = rng.standard_normal((20, p))
    assert np.allclose(fast.predict(Xt), ref.predict(Xt), atol=1e-9)


def specific_factor_data(n: int = 150, seed: int = 0):
    """Target b0 depends on a specific factor that the mean index cannot carry."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(n)
    s = rng.standard_normal(n)
    cols = {}
    for j in range(1, 6):
        cols[f"b{j}"] = 0.8 * g + 0.3 * rng.standard_normal(n)
    for j in range(6, 9):
        cols[f"b{j}"] = 0.5 * g + 0.7 * s + 0.3 * rng.standard_normal(n)
    cols["b0"] = 0.5 * g + 0.8 * s + 0.3 * rng.standard_normal(n)
    X = pd.DataFrame(cols, index=[f"m{i}" for i in range(n)])[[f"b{j}" for j in range(9)]]
    meta = pd.DataFrame(
        {
            "release_date": pd.Timestamp("2025-01-01") + pd.to_timedelta(rng.integers(0, 500, n), unit="D"),
            "is_reasoning": rng.random(n) < 0.5,
            "is_open_weights": rng.random(n) < 0.5,
            "total_parameters": np.where(rng.random(n) < 0.3, np.nan, 10 ** rng.uniform(0, 3, n)),
        },
        index=X.index,
    )
    return X, meta


def test_k_factors_beat_the_mean_index_on_planted_specific_signal():
    X, meta = specific_factor_data()
    lad = PredictionLadder(["b0", "b1"], n_factors=2, learners=("ridge",), n_bootstrap=500).fit(X, meta)
    d = lad.delta_[lad.delta_["baseline"] == "ii"].set_index("target")
    assert d.loc["b0", "dmse"] > 0.1 and d.loc["b0", "ci_low"] > 0
    assert d.loc["pooled", "dmse"] == pytest.approx(d.loc[["b0", "b1"], "dmse"].mean())
    assert lad.predictions_.shape[0] == len(X) * 5 * 1 * 2
    assert set(lad.ladder_.index) == {"i", "ii", "iii", "iv", "v"}
    assert lad.ladder_.loc["iv", "test_r2"] > lad.ladder_.loc["i", "test_r2"]
    m = lad.metrics_
    b0 = m[(m["target"] == "b0") & (m["rung"] == "iv")].iloc[0]
    assert b0["test_rmse"] == pytest.approx(np.sqrt(b0["test_mse"]))


def test_ladder_is_deterministic_given_seeds():
    X, _ = specific_factor_data(n=80, seed=1)
    kw = {"n_factors": 2, "learners": ("ridge",), "rungs": ("ii", "iv"), "n_bootstrap": 200}
    a = PredictionLadder(["b0"], **kw).fit(X)
    b = PredictionLadder(["b0"], **kw).fit(X)
    c = PredictionLadder(["b0"], random_state=5, **kw).fit(X)
    pd.testing.assert_frame_equal(a.delta_, b.delta_)
    assert not np.allclose(a.predictions_["y_pred"], c.predictions_["y_pred"])


def test_other_learners_run_through_gridsearchcv():
    X, _ = specific_factor_data(n=60, seed=2)
    lad = PredictionLadder(
        ["b0"], n_factors=2, rungs=("ii", "iv"), learners=("ridge", "elasticnet"), n_bootstrap=100
    ).fit(X)
    assert set(lad.metrics_["learner"]) == {"ridge", "elasticnet"}
    assert {"alpha", "l1_ratio"} <= set(lad.best_params_.columns)


def test_paired_bootstrap_units():
    rng = np.random.default_rng(0)
    d = rng.normal(0.05, 0.1, size=(96, 4))
    est, lo, hi = paired_bootstrap(d, n_bootstrap=2000, random_state=1)
    assert est == pytest.approx(d.mean()) and lo < est < hi
    est_c, lo_c, hi_c = paired_bootstrap(d, n_bootstrap=2000, random_state=1, unit="cell")
    assert est_c == pytest.approx(est) and lo_c < est_c < hi_c
    # cells are less correlated than whole models here, so the interval is not wider
    assert hi_c - lo_c <= (hi - lo) * 1.2
    assert paired_bootstrap(d, random_state=1) == paired_bootstrap(d, random_state=1)
    with pytest.raises(ValueError, match=r"\['model', 'cell'\]"):
        paired_bootstrap(d, unit="target")


def test_k_sweep_table():
    X, _ = specific_factor_data(n=80, seed=3)
    table = k_sweep(X, ["b0"], ks=(1, 2), n_bootstrap=200)
    assert list(table.index) == [1, 2]
    assert table.loc[2, "dmse"] > table.loc[1, "dmse"]


def test_bad_ladder_options():
    X, meta = specific_factor_data(n=40)
    with pytest.raises(ValueError, match="ridge"):
        PredictionLadder(["b0"], learners=("lasso",)).fit(X, meta)
    with pytest.raises(ValueError, match="meta"):
        PredictionLadder(["b0"], learners=("ridge",)).fit(X)
    with pytest.raises(ValueError, match="targets not in X"):
        PredictionLadder(["zz"], learners=("ridge",), rungs=("ii",)).fit(X)
    with pytest.raises(ValueError, match=r"choose one of \['ridge'\]"):
        PredictionLadder(["b0"], learners=("ridge",), delta_learner="elasticnet", rungs=("ii",)).fit(X)
