"""Semantic inverse-density weights and the task-conditioned BoB field."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from evalhouse.analytics.bob.density import bob_field, density_weights, information_weights, median_pairwise_distance
from evalhouse.analytics.bob.encoders import TfidfEncoder, angular_distance, embed_benchmarks, l2_normalise
from evalhouse.analytics.bob.estimator import BalanceOfBenchmarks, fit_bob
from evalhouse.analytics.bob.lobo import (
    RADII,
    TOP_K,
    PoolCache,
    eligible_rows,
    holm,
    inner_selection,
    level_correlation,
    lobo_evaluate,
    profile_correlation,
)
from evalhouse.analytics.bob.texts import load_text_store
from evalhouse.analytics.equate.curves import CharacteristicCurveEquating


def _unit(rng: np.random.Generator, n: int, d: int = 16) -> np.ndarray:
    return l2_normalise(rng.standard_normal((n, d)))


# ---------------------------------------------------------------------- density weights
def test_density_scale_and_normalisation() -> None:
    X = _unit(np.random.default_rng(0), 8)
    D = angular_distance(X)
    dw = density_weights(D, 0.25)
    assert dw.h == pytest.approx(0.25 * median_pairwise_distance(D))
    assert dw.v.sum() == pytest.approx(1.0) and dw.total == pytest.approx(dw.u.sum())
    # Every entry counts itself (K(0) = 1), so 0 < u <= 1.
    assert (dw.u > 0).all() and (dw.u <= 1).all()
    assert np.allclose(density_weights(D, mode="flat").u, 1.0)
    with pytest.raises(ValueError, match="inverse"):
        density_weights(D, mode="uniform")


@pytest.mark.parametrize("c", [2, 3, 5])
def test_exact_copies_share_one_unit_of_mass(c: int) -> None:
    """Isolated group: each of c copies gets exactly 1/c of what a single copy gets."""
    rng = np.random.default_rng(c)
    others = _unit(rng, 6)
    lone = -others.mean(axis=0)
    lone /= np.linalg.norm(lone)
    h = 0.05  # kernel to the rest of the list is exp(-d²/2h²) ≈ 0: the group is isolated
    single = density_weights(angular_distance(np.vstack([others, lone])), h=h).u[-1]
    copies = density_weights(angular_distance(np.vstack([others, [lone] * c])), h=h).u[-c:]
    assert single == pytest.approx(1.0)
    np.testing.assert_allclose(copies, single / c, rtol=1e-12)
    assert copies.sum() == pytest.approx(single)


def test_copies_with_neighbours_follow_the_exact_formula() -> None:
    """Non-isolated: u_copy = 1/(c + S) with S the kernel mass from outside the group."""
    rng = np.random.default_rng(1)
    X = _unit(rng, 6, d=4)
    h = 0.6
    D1 = angular_distance(X)
    S = np.exp(-(D1[0, 1:] ** 2) / (2 * h**2)).sum()
    single = density_weights(D1, h=h).u[0]
    assert single == pytest.approx(1 / (1 + S))
    for c in (2, 4):
        Xc = np.vstack([[X[0]] * c, X[1:]])
        u = density_weights(angular_distance(Xc), h=h).u
        np.testing.assert_allclose(u[:c], 1 / (c + S), rtol=1e-10)
        # The group's total mass lies between the lone weight and one unit.
        assert single < u[:c].sum() < 1.0


# ---------------------------------------------------------------------- field
def test_bob_field_formulas() -> None:
    theta = np.array([0.0, 1.0, -1.0])
    Z = np.array([[1.0, np.nan], [2.0, -2.0], [np.nan, np.nan]])
    Wt = np.array([[1.0, 0.0], [0.5, 1.0], [0.0, 0.0]])
    g = np.array([0.4, 0.2])
    out = bob_field(theta, Z, Wt, g, None)
    P = np.array([0.4, 0.4, 0.0])
    np.testing.assert_allclose(out["support"], P)
    rbar1 = (0.4 * 0.5 * 2 + 0.2 * 1 * -2) / (0.4 * 0.5 + 0.2)
    np.testing.assert_allclose(out["rbar"], [1.0, rbar1, 0.0])
    np.testing.assert_allclose(out["beta"], P / (P + 1))
    np.testing.assert_allclose(out["y"], theta + P / (P + 1) * np.array([1.0, rbar1, 0.0]))
    assert out["y"][2] == theta[2]  # zero support returns θ
    const = bob_field(theta, Z, Wt, g, None, shrinkage="constant", constant=0.3)
    np.testing.assert_allclose(const["y"][:2], theta[:2] + 0.3 * np.array([1.0, rbar1]))
    lam = bob_field(theta, Z, Wt, g, None, lam=2.0, alpha=4.0)
    np.testing.assert_allclose(lam["beta"], 2 * P / (P + 4))
    with pytest.raises(ValueError, match="support"):
        bob_field(theta, Z, Wt, g, None, shrinkage="sometimes")


def test_information_weights_modes() -> None:
    rng = np.random.default_rng(0)
    info = rng.uniform(0.1, 50, (20, 4))
    Wt = (rng.random((20, 4)) > 0.3).astype(float)
    norm = information_weights(info, Wt, "normalised")
    for j in range(4):
        assert norm[Wt[:, j] > 0, j].mean() == pytest.approx(1.0)
    assert information_weights(info, Wt, "cell") is info
    assert information_weights(info, Wt, "none") is None
    mean = information_weights(info, Wt, "mean")  # one weight per benchmark: its mean over observed models
    for j in range(4):
        assert np.allclose(mean[:, j], info[Wt[:, j] > 0, j].mean())
    with pytest.raises(ValueError, match="normalised"):
        information_weights(info, Wt, "raw")


def test_explain_adds_up_to_the_task_score(specific_skill_world) -> None:
    """explain(): theta + the contributions equals the task score; the shares are the residual mean's
    weights g w I over the model's observed cells (recomputed here from the equating's arrays)."""
    wide, emb, q, *_ = specific_skill_world
    eq, bob = fit_bob(wide, emb)
    table = bob.predict(q, top=5).table
    for model in table.index[:3]:
        summary, rows = bob.explain(q, model)
        assert summary["theta"] + rows["contribution"].sum() == pytest.approx(table.loc[model, "task_score"], abs=1e-12)
        assert summary["rank_task"] == table.loc[model, "rank_task"]
        w = eq.weights_.loc[model].to_numpy()
        mean_info = np.array([eq.information_[b][eq.weights_[b] > 0].mean() for b in eq.benchmarks_])
        g = rows.loc[list(eq.benchmarks_), "relevance"].to_numpy()
        a = g * w * mean_info
        np.testing.assert_allclose(rows.loc[list(eq.benchmarks_), "share"].to_numpy(), a / a.sum(), rtol=1e-12)
        z = eq.residuals_.loc[model].fillna(0).to_numpy()
        assert summary["residual_mean"] == pytest.approx(float((a * z).sum() / a.sum()), rel=1e-12)
    with pytest.raises(ValueError, match="not among"):
        bob.explain(q, "no-such-model")


@pytest.fixture(scope="module")
def specific_skill_world():
    """Benchmarks 0-2 share a specific skill κ on top of θ; 3-9 measure θ only.

    Descriptions of the first group cluster around one direction, the second around another.
    """
    rng = np.random.default_rng(11)
    n = 500
    theta = rng.standard_normal(n)
    kappa = rng.standard_normal(n)
    cols = {}
    for j in range(10):
        skill = theta + (0.9 * kappa if j < 3 else 0.0)
        cols[f"b{j}"] = expit(1.4 * (skill - rng.uniform(-0.8, 0.8))) + rng.normal(0, 0.03, n)
    wide = pd.DataFrame(cols, index=[f"m{i}" for i in range(n)])
    wide = wide.mask(rng.random(wide.shape) < 0.2)
    centres = _unit(rng, 2, d=32)
    X = np.vstack(
        [
            l2_normalise(centres[0] + 0.05 * rng.standard_normal((3, 32))),
            l2_normalise(centres[1] + 0.05 * rng.standard_normal((7, 32))),
        ]
    )
    emb = pd.DataFrame(X, index=wide.columns)
    emb.attrs["encoder"] = {"encoder": "synthetic", "revision": "1", "dim": 32}
    query = l2_normalise((centres[0] + 0.05 * rng.standard_normal(32))[None, :])[0]
    return wide, emb, query, kappa, theta, centres


def test_bob_recovers_a_task_specific_skill(specific_skill_world) -> None:
    wide, emb, query, kappa, theta, centres = specific_skill_world
    _, bob = fit_bob(wide, emb)
    res = bob.predict(query)
    fitted = wide.index.isin(res.table.index)  # models with >= 4 observed benchmarks (the default)
    assert fitted.mean() > 0.9
    table = res.table.loc[wide.index[fitted]]
    kappa, theta = kappa[fitted], theta[fitted]
    shift = table["task_score"] - table["theta"]
    # The adjustment tracks κ, and the task score tracks the group's true skill (θ + 0.9κ) better
    # than the global ability does; its profile against that skill beats θ's.
    assert np.corrcoef(shift, kappa)[0, 1] > 0.5
    truth = theta + 0.9 * kappa
    r_task = np.corrcoef(table["task_score"], truth)[0, 1]
    r_theta = np.corrcoef(table["theta"], truth)[0, 1]
    assert r_task > r_theta + 0.01
    th = table["theta"].to_numpy()
    assert profile_correlation(table["task_score"].to_numpy(), truth, th) > (profile_correlation(th, truth, th) + 0.1)
    assert set(res.nearest["benchmark"].head(3)) == {f"b{j}" for j in range(3)}
    # A query near the θ-only group moves the other way: the global ability absorbed some κ,
    # and the θ-only benchmarks' residuals take it back out.
    other = bob.predict(centres[1]).table.loc[wide.index[fitted]]
    assert np.corrcoef(other["task_score"] - other["theta"], kappa)[0, 1] < -0.1
    assert res.movers["rank_change"].abs().iloc[0] == res.table["rank_change"].abs().max()
    json.dumps(res.to_dict())


def test_bob_estimator_contract(specific_skill_world) -> None:
    wide, emb, *_ = specific_skill_world
    eq, bob = fit_bob(wide, emb)
    np.testing.assert_allclose(eq.benchmark_weights_.to_numpy(), bob.u_.to_numpy())
    assert bob.record_.diagnostics["encoder"]["encoder"] == "synthetic"
    assert bob.record_.diagnostics["theta_density_weighted"] in (True, False)
    assert bob.h_ == pytest.approx(0.45 * bob.median_distance_)
    assert bob.h_dens_ == pytest.approx(0.25 * bob.median_distance_)
    with pytest.raises(ValueError, match="empty query"):
        bob.predict(np.zeros(32))
    with pytest.raises(ValueError, match="empty query"):
        bob.predict(np.array([]))
    with pytest.raises(ValueError, match="dimension"):
        bob.predict(np.ones(8))
    with pytest.raises(ValueError, match="support"):
        BalanceOfBenchmarks(shrinkage="maybe").fit(eq, emb)
    with pytest.raises(ValueError, match="no embedding"):
        BalanceOfBenchmarks().fit(eq, emb.iloc[:3])
    # A query identical to a benchmark description is at distance 0 from it.
    res = bob.predict(emb.loc["b7"].to_numpy())
    assert res.nearest.iloc[0]["benchmark"] == "b7" and res.nearest.iloc[0]["distance"] < 1e-6


def test_zero_support_query_returns_theta() -> None:
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.random((60, 4)), index=[f"m{i}" for i in range(60)], columns=list("abcd"))
    emb = pd.DataFrame(np.eye(5)[:4], index=list("abcd"))
    eq = CharacteristicCurveEquating().fit(wide)
    bob = BalanceOfBenchmarks(bandwidth=1e-3).fit(eq, emb)
    # A query orthogonal to all benchmarks with a tiny bandwidth has (numerically) zero support.
    table = bob.predict(np.eye(5)[4]).table
    np.testing.assert_allclose(table["task_score"], table["theta"], atol=1e-12)


def test_task_ranking_from_words(specific_skill_world) -> None:
    store = load_text_store()
    ids = ["hle", "gpqa_diamond", "terminal_bench_hard", "terminal_bench_v2_1", "tau2_bench", "scicode"]
    wide = specific_skill_world[0].iloc[:, : len(ids)].set_axis(ids, axis=1)
    enc = TfidfEncoder.from_store(store)
    _, bob = fit_bob(wide, embed_benchmarks(store, ids, enc))
    out = bob.predict(enc.encode([store.query("software_engineering_agent")])[0], top=5).to_dict(top=5)
    json.dumps(out)
    assert len(out["ranking"]) == 5
    assert out["nearest_benchmarks"][0]["benchmark"].startswith("terminal_bench")
    assert {"model", "task_score", "theta", "support", "rank_task", "rank_theta"} <= set(out["ranking"][0])
    with pytest.raises(ValueError, match="empty query"):
        bob.predict(np.zeros(enc.dim))
    with pytest.raises(KeyError, match="not_described"):
        embed_benchmarks(store, [*ids[:-1], "not_described"], enc)


def test_metrics_and_holm() -> None:
    rng = np.random.default_rng(0)
    theta = rng.standard_normal(200)
    specific = rng.standard_normal(200)
    s = theta + 0.5 * specific
    assert level_correlation(theta, s) > 0.8
    # θ alone carries almost no profile; knowing the specific part does.
    assert profile_correlation(theta + 0.5 * specific, s, theta) > 0.9
    assert abs(profile_correlation(theta, s, theta)) < 0.3
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, np.nan]), [0.03, 0.06, 0.06, np.nan])


def test_inner_bandwidth_selection_uses_the_mean_of_level_and_profile(specific_skill_world) -> None:
    """The inner criterion per bandwidth equals (mean level + mean profile) / 2 of a plain LOBO on the
    pool at that bandwidth (the paper's App. J rule); "profile" selects on the profile alone."""
    wide, emb, *_ = specific_skill_world
    pool = [str(c) for c in wide.columns[:6]]
    data = eligible_rows(wide[pool].iloc[:200], 5)
    sel = inner_selection(PoolCache(data, emb), pool, information="mean")
    profiles = {}
    for h in (0.30, 0.45, 0.60):
        res = lobo_evaluate(data, emb, inner=False, fixed_bandwidth=h, controls=False).summary.loc["BoB-Support"]
        assert sel.bandwidth_criteria[h] == pytest.approx((res["level"] + res["profile"]) / 2, rel=1e-9)
        profiles[h] = res["profile"]
    assert sel.bandwidth == max(sel.bandwidth_criteria, key=sel.bandwidth_criteria.__getitem__)
    by_profile = inner_selection(PoolCache(data, emb), pool, selection="profile", hard_rules=False)
    assert by_profile.bandwidth_criteria == pytest.approx(profiles, rel=1e-9)
    assert sel.k in TOP_K and sel.radius in RADII and set(sel.radius_profiles) == set(RADII)
    with pytest.raises(ValueError, match="selection"):
        inner_selection(PoolCache(data, emb), pool, selection="level")
