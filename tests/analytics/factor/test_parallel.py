"""Parallel analysis: vectorised = loop, seeds, known cut-offs, retained counts."""

from __future__ import annotations

import numpy as np
import pytest

from evalhouse.analytics.factor.parallel import (
    ParallelAnalysis,
    bounded_n_factors,
    count_factors,
    simulate_eigenvalues,
    simulate_eigenvalues_loop,
)


def test_vectorised_draws_equal_the_per_simulation_loop():
    vec = simulate_eigenvalues(40, 6, 50, random_state=7)
    loop = simulate_eigenvalues_loop(40, 6, 50, random_state=7)
    assert np.allclose(vec, loop, atol=1e-12)


def test_chunking_does_not_change_the_result():
    whole = simulate_eigenvalues(30, 5, 64, random_state=1)
    chunked = simulate_eigenvalues(30, 5, 64, random_state=1, max_chunk_mb=0.01)
    assert np.array_equal(whole, chunked)


def test_eigenvalues_are_descending_and_sum_to_p():
    sims = simulate_eigenvalues(25, 7, 20, random_state=0)
    assert np.all(np.diff(sims, axis=1) <= 1e-12)
    assert np.allclose(sims.sum(axis=1), 7.0)


def test_seed_reproduces_and_other_seeds_differ():
    a = ParallelAnalysis(200, random_state=3).fit(np.random.default_rng(0).standard_normal((50, 6)))
    b = ParallelAnalysis(200, random_state=3).fit(np.random.default_rng(0).standard_normal((50, 6)))
    c = ParallelAnalysis(200, random_state=4).fit(np.random.default_rng(0).standard_normal((50, 6)))
    assert np.array_equal(a.thresholds_, b.thresholds_)
    assert not np.array_equal(a.thresholds_, c.thresholds_)


def test_paper000_cutoffs_at_96_by_12():
    sims = simulate_eigenvalues(96, 12, 2000, random_state=42)
    cut = np.percentile(sims, 95, axis=0)
    assert cut[0] == pytest.approx(1.79, abs=0.015)
    assert cut[1] == pytest.approx(1.56, abs=0.015)


def test_retains_planted_factors(three_factor):
    X, _, _ = three_factor
    pa = ParallelAnalysis(300, random_state=0).fit(X)
    assert pa.n_factors_ == 3
    assert pa.observed_[2] > pa.thresholds_[2] and pa.observed_[3] < pa.thresholds_[3]
    # Under pure noise the leading rule retains a factor about 5% of the time; the count rule
    # far more often, since every position gets its own 5% chance.
    retained = {
        rule: [
            ParallelAnalysis(200, random_state=0, count_rule=rule)
            .fit(np.random.default_rng(s).standard_normal((200, 10)))
            .n_factors_
            for s in range(30)
        ]
        for rule in ("leading", "count")
    }
    assert np.mean(np.asarray(retained["leading"]) > 0) <= 0.2
    assert np.mean(np.asarray(retained["count"]) > 0) > np.mean(np.asarray(retained["leading"]) > 0)


def test_fit_correlation_equals_fit(three_factor):
    X, _, _ = three_factor
    a = ParallelAnalysis(100, random_state=0).fit(X)
    b = ParallelAnalysis(100, random_state=0).fit_correlation(np.corrcoef(X.to_numpy(), rowvar=False), len(X))
    assert np.allclose(a.observed_, b.observed_) and np.array_equal(a.thresholds_, b.thresholds_)


def test_count_rules():
    observed = np.array([3.0, 1.0, 1.5, 0.2])
    cut = np.array([2.0, 1.2, 1.1, 1.0])
    assert count_factors(observed, cut, "count") == 2
    assert count_factors(observed, cut, "leading") == 1
    assert count_factors(np.array([3.0, 2.0]), np.array([1.0, 1.0])) == 2
    with pytest.raises(ValueError, match=r"\['leading', 'count'\]"):
        count_factors(observed, cut, "kaiser")


def test_paper002_bounds():
    assert bounded_n_factors(0, n_samples=100, n_features=30, rank=30) == 2
    assert bounded_n_factors(40, n_samples=500, n_features=60, rank=60) == 20
    assert bounded_n_factors(9, n_samples=6, n_features=60, rank=6) == 5
    assert bounded_n_factors(5, n_samples=100, n_features=4, rank=4) == 3
    assert bounded_n_factors(3, n_samples=3, n_features=3, rank=1) == 1


def test_bad_options():
    X = np.random.default_rng(0).standard_normal((20, 4))
    with pytest.raises(ValueError, match="percentile"):
        ParallelAnalysis(10, percentile=100).fit(X)
    with pytest.raises(ValueError, match=r"\['leading', 'count'\]"):
        ParallelAnalysis(10, count_rule="first").fit(X)
    with pytest.raises(ValueError, match="missing cells"):
        ParallelAnalysis(10).fit(np.where(X > 2, np.nan, X))
