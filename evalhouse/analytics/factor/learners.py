"""The learners of the prediction ladder (paper 000, Appendix I) and the paired bootstrap of its contrast.

Learners are tuned by an inner ``GridSearchCV(cv=5, scoring="neg_mean_squared_error")``. Ridge
uses an exact closed-form equivalent (SVD per inner fold, all alphas at once), which is what makes
the full pipeline fast; a test checks it against ``GridSearchCV(Ridge())``. The grids are the
paper's with the notebook's fixed settings: random forest with 300 trees and ``min_samples_leaf``
in {1, 3}, gradient boosting with 200 stages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import ElasticNet, Ridge
from sklearn.model_selection import GridSearchCV, KFold

from evalhouse.analytics.checks import check_choice

LEARNERS = ("ridge", "elasticnet", "random_forest", "gradient_boosting")
RIDGE_ALPHAS = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
BOOTSTRAP_UNITS = ("model", "cell")


def learner_grid(name: str, random_state: int | None = 0) -> tuple[Any, dict[str, list[Any]]]:
    """Estimator and inner grid of one learner (paper 000, Appendix I)."""
    check_choice("learner", name, LEARNERS)
    if name == "ridge":
        return Ridge(), {"alpha": list(RIDGE_ALPHAS)}
    if name == "elasticnet":
        return ElasticNet(max_iter=5000), {"alpha": [0.03, 0.1, 0.3, 1.0], "l1_ratio": [0.2, 0.5, 0.8]}
    if name == "random_forest":
        return (
            RandomForestRegressor(n_estimators=300, random_state=random_state),
            {"max_depth": [None, 4], "min_samples_leaf": [1, 3]},
        )
    return (
        GradientBoostingRegressor(n_estimators=200, random_state=random_state),
        {"max_depth": [2, 3], "learning_rate": [0.05, 0.1]},
    )


def _ridge_path(X: np.ndarray, y: np.ndarray, alphas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intercepts and coefficients of ``Ridge(alpha)`` for every alpha (closed form via SVD)."""
    xm, ym = X.mean(axis=0), y.mean()
    u, s, vt = np.linalg.svd(X - xm, full_matrices=False)
    shrink = s / (s**2 + alphas[:, None])  # (n_alphas, rank)
    coefs = (shrink * (u.T @ (y - ym))) @ vt
    return ym - coefs @ xm, coefs


class FastRidgeCV:
    """``GridSearchCV(Ridge(), {"alpha": alphas}, cv=KFold(5))`` refit, in closed form."""

    def __init__(self, alphas: Sequence[float] = RIDGE_ALPHAS, cv: int = 5) -> None:
        self.alphas = np.asarray(alphas, dtype=float)
        self.cv = cv

    def fit(self, X: np.ndarray, y: np.ndarray) -> FastRidgeCV:
        fold_mse = []
        for tr, va in KFold(self.cv).split(X):
            b0, b = _ridge_path(X[tr], y[tr], self.alphas)
            pred = b0[:, None] + b @ X[va].T
            fold_mse.append(((pred - y[va]) ** 2).mean(axis=1))
        # GridSearchCV maximises the mean of the fold scores; argmin keeps the first of ties.
        best = int(np.argmin(np.mean(fold_mse, axis=0)))
        self.best_params_ = {"alpha": float(self.alphas[best])}
        b0, b = _ridge_path(X, y, self.alphas[best : best + 1])
        self.intercept_, self.coef_ = float(b0[0]), b[0]
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.intercept_ + X @ self.coef_


def tuned(name: str, X: np.ndarray, y: np.ndarray, inner: int, random_state: int | None) -> Any:
    if name == "ridge":
        return FastRidgeCV(cv=inner).fit(X, y)
    est, grid = learner_grid(name, random_state)
    return GridSearchCV(est, grid, cv=inner, scoring="neg_mean_squared_error").fit(X, y)


def paired_bootstrap(
    diff: np.ndarray, *, n_bootstrap: int = 2000, random_state: Any = 42, unit: str = "model"
) -> tuple[float, float, float]:
    """Mean of paired squared-error differences and its percentile 95% interval.

    ``diff`` is ``(n_models,)`` or ``(n_models, n_targets)``. ``unit="model"`` resamples rows
    (all targets of a model move together); ``"cell"`` resamples the flattened cells.
    """
    check_choice("bootstrap_unit", unit, BOOTSTRAP_UNITS)
    d = np.asarray(diff, dtype=float)
    rng = np.random.default_rng(random_state)
    if unit == "cell" or d.ndim == 1:
        flat = d.ravel()
        idx = rng.integers(0, flat.size, (int(n_bootstrap), flat.size))
        boots = flat[idx].mean(axis=1)
    else:
        row_means = d.mean(axis=1)
        idx = rng.integers(0, len(row_means), (int(n_bootstrap), len(row_means)))
        boots = row_means[idx].mean(axis=1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return float(d.mean()), float(lo), float(hi)
