"""Characteristic-curve equating: recovery, invariances, numerics against scipy, bad inputs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import least_squares, minimize_scalar
from scipy.special import expit
from sklearn.base import clone
from synthetic import simulate_2pl

from evalhouse.analytics.equate import kernels as eqmod
from evalhouse.analytics.equate.curves import CharacteristicCurveEquating
from evalhouse.analytics.equate.io import EquatingInputError, as_wide
from evalhouse.analytics.equate.kernels import robust_cells
from evalhouse.analytics.runs import equate_csv


@pytest.fixture(scope="module")
def synthetic() -> tuple[pd.DataFrame, pd.Series, pd.DataFrame]:
    return simulate_2pl(600, 20, density=0.6, noise=0.03, random_state=7)


@pytest.fixture(scope="module")
def fitted(synthetic: tuple[pd.DataFrame, pd.Series, pd.DataFrame]) -> CharacteristicCurveEquating:
    wide, _, _ = synthetic
    return CharacteristicCurveEquating(normalisation="identity").fit(wide)


def test_recovers_known_theta_a_b(synthetic, fitted) -> None:
    wide, theta, params = synthetic
    est = fitted
    # The fit standardises θ; express the truth on the same scale (a' = a·sd, b' = (b-μ)/sd).
    mu, sd = theta.mean(), theta.std(ddof=0)
    true_theta = (theta - mu) / sd
    assert np.corrcoef(est.theta_.loc[wide.index], true_theta)[0, 1] > 0.98
    a_true = params["a"] * sd
    b_true = (params["b"] - mu) / sd
    assert np.corrcoef(est.a_, a_true)[0, 1] > 0.95
    assert np.corrcoef(est.b_, b_true)[0, 1] > 0.98
    assert np.median(np.abs(est.b_ - b_true)) < 0.1
    assert np.median(np.abs(est.a_ / a_true - 1)) < 0.15
    # Standardised each round.
    assert abs(est.theta_.mean()) < 1e-9 and abs(est.theta_.std(ddof=0) - 1) < 1e-9


def test_minmax_recovery_and_normalisation_text(synthetic) -> None:
    wide, theta, _ = synthetic
    raw = wide * 80 + 10  # percent-like raw scale; min-max puts it back on [0, 1]
    est = CharacteristicCurveEquating().fit(raw)
    assert np.corrcoef(est.theta_.loc[wide.index], theta)[0, 1] > 0.95
    assert "min-max" in est.normalisation_
    assert est.scores_.min().min() == 0.0 and est.scores_.max().max() == 1.0


def test_invariances(synthetic) -> None:
    wide, _, _ = synthetic
    sub = wide.iloc[:200, :10]
    base = CharacteristicCurveEquating().fit(sub)
    # Row and column order do not matter.
    shuffled = sub.sample(frac=1, random_state=1).iloc[:, ::-1]
    again = CharacteristicCurveEquating().fit(shuffled)
    np.testing.assert_allclose(again.theta_.loc[sub.index], base.theta_.loc[sub.index], atol=1e-9)
    # A positive affine change of one benchmark's raw scale is absorbed by min-max.
    scaled = sub.assign(**{sub.columns[0]: sub.iloc[:, 0] * 7.5 - 3.0})
    s2 = CharacteristicCurveEquating().fit(scaled)
    np.testing.assert_allclose(s2.theta_.loc[sub.index], base.theta_.loc[sub.index], atol=1e-9)
    # Long input equals wide input.
    long = sub.stack().rename("score").reset_index()
    long.columns = ["model", "benchmark", "score"]
    from_long = CharacteristicCurveEquating().fit(long)
    np.testing.assert_allclose(from_long.theta_.loc[sub.index], base.theta_.loc[sub.index], atol=1e-9)
    # Scaling every benchmark weight by one constant leaves θ unchanged; unequal weights do not.
    w = CharacteristicCurveEquating().fit(sub, benchmark_weights=dict.fromkeys(sub.columns, 3.0))
    np.testing.assert_allclose(w.theta_, base.theta_, atol=1e-9)
    uneven = dict.fromkeys(sub.columns, 1.0) | {sub.columns[0]: 25.0}
    moved = CharacteristicCurveEquating().fit(sub, benchmark_weights=uneven)
    assert np.max(np.abs(moved.theta_ - base.theta_)) > 1e-3


def test_batched_curve_fit_matches_scipy_least_squares() -> None:
    rng = np.random.default_rng(3)
    wide, theta, _ = simulate_2pl(300, 12, density=0.5, noise=0.05, random_state=3)
    S = wide.to_numpy()
    rows, cols = np.nonzero(np.isfinite(S))
    s, t = S[rows, cols], theta.to_numpy()[rows]
    w = rng.uniform(0.05, 1, s.size)
    a, b, status, _ = eqmod.fit_curves_batched(
        t,
        s,
        w,
        cols,
        12,
        a0=np.ones(12),
        b0=np.zeros(12),
        a_bounds=(0.2, 20.0),
        b_bounds=(-4.0, 4.0),
        max_iter=200,
        tol=1e-12,
    )
    assert (status == 1).all()
    for j in range(12):
        m = cols == j

        def resid(p, m=m):
            return np.sqrt(w[m]) * (s[m] - expit(p[0] * (t[m] - p[1])))

        ref = least_squares(resid, [1.0, 0.0], bounds=([0.2, -4], [20, 4]), xtol=1e-14, ftol=1e-14)
        np.testing.assert_allclose([a[j], b[j]], ref.x, atol=1e-4)


def test_bounds_are_respected_and_logged() -> None:
    # A step-shaped benchmark wants an infinitely steep curve: a must stop at its bound 20.
    rng = np.random.default_rng(0)
    theta = rng.standard_normal(300)
    cols = {f"smooth{k}": expit(1.5 * (theta - k * 0.3)) + rng.normal(0, 0.02, 300) for k in range(3)}
    cols["step"] = (theta > 0.2).astype(float)
    wide = pd.DataFrame(cols, index=[f"m{i}" for i in range(300)])
    est = CharacteristicCurveEquating().fit(wide)
    assert est.a_["step"] == pytest.approx(20.0)
    assert est.round_log_[-1]["a_at_bound"] >= 1
    assert (est.a_ >= 0.2).all() and (est.a_ <= 20).all()
    assert (est.b_ >= -4).all() and (est.b_ <= 4).all()
    keys = {
        "max_abs_delta_a",
        "max_abs_delta_b",
        "max_abs_delta_theta",
        "a_at_bound",
        "b_at_bound",
        "theta_at_grid_edge",
        "optimizer_converged",
        "optimizer_max_iter",
    }
    # Iterated to convergence: the last round moved no ability by more than theta_tol.
    assert est.converged_ and len(est.round_log_) == est.n_rounds_ and keys <= set(est.round_log_[0])
    assert est.round_log_[-1]["max_abs_delta_theta"] < est.theta_tol < est.round_log_[0]["max_abs_delta_theta"]


def test_theta_grid_parabola_matches_continuous_minimiser(fitted) -> None:
    est = fitted
    S = est.scores_.to_numpy()
    obs = np.isfinite(S)
    rows, cols = np.nonzero(obs)
    a, b, sig = est.a_.to_numpy(), est.b_.to_numpy(), est.sigma_.to_numpy()
    w_cells = est.weights_.to_numpy()[rows, cols]
    grid = np.arange(-3.5, 3.5 - 1e-12, 0.02)
    theta, _ = eqmod.fit_theta_grid(
        np.where(obs, S, 0),
        obs,
        w_cells,
        rows,
        cols,
        a=a,
        b=b,
        sigma=sig,
        omega=np.ones(len(a)),
        grid=grid,
        step=0.02,
    )
    for m in range(0, len(S), 60):
        seen = obs[m]

        def loss(t, m=m, seen=seen):
            f = expit(a[seen] * (t - b[seen]))
            return np.sum(est.weights_.to_numpy()[m, seen] * (S[m, seen] - f) ** 2 / sig[seen] ** 2)

        best = minimize_scalar(
            loss, bounds=(theta[m] - 0.05, theta[m] + 0.05), method="bounded", options={"xatol": 1e-8}
        )
        assert abs(best.x - theta[m]) < 2e-3


def test_chunking_does_not_change_results(synthetic, monkeypatch) -> None:
    wide, _, _ = synthetic
    sub = wide.iloc[:150]
    full = CharacteristicCurveEquating().fit(sub)
    monkeypatch.setattr(eqmod, "CHUNK_BYTES", 8 * 2000)  # a handful of rows per chunk
    chunked = CharacteristicCurveEquating().fit(sub)
    np.testing.assert_allclose(chunked.theta_, full.theta_, atol=1e-12)


def test_residuals_weights_information(fitted) -> None:
    est = fitted
    z = est.residuals_.to_numpy()
    w = est.weights_.to_numpy()
    obs = np.isfinite(est.scores_.to_numpy())
    assert np.isnan(z[~obs]).all() and (w[~obs] == 0).all()
    assert (w[obs] >= 1e-3).all() and (w[obs] <= 1).all()
    # Information equals f'(θ)² / max(σ², 1e-6), checked by a numerical derivative.
    t0 = 0.3
    h = 1e-6
    deriv = (est.curve(t0 + h).to_numpy() - est.curve(t0 - h).to_numpy()) / (2 * h)
    expected = deriv[0] ** 2 / np.maximum(est.sigma_.to_numpy() ** 2, 1e-6)
    np.testing.assert_allclose(est.item_information(t0).to_numpy()[0], expected, rtol=1e-5)


def test_robust_weight_formula() -> None:
    z = np.array([0.0, 1.0, -3.0, 6.0, -300.0])
    np.testing.assert_allclose(robust_cells(z, 3.0, 1e-3), [1, 1, 1, 0.25, 1e-3])


def test_bad_inputs() -> None:
    with pytest.raises(EquatingInputError, match="empty"):
        CharacteristicCurveEquating().fit(pd.DataFrame())
    with pytest.raises(EquatingInputError, match="empty"):
        CharacteristicCurveEquating().fit(pd.DataFrame({"x": [np.nan, np.nan]}))
    same = pd.DataFrame(0.5, index=[f"m{i}" for i in range(10)], columns=list("abcd"))
    with pytest.raises(EquatingInputError, match="distinct"):
        CharacteristicCurveEquating().fit(same)
    dup = pd.DataFrame({"model": ["m", "m"], "benchmark": ["b", "b"], "score": [0.1, 0.2]})
    with pytest.raises(EquatingInputError, match="duplicate"):
        as_wide(dup)
    with pytest.raises(EquatingInputError, match="non-numeric"):
        as_wide(pd.DataFrame({"b": ["0.5", "oops"]}))
    with pytest.raises(ValueError, match="minmax"):
        CharacteristicCurveEquating(normalisation="zscore").fit(same)
    with pytest.raises(ValueError, match="min_observed"):
        CharacteristicCurveEquating(min_observed=0).fit(same)


def test_constant_benchmark_and_sparse_model_are_excluded_with_reasons(synthetic) -> None:
    wide, _, _ = synthetic
    sub = wide.iloc[:100, :6].copy()
    sub["flat"] = 0.4  # one distinct value
    sub.loc["lonely"] = np.nan
    sub.loc["lonely", sub.columns[0]] = 0.9  # a single observed score
    est = CharacteristicCurveEquating(min_observed=3).fit(sub)
    assert "flat" in est.excluded_benchmarks_ and "distinct" in est.excluded_benchmarks_["flat"]
    assert "flat" not in est.benchmarks_
    assert np.isnan(est.theta_["lonely"])
    assert "min_observed=3" in est.excluded_models_["lonely"]
    # With min_observed=1 the single-score model is fitted.
    est1 = CharacteristicCurveEquating(min_observed=1).fit(sub)
    assert np.isfinite(est1.theta_["lonely"])


def test_estimator_contract(synthetic) -> None:
    wide, _, _ = synthetic
    est = CharacteristicCurveEquating(n_rounds=2, a_bounds=(0.2, 20.0))
    before = est.get_params()
    est.fit(wide.iloc[:80])
    assert est.get_params() == before
    assert clone(est).get_params() == before
    rec = est.record_
    assert rec.kind == "equating" and rec.diagnostics["n_models_fitted"] == 80
    assert rec.input_shape == [80, 20]
    assert len(est.round_log_) == 2


def test_equate_a_long_csv(tmp_path, synthetic) -> None:
    wide, _, _ = synthetic
    long = wide.iloc[:50, :8].stack().rename("score").reset_index()
    long.columns = ["model", "benchmark", "score"]
    long = pd.concat([long, pd.DataFrame({"model": ["solo"], "benchmark": ["b0000"], "score": [0.3]})])
    path = tmp_path / "scores.csv"
    long.to_csv(path, index=False)
    outcome = equate_csv(path, db=None, min_observed=3)
    assert outcome.analysis_id is None  # not recorded
    out = outcome.payload
    assert out["pin"].startswith("file-sha256:")
    json.dumps(out)  # JSON-ready
    models = {m["model"]: m for m in out["models"]}
    assert models["solo"]["theta"] is None and "min_observed" in models["solo"]["reason"]
    assert models["solo"]["n_observed"] == 1
    assert all(isinstance(models[f"m{i:05d}"]["theta"], float) for i in range(50))
    assert {b["benchmark"] for b in out["benchmarks"]} == {f"b{j:04d}" for j in range(8)}
    assert set(out["benchmarks"][0]) == {"benchmark", "a", "b", "sigma"}
    assert "min-max" in out["normalisation"]
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"model": ["a"], "score": [1]}).to_csv(bad, index=False)
    with pytest.raises(EquatingInputError, match="benchmark"):
        equate_csv(bad, db=None)


def test_snapshot_id_is_recorded(synthetic) -> None:
    wide, _, _ = synthetic
    frame = wide.iloc[:60].copy()
    frame.attrs["snapshot_id"] = "snap-123"
    assert CharacteristicCurveEquating(n_rounds=1).fit(frame).record_.snapshot_id == "snap-123"


def test_paper_settings_run_six_rounds_and_weighting_is_a_choice(synthetic) -> None:
    wide, _, _ = synthetic
    paper = CharacteristicCurveEquating(n_rounds=6, theta_tol=0.0, weighting="inverse_variance").fit(wide)
    assert paper.n_rounds_ == 6 and not paper.converged_
    default = CharacteristicCurveEquating().fit(wide)
    assert default.converged_ and default.get_params()["weighting"] == "unweighted"
    assert default.min_observed == 4 and default.min_models == 5
    with pytest.raises(ValueError, match="weighting"):
        CharacteristicCurveEquating(weighting="sigma").fit(wide)


def test_theta_standard_errors_shrink_with_more_benchmarks(synthetic) -> None:
    wide, theta, _ = synthetic
    est = CharacteristicCurveEquating().fit(wide)
    se, n = est.theta_se_.dropna(), est.n_observed_
    assert (se > 0).all() and len(se) == est.theta_.notna().sum()
    # More observed benchmarks, more information: the SE falls with the count (rank correlation).
    assert np.corrcoef(se.rank(), n.loc[se.index].rank())[0, 1] < -0.2  # measured -0.32 (SE also depends on θ)
    # And the errors are roughly calibrated: |θ - truth| / SE is of order 1 on the standardised scale.
    truth = (theta - theta.mean()) / theta.std(ddof=0)
    ratio = ((est.theta_ - truth).abs() / est.theta_se_).dropna()
    assert 0.2 < ratio.median() < 3.0
