"""Exploratory factor analysis on top of ``factor_analyzer``, with the conventions both papers need.

* Estimation: ``factor_analyzer`` ML (``stats::factanal`` objective) or MINRES, uniquenesses
  bounded to ``[0.005, 1]``, fitted on the Pearson correlation matrix.
* Start values: squared multiple correlations (SMC). On a singular correlation matrix the SMC
  start is a hard error in R (``solve`` refuses a matrix whose reciprocal condition number is
  below machine epsilon), and paper 002 then retries "from a unity diagonal" (communalities 1,
  ``psych::fa(SMC = FALSE)``). numpy's ``inv`` does not refuse such matrices, so we apply R's
  rule explicitly and retry with unit communalities; ``start_`` records which start was used.
* Rotation: ``oblimin`` (direct oblimin, gamma = 0, i.e. quartimin), ``promax`` (power 4) or
  ``none``; factor_analyzer's ``Rotator`` with its default Kaiser normalisation. We rotate
  ourselves instead of through ``FactorAnalyzer(rotation=...)`` because factor_analyzer 0.5.1
  re-sorts the loading columns by variance without re-sorting ``phi_``.
* Order and orientation: factors are sorted by rotated sum of squared loadings (SSL), then each
  is flipped so that its training-set scores correlate positively with the mean standardised
  score (paper 000, Appendix C). That covariance is ``w_m' R 1``, so it needs only ``R``.
* Scores: Thurstone regression weights, ``W = R^-1 Lambda Phi`` (``score_form="oblique"``) or
  the pattern form ``W = R^-1 Lambda`` used by the paper-000 prediction ladder
  (``score_form="pattern"``); ``transform`` standardises new rows with the training moments.

Extraction (:mod:`.extraction`) is factor_analyzer 0.5.1's, written out: its ``fit`` calls
scikit-learn's ``check_array`` with a keyword scikit-learn 1.8 removed, and it has no parameter for
the unity start; ML is given R's analytic gradient (the same optimum, a fifth of the time).
Rotation is factor_analyzer's public ``Rotator``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from factor_analyzer.rotator import Rotator
from sklearn.base import TransformerMixin

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.checks import as_float_frame, check_choice, check_matrix
from evalhouse.analytics.factor.extraction import STARTS, UNIQUENESS_BOUNDS, extract
from evalhouse.errors import InputError, RunFailed

METHODS = ("ml", "minres")
ROTATIONS = ("oblimin", "promax", "none")
SCORE_FORMS = ("oblique", "pattern")


class FactorFitError(RunFailed):
    """The factor model could not be fitted (non-finite solution after the unity retry)."""


def _fit_unrotated(corr: np.ndarray, n_factors: int, method: str) -> tuple[np.ndarray, str, bool]:
    """Unrotated loadings, the start used and whether L-BFGS-B reported convergence."""
    for start in STARTS:
        try:
            fitted = extract(corr, n_factors, method, start)
        except np.linalg.LinAlgError:
            # Only a hard error triggers the unity retry (paper 002, Appendix I.1).
            continue
        if np.isfinite(fitted.loadings).all():
            return fitted.loadings, start, fitted.converged
    raise FactorFitError(f"{method} fit with {n_factors} factors failed from both SMC and unity starts")


def _rotate(loadings: np.ndarray, rotation: str) -> tuple[np.ndarray, np.ndarray]:
    k = loadings.shape[1]
    if k == 1 or rotation == "none":
        return loadings.copy(), np.eye(k)
    rotator = Rotator(method=rotation)
    rotated = rotator.fit_transform(loadings)
    phi = np.eye(k) if rotator.phi_ is None else np.asarray(rotator.phi_, dtype=float)
    return np.asarray(rotated, dtype=float), phi


def _solve_weights(corr: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``R^-1 rhs``; the pseudo-inverse when ``R`` is singular (minres on n <= p data)."""
    if 1.0 / np.linalg.cond(corr) < np.finfo(float).eps:
        return np.linalg.pinv(corr) @ rhs
    return np.linalg.solve(corr, rhs)


def _factor_names(k: int) -> list[str]:
    return [f"F{m + 1}" for m in range(k)]


class EFA(TransformerMixin, AnalysisEstimator):
    """Exploratory factor analysis with oriented, sorted factors and Thurstone scores.

    Parameters
    ----------
    n_factors : int
        Number of factors, ``1 <= n_factors <= n_features - 1``.
    method : {"ml", "minres"}
        Estimator. ML needs more rows than columns; MINRES also fits a singular correlation
        matrix (fewer rows than columns, collinear columns), starting from SMC and retrying
        from a unity diagonal when SMC is a hard error.
    rotation : {"oblimin", "promax", "none"}
        ``oblimin`` is direct oblimin with gamma = 0 (quartimin). Ignored for one factor.
    score_form : {"oblique", "pattern"}
        Thurstone weights ``R^-1 Lambda Phi`` or ``R^-1 Lambda``.
    orient : bool
        Flip each factor to correlate positively with the mean standardised score.

    Attributes
    ----------
    loadings_ : DataFrame
        Rotated pattern loadings (items x factors).
    unrotated_loadings_ : DataFrame
        Unrotated loadings, sorted by SSL and oriented.
    uniquenesses_, communalities_ : Series
        ``1 - h2`` and ``h2`` from the unrotated solution (negative uniqueness = Heywood case).
    ssl_, unrotated_ssl_ : Series
        Sums of squared loadings per factor.
    s1_ : float
        ``unrotated SSL_1 / sum(unrotated SSL)``, the paper-000 dominance statistic.
    phi_, structure_, weights_, correlation_ : DataFrame
        Factor correlations (identity when orthogonal), structure ``Lambda Phi``, score
        weights, and the correlation matrix analysed.
    mean_, scale_ : Series or None
        Training moments (ddof = 0); None after :meth:`fit_correlation`.
    start_ : str
        ``"smc"`` or ``"unity"``.
    converged_ : bool
        Whether the optimiser reported convergence.
    heywood_ : list of str
        Items whose uniqueness sits at or below the lower bound.
    """

    kind = "efa"

    def __init__(
        self,
        n_factors: int = 1,
        *,
        method: str = "ml",
        rotation: str = "oblimin",
        score_form: str = "oblique",
        orient: bool = True,
    ) -> None:
        self.n_factors = n_factors
        self.method = method
        self.rotation = rotation
        self.score_form = score_form
        self.orient = orient

    def _check_params(self, n_features: int) -> None:
        check_choice("method", self.method, METHODS)
        check_choice("rotation", self.rotation, ROTATIONS)
        check_choice("score_form", self.score_form, SCORE_FORMS)
        if not isinstance(self.n_factors, int | np.integer) or not 1 <= self.n_factors < n_features:
            raise InputError(
                f"n_factors={self.n_factors!r} must be an integer in [1, n_features - 1 = {n_features - 1}]"
            )

    def fit(self, X: Any, y: Any = None) -> EFA:
        """Fit on a complete wide matrix (rows = models, columns = benchmarks).

        Raises
        ------
        ValueError
            Non-numeric cells, missing cells, all-missing rows, constant columns, fewer than
            three rows, or ``method="ml"`` with no more rows than columns.
        """
        self._start()
        frame = as_float_frame(X)
        check_matrix(frame)
        n, p = frame.shape
        self._check_params(p)
        if self.method == "ml" and n <= p:
            raise InputError(
                f"method='ml' needs more rows than columns (got {n} x {p}): the ML objective "
                "takes log-eigenvalues of a singular correlation matrix. Use method='minres', "
                "which fits it with the unity-diagonal retry, or reduce the columns."
            )
        values = frame.to_numpy(dtype=float)
        corr = np.corrcoef(values, rowvar=False)
        self._fit_corr(corr, list(frame.columns), n)
        self.mean_ = pd.Series(values.mean(axis=0), index=frame.columns)
        self.scale_ = pd.Series(values.std(axis=0), index=frame.columns)
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        self._finish(X, **self._diagnostics())
        return self

    def fit_correlation(self, corr: Any, n_samples: int | None = None) -> EFA:
        """Fit on a correlation matrix (e.g. a completed correlation-level imputation).

        ``transform`` is unavailable afterwards because there are no training moments.
        """
        self._start()
        frame = corr if isinstance(corr, pd.DataFrame) else pd.DataFrame(np.asarray(corr, float))
        R = frame.to_numpy(dtype=float)
        if R.ndim != 2 or R.shape[0] != R.shape[1] or not np.isfinite(R).all():
            raise InputError("corr must be a finite square matrix")
        if not np.allclose(R, R.T, atol=1e-8) or not np.allclose(np.diag(R), 1.0, atol=1e-6):
            raise InputError("corr must be symmetric with a unit diagonal")
        self._check_params(R.shape[0])
        if self.method == "ml" and np.linalg.eigvalsh(R)[0] <= 1e-10:
            raise InputError("method='ml' needs a positive-definite correlation matrix; use 'minres'")
        names = [str(c) for c in frame.columns] if isinstance(corr, pd.DataFrame) else None
        self._fit_corr((R + R.T) / 2, names or [f"x{j}" for j in range(R.shape[0])], n_samples)
        self.mean_ = None
        self.scale_ = None
        self._finish(frame, **self._diagnostics())
        return self

    def _fit_corr(self, corr: np.ndarray, names: list[Any], n_samples: int | None) -> None:
        k = int(self.n_factors)
        unrotated, start, converged = _fit_unrotated(corr, k, self.method)
        # factor_analyzer already orders unrotated factors by SSL; re-sort to be explicit.
        unrotated = unrotated[:, np.argsort(-(unrotated**2).sum(axis=0), kind="stable")]
        rotated, phi = _rotate(unrotated, self.rotation)
        order = np.argsort(-(rotated**2).sum(axis=0), kind="stable")
        rotated, phi = rotated[:, order], phi[np.ix_(order, order)]

        ones = np.ones(corr.shape[0])
        if self.orient:
            # cov(score_m, mean z) is proportional to w_m' R 1; flip factors where it is negative.
            w = _solve_weights(corr, rotated @ phi if self.score_form == "oblique" else rotated)
            signs = np.where(w.T @ (corr @ ones) < 0, -1.0, 1.0)
            rotated, phi = rotated * signs, phi * np.outer(signs, signs)
            u_signs = np.where(_solve_weights(corr, unrotated).T @ (corr @ ones) < 0, -1.0, 1.0)
            unrotated = unrotated * u_signs
        structure = rotated @ phi
        weights = _solve_weights(corr, structure if self.score_form == "oblique" else rotated)

        cols = _factor_names(k)
        communal = (unrotated**2).sum(axis=1)
        self.correlation_ = pd.DataFrame(corr, index=names, columns=names)
        self.loadings_ = pd.DataFrame(rotated, index=names, columns=cols)
        self.unrotated_loadings_ = pd.DataFrame(unrotated, index=names, columns=cols)
        self.phi_ = pd.DataFrame(phi, index=cols, columns=cols)
        self.structure_ = pd.DataFrame(structure, index=names, columns=cols)
        self.weights_ = pd.DataFrame(weights, index=names, columns=cols)
        self.communalities_ = pd.Series(communal, index=names)
        self.uniquenesses_ = pd.Series(1.0 - communal, index=names)
        self.ssl_ = pd.Series((rotated**2).sum(axis=0), index=cols)
        unrotated_ssl = (unrotated**2).sum(axis=0)
        self.unrotated_ssl_ = pd.Series(unrotated_ssl, index=cols)
        self.s1_ = float(unrotated_ssl[0] / unrotated_ssl.sum())
        self.start_ = start
        self.converged_ = converged
        self.heywood_ = [n for n, u in zip(names, 1.0 - communal, strict=True) if u <= UNIQUENESS_BOUNDS[0] + 1e-9]
        self.n_samples_ = n_samples
        self.n_features_in_ = len(names)

    def _diagnostics(self) -> dict[str, Any]:
        return {
            "n_factors": int(self.n_factors),
            "s1": self.s1_,
            "start": self.start_,
            "converged": self.converged_,
            "heywood": self.heywood_,
            "n_samples": self.n_samples_,
        }

    def transform(self, X: Any) -> Any:
        """Thurstone scores of ``X``, standardised with the training mean and scale."""
        if getattr(self, "mean_", None) is None:
            raise InputError("transform needs training moments; this EFA was fitted on a correlation matrix")
        frame = as_float_frame(X)
        if isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
            missing = [c for c in self.feature_names_in_ if c not in frame.columns]
            if missing:
                raise InputError(f"X lacks fitted columns {missing[:10]}")
            frame = frame[list(self.feature_names_in_)]
        elif frame.shape[1] != self.n_features_in_:
            raise InputError(f"X has {frame.shape[1]} columns; the EFA was fitted on {self.n_features_in_}")
        values = frame.to_numpy(dtype=float)
        if np.isnan(values).any():
            raise InputError("X has missing cells; factor scores need complete rows")
        z = (values - self.mean_.to_numpy()) / self.scale_.to_numpy()
        scores = z @ self.weights_.to_numpy()
        if isinstance(X, pd.DataFrame):
            return pd.DataFrame(scores, index=X.index, columns=self.loadings_.columns)
        return scores
