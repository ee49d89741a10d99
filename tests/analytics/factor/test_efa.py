"""EFA: recovery of planted structure, conventions, factor_analyzer as the reference, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from factor_analyzer import FactorAnalyzer
from factor_analyzer import factor_analyzer as fa_module

from evalhouse.analytics.factor.diagnostics import match_factors
from evalhouse.analytics.factor.efa import EFA


@pytest.fixture
def reference_fa(monkeypatch):
    """factor_analyzer's own FactorAnalyzer, usable as a reference on this scikit-learn: its fit
    passes ``force_all_finite``, which scikit-learn 1.8 renamed; the test (never evalhouse) renames it."""
    original = fa_module.check_array

    def check_array(*args, **kwargs):
        if "force_all_finite" in kwargs:
            kwargs["ensure_all_finite"] = kwargs.pop("force_all_finite")
        return original(*args, **kwargs)

    monkeypatch.setattr(fa_module, "check_array", check_array)
    return FactorAnalyzer


@pytest.mark.parametrize("method", ["ml", "minres"])
@pytest.mark.parametrize("rotation", ["oblimin", "promax"])
def test_recovers_planted_oblique_structure(three_factor, method, rotation):
    X, L, phi = three_factor
    efa = EFA(3, method=method, rotation=rotation).fit(X)
    aligned, congruence = match_factors(L, efa.loadings_)
    assert congruence.min() > 0.98
    assert np.abs(aligned - L).max() < 0.12
    assert efa.converged_ and efa.start_ == "smc"
    if rotation == "oblimin":
        est_phi = np.abs(efa.phi_.to_numpy()[np.triu_indices(3, 1)])
        assert np.allclose(np.sort(est_phi), np.sort(phi[np.triu_indices(3, 1)]), atol=0.1)


def test_factors_sorted_by_ssl_and_oriented_positively(three_factor):
    X, _, _ = three_factor
    efa = EFA(3).fit(-X)  # every item reversed: orientation must still make factors positive
    assert np.all(np.diff(efa.ssl_.to_numpy()) <= 1e-12)
    scores = efa.transform(-X)
    z = (-X - (-X).mean()) / (-X).std(ddof=0)
    mean_index = z.mean(axis=1)
    for col in scores.columns:
        assert np.corrcoef(scores[col], mean_index)[0, 1] > 0
    assert (efa.loadings_.sum() > 0).all()


def test_orthogonal_solution_has_identity_phi_and_structure_equal_to_pattern(three_factor):
    X, _, _ = three_factor
    efa = EFA(3, rotation="none").fit(X)
    assert np.allclose(efa.phi_, np.eye(3))
    assert np.allclose(efa.structure_, efa.loadings_)
    assert np.allclose(efa.loadings_.abs(), efa.unrotated_loadings_.abs())


def test_s1_is_unrotated_ssl_share_and_rotation_invariant(three_factor):
    X, _, _ = three_factor
    a = EFA(3, rotation="oblimin").fit(X)
    b = EFA(3, rotation="none").fit(X)
    ssl = (b.unrotated_loadings_**2).sum().to_numpy()
    assert a.s1_ == pytest.approx(ssl[0] / ssl.sum(), rel=1e-9)
    assert a.s1_ == pytest.approx(b.s1_, rel=1e-9)
    # uniquenesses come from the model, not from the rotated pattern
    assert np.allclose(a.uniquenesses_, 1 - (a.unrotated_loadings_**2).sum(axis=1))
    implied = np.diag(a.loadings_.to_numpy() @ a.phi_.to_numpy() @ a.loadings_.to_numpy().T)
    assert np.allclose(implied, a.communalities_, atol=1e-6)


def test_score_weights_in_both_forms(three_factor):
    X, _, _ = three_factor
    oblique = EFA(3, score_form="oblique").fit(X)
    pattern = EFA(3, score_form="pattern").fit(X)
    R = oblique.correlation_.to_numpy()
    L, P = oblique.loadings_.to_numpy(), oblique.phi_.to_numpy()
    assert np.allclose(oblique.weights_, np.linalg.solve(R, L @ P))
    assert np.allclose(pattern.weights_, np.linalg.solve(R, pattern.loadings_.to_numpy()))
    # f_oblique = f_pattern Phi (paper 000, Appendix D)
    assert np.allclose(oblique.transform(X), pattern.transform(X) @ P, atol=1e-8)


def test_oblique_scores_match_factor_analyzer_transform(three_factor, reference_fa):
    X, _, _ = three_factor
    ours = EFA(3, method="ml", rotation="oblimin").fit(X).transform(X).to_numpy()
    theirs = reference_fa(n_factors=3, rotation="oblimin", method="ml").fit(X.to_numpy()).transform(X.to_numpy())
    cross = np.abs(np.corrcoef(ours.T, theirs.T)[:3, 3:])
    assert np.allclose(cross.max(axis=1), 1.0, atol=1e-8)


def test_transform_uses_training_moments(three_factor):
    X, _, _ = three_factor
    efa = EFA(2).fit(X)
    shifted = X + 10.0
    expected = ((shifted - efa.mean_) / efa.scale_).to_numpy() @ efa.weights_.to_numpy()
    assert np.allclose(efa.transform(shifted), expected)
    assert efa.transform(shifted).to_numpy().mean() > 1.0  # not re-centred on the new data
    # array input and column reordering by name
    assert np.allclose(efa.transform(X[X.columns[::-1]]), efa.transform(X))
    assert isinstance(efa.transform(X.to_numpy()), np.ndarray)


def test_singular_matrix_retries_from_unity_diagonal(planted):
    L = np.array([[0.8], [0.7], [0.6], [0.8], [0.7], [0.6], [0.5], [0.7]])
    X = planted(L, n=6, seed=3)  # 6 rows, 8 columns: rank-deficient correlation matrix
    efa = EFA(1, method="minres").fit(X)
    assert efa.start_ == "unity"
    assert np.isfinite(efa.loadings_.to_numpy()).all()
    with pytest.raises(ValueError, match="minres"):
        EFA(1, method="ml").fit(X)


def test_collinear_column_triggers_the_retry(planted):
    X = planted(np.full((6, 1), 0.7), n=200, seed=4)
    X["copy"] = X["b0"] * 2.0 + 1.0  # exact linear copy: singular R although n > p
    efa = EFA(1, method="minres").fit(X)
    assert efa.start_ == "unity"
    assert efa.loadings_.loc["copy", "F1"] == pytest.approx(efa.loadings_.loc["b0", "F1"], abs=1e-3)


def test_fit_correlation_matches_fit(three_factor):
    X, _, _ = three_factor
    a = EFA(3).fit(X)
    b = EFA(3).fit_correlation(a.correlation_, n_samples=len(X))
    assert np.allclose(a.loadings_, b.loadings_, atol=1e-5)
    with pytest.raises(ValueError, match="training moments"):
        b.transform(X)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "pca"}, r"choose one of \['ml', 'minres'\]"),
        ({"rotation": "varimax"}, r"choose one of \['oblimin', 'promax', 'none'\]"),
        ({"score_form": "bartlett"}, "oblique"),
        ({"n_factors": 12}, "n_factors"),
        ({"n_factors": 0}, "n_factors"),
    ],
)
def test_invalid_options_list_the_choices(three_factor, kwargs, match):
    X, _, _ = three_factor
    params = {"n_factors": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        EFA(**params).fit(X)


def test_bad_inputs_raise_clear_errors(three_factor):
    X, _, _ = three_factor
    X = X.iloc[:50].copy()
    const = X.assign(b0=1.0)
    with pytest.raises(ValueError, match=r"constant columns.*b0"):
        EFA(2).fit(const)
    text = X.astype(object)
    text.iloc[3, 2] = "n/a"
    with pytest.raises(ValueError, match=r"non-numeric cells in columns \['b2'\]"):
        EFA(2).fit(text)
    empty_row = X.copy()
    empty_row.iloc[7] = np.nan
    with pytest.raises(ValueError, match="all-missing rows"):
        EFA(2).fit(empty_row)
    holes = X.copy()
    holes.iloc[2, 1] = np.nan
    with pytest.raises(ValueError, match="missing cells"):
        EFA(2).fit(holes)
    with pytest.raises(ValueError, match="at least 3 rows"):
        EFA(1).fit(X.iloc[:2])


def test_estimator_contract(three_factor):
    X, _, _ = three_factor
    efa = EFA(2, method="minres")
    params = efa.get_params()
    efa.fit(X)
    assert efa.get_params() == params
    rec = efa.record_
    assert rec.kind == "efa" and rec.params["method"] == "minres"
    assert rec.input_shape == list(X.shape)
    assert rec.diagnostics["s1"] == pytest.approx(efa.s1_)
    assert isinstance(efa.loadings_, pd.DataFrame) and list(efa.loadings_.index) == list(X.columns)
