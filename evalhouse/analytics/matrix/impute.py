"""Imputers for sparse wide matrices (paper 002): SoftImpute, Gower kNN, missForest.

Every imputer is an estimator with ``fit(X)`` (stores the in-sample completion in
``completed_``), ``fit_transform(X)`` (returns it) and ``transform(X)`` (fills new rows from
what was learned). Observed cells are never changed.

* :class:`SoftImpute` - nuclear-norm matrix completion (Mazumder et al. 2010) by iterated
  soft-thresholded, rank-capped SVD on the standardised matrix, over a geometric lambda grid
  of ``n_lambdas`` points from ``lambda_0`` (largest singular value of the zero-filled matrix,
  where the solution is 0) down to ``lambda_0 * lambda_ratio``, each fit warm-started from the
  previous one. With ``shrinkage=None`` lambda is chosen on an internal column-stratified
  hold-out of the training cells.
* :class:`GowerKNNImputer` - k nearest models by Gower distance over co-observed benchmarks
  (range-normalised absolute difference), aggregated by a mean weighted with the Gower
  similarity ``1 - d`` (the paper's VIM setting; scikit-learn's ``KNNImputer`` only offers
  nan-euclidean distance).
* :class:`MissForestImputer` - missForest (iterative scikit-learn random forests, at most 10
  rounds, columns in order of increasing missingness, ``sqrt(p)`` features per split, stopped by
  missForest's own criterion: the first round whose change grows).

The correlation-level imputer is in :mod:`evalhouse.analytics.matrix.correlation`, the held-out
evaluation in :mod:`evalhouse.analytics.matrix.holdout`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import TransformerMixin
from sklearn.ensemble import RandomForestRegressor

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.checks import as_float_frame
from evalhouse.analytics.matrix.holdout import heldout_score, holdout_mask
from evalhouse.errors import InputError

# --------------------------------------------------------------------------- base class


def standardise(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values = frame.to_numpy(dtype=float)
    mean = np.nanmean(values, axis=0)
    sd = np.nanstd(values, axis=0, ddof=1)
    sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
    return (values - mean) / sd, mean, sd


class Imputer(TransformerMixin, AnalysisEstimator):
    kind = "impute"

    def _check_input(self, X: Any) -> pd.DataFrame:
        frame = as_float_frame(X)
        counts = frame.notna().sum(axis=0)
        sparse = list(counts.index[counts < 2])
        if sparse:
            raise InputError(f"columns with fewer than 2 observations cannot be imputed: {sparse[:10]}")
        return frame

    def fit(self, X: Any, y: Any = None) -> Imputer:
        """Learn from the observed cells of ``X`` and store the completion in ``completed_``."""
        self._start()
        frame = self._check_input(X)
        completed = pd.DataFrame(self._fit(frame), index=frame.index, columns=frame.columns)
        self.completed_ = frame.where(frame.notna(), completed)
        self.n_features_in_ = frame.shape[1]
        self._finish(X, **self._diagnostics())
        return self

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> pd.DataFrame:
        """In-sample completion of ``X``."""
        return self.fit(X).completed_.copy()

    def transform(self, X: Any) -> pd.DataFrame:
        """Fill the missing cells of new rows with what ``fit`` learned."""
        frame = as_float_frame(X)
        if frame.shape[1] != self.n_features_in_:
            raise InputError(f"X has {frame.shape[1]} columns; fitted on {self.n_features_in_}")
        filled = pd.DataFrame(self._transform(frame), index=frame.index, columns=frame.columns)
        return frame.where(frame.notna(), filled)

    def _diagnostics(self) -> dict[str, Any]:
        return {}

    def _fit(self, frame: pd.DataFrame) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform(self, frame: pd.DataFrame) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


# --------------------------------------------------------------------------- SoftImpute


def top_svd(X: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The leading ``rank`` singular triplets of ``X`` from the eigen-decomposition of its smaller
    Gram matrix: exact for the components a low-rank completion keeps (relative error about
    eps * (s_1 / s_rank)^2), and ~10x faster than a full SVD of a models x benchmarks matrix,
    which SoftImpute would otherwise compute on every iteration."""
    tall = X.shape[0] >= X.shape[1]
    gram = X.T @ X if tall else X @ X.T
    w, vecs = np.linalg.eigh(gram)
    order = np.argsort(w)[::-1][:rank]
    s = np.sqrt(np.clip(w[order], 0.0, None))
    vecs = vecs[:, order]
    safe = np.where(s > s[:1] * 1e-12, s, np.inf) if s.size else s  # a null direction gives zeros
    if tall:
        return (X @ vecs) / safe, s, vecs.T
    return vecs, s, ((X.T @ vecs) / safe).T


def _svt(filled: np.ndarray, lam: float, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    u, s, vt = top_svd(filled, rank)
    return u, np.maximum(s - lam, 0.0), vt


def soft_impute_path(
    Z: np.ndarray,
    lambdas: Sequence[float],
    rank: int,
    *,
    max_iter: int = 200,
    tol: float = 1e-5,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """SoftImpute solutions ``(U, s, Vt)`` along ``lambdas`` (descending), warm-started.

    ``Z`` has NaN for missing cells; each solution minimises
    ``0.5 ||P_obs(Z - M)||_F^2 + lambda ||M||_*`` subject to ``rank(M) <= rank``.
    """
    observed = ~np.isnan(Z)
    z0 = np.where(observed, Z, 0.0)
    current = np.zeros_like(z0)
    out = []
    for lam in lambdas:
        for _ in range(max_iter):
            u, s, vt = _svt(np.where(observed, z0, current), lam, rank)
            new = (u * s) @ vt
            change = np.sum((new - current) ** 2) / max(np.sum(current**2), 1e-12)
            current = new
            if change < tol:
                break
        out.append((u, s, vt))
    return out


class SoftImpute(Imputer):
    """Nuclear-norm matrix completion with a warm-started lambda path.

    Parameters
    ----------
    rank : int
        Maximum rank of the solution.
    shrinkage : float or None
        Lambda on the standardised scale; None chooses it on an internal hold-out.
    n_lambdas : int
        Points in the geometric grid (paper 002: 30).
    lambda_ratio : float
        Smallest lambda as a fraction of ``lambda_0`` (paper 002: 1/100).
    center : bool
        Standardise columns (observed moments) before completing; False for matrices that are
        already on a common scale, such as a correlation matrix.
    max_iter, tol : int, float
        Per-lambda iteration cap and relative-change tolerance.
    random_state : int, Generator or None
        Seed of the internal hold-out used when ``shrinkage`` is None.

    Attributes
    ----------
    lambdas_ : ndarray
    path_r2_ : ndarray or None
        Internal held-out R2 along the path (None when ``shrinkage`` was given).
    shrinkage_ : float
    components_ : ndarray
        ``diag(s) Vt`` of the final solution (rank x p), used by ``transform``.
    """

    def __init__(
        self,
        rank: int = 5,
        *,
        shrinkage: float | None = None,
        n_lambdas: int = 30,
        lambda_ratio: float = 0.01,
        center: bool = True,
        max_iter: int = 200,
        tol: float = 1e-5,
        random_state: Any = None,
    ) -> None:
        self.rank = rank
        self.shrinkage = shrinkage
        self.n_lambdas = n_lambdas
        self.lambda_ratio = lambda_ratio
        self.center = center
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit(self, frame: pd.DataFrame) -> np.ndarray:
        if self.center:
            Z, self.mean_, self.scale_ = standardise(frame)
        else:
            Z = frame.to_numpy(dtype=float)
            self.mean_, self.scale_ = np.zeros(Z.shape[1]), np.ones(Z.shape[1])
        rank = int(min(self.rank, min(Z.shape) - 1)) if min(Z.shape) > 1 else 1
        if rank < 1:
            raise InputError(f"rank={self.rank!r} must be >= 1")
        lam0 = float(np.linalg.svd(np.nan_to_num(Z), compute_uv=False)[0])
        self.lambdas_ = np.geomspace(lam0, lam0 * self.lambda_ratio, int(self.n_lambdas))
        if self.shrinkage is None:
            mask = holdout_mask(Z, random_state=self.random_state)
            train = np.where(mask, np.nan, Z)
            path = soft_impute_path(train, self.lambdas_, rank, max_iter=self.max_iter, tol=self.tol)
            self.path_r2_ = np.array([heldout_score(Z, mask, (u * s) @ vt).r2 for u, s, vt in path])
            stop = int(np.argmax(self.path_r2_))
            lambdas = self.lambdas_[: stop + 1]
        else:
            self.path_r2_ = None
            lambdas = np.append(self.lambdas_[self.lambdas_ > self.shrinkage], self.shrinkage)
        u, s, vt = soft_impute_path(Z, lambdas, rank, max_iter=self.max_iter, tol=self.tol)[-1]
        self.shrinkage_ = float(lambdas[-1])
        self.rank_ = int((s > 0).sum())
        self.components_ = s[:, None] * vt
        return ((u * s) @ vt) * self.scale_ + self.mean_

    def _transform(self, frame: pd.DataFrame) -> np.ndarray:
        Z = (frame.to_numpy(dtype=float) - self.mean_) / self.scale_
        basis = self.components_.T  # p x r
        out = np.zeros_like(Z)
        for i, row in enumerate(Z):
            seen = ~np.isnan(row)
            if seen.any():
                coef = np.linalg.lstsq(basis[seen], row[seen], rcond=None)[0]
                out[i] = basis @ coef
        return out * self.scale_ + self.mean_

    def _diagnostics(self) -> dict[str, Any]:
        return {"shrinkage": self.shrinkage_, "rank": self.rank_}


# --------------------------------------------------------------------------- kNN (Gower)


def gower_distances(A: np.ndarray, B: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """Gower distance between the rows of ``A`` and ``B`` over co-observed columns.

    Pairs with no co-observed column get ``inf``. Column by column, the sum adds each co-observed
    pair's ``|a - b| / range``: only the block of rows observed on both sides is touched, so a sparse
    matrix costs its observed cells, not rows x rows per column (a mostly observed column is summed
    whole, where picking the block would cost more than it saves).
    """
    seen_a, seen_b = ~np.isnan(A), ~np.isnan(B)
    num = np.zeros((A.shape[0], B.shape[0]))
    for j in range(A.shape[1]):
        ia, ib = np.flatnonzero(seen_a[:, j]), np.flatnonzero(seen_b[:, j])
        if 3 * ia.size * ib.size > num.size:
            both = seen_a[:, j][:, None] & seen_b[:, j][None, :]
            num += np.where(both, np.abs(A[:, j][:, None] - B[:, j][None, :]) / ranges[j], 0.0)
        elif ia.size and ib.size:
            block = np.ix_(ia, ib)
            num[block] += np.abs(A[ia, j][:, None] - B[ib, j][None, :]) / ranges[j]
    den = seen_a.astype(float) @ seen_b.T.astype(float)  # co-observed columns per pair (exact counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.inf)


class GowerKNNImputer(Imputer):
    """k-nearest-neighbour imputation with Gower distance and similarity-weighted means.

    Parameters
    ----------
    n_neighbors : int
        Donors per missing cell (paper 002 sweeps 1...10).
    weighted : bool
        Weight donors by Gower similarity ``1 - d``; plain mean otherwise.
    """

    def __init__(self, n_neighbors: int = 5, *, weighted: bool = True) -> None:
        self.n_neighbors = n_neighbors
        self.weighted = weighted

    def _fit(self, frame: pd.DataFrame) -> np.ndarray:
        if int(self.n_neighbors) < 1:
            raise InputError(f"n_neighbors={self.n_neighbors!r} must be >= 1")
        self.train_ = frame.to_numpy(dtype=float)
        ranges = np.nanmax(self.train_, axis=0) - np.nanmin(self.train_, axis=0)
        self.ranges_ = np.where(ranges > 0, ranges, 1.0)
        self.col_mean_ = np.nanmean(self.train_, axis=0)
        dist = gower_distances(self.train_, self.train_, self.ranges_)
        np.fill_diagonal(dist, np.inf)  # a model is not its own donor
        return self._impute(self.train_, dist)

    def _transform(self, frame: pd.DataFrame) -> np.ndarray:
        values = frame.to_numpy(dtype=float)
        return self._impute(values, gower_distances(values, self.train_, self.ranges_))

    def _impute(self, values: np.ndarray, dist: np.ndarray) -> np.ndarray:
        out = values.copy()
        k = int(self.n_neighbors)
        for j in range(values.shape[1]):
            recipients = np.flatnonzero(np.isnan(values[:, j]))
            donors = np.flatnonzero(~np.isnan(self.train_[:, j]))
            if recipients.size == 0:
                continue
            d = dist[np.ix_(recipients, donors)]
            kk = min(k, donors.size)
            nearest = np.argpartition(d, kk - 1, axis=1)[:, :kk]
            nd = np.take_along_axis(d, nearest, axis=1)
            nv = self.train_[donors[nearest], j]
            finite = np.isfinite(nd)
            w = np.clip(1.0 - nd, 0.0, None) if self.weighted else np.ones_like(nd)
            w = np.where(finite, w, 0.0)
            plain = np.where(finite, 1.0, 0.0)
            # All-zero similarity weights fall back to a plain mean of the finite donors,
            # and a model sharing no benchmark with any donor gets the column mean.
            use_w = np.where(w.sum(axis=1, keepdims=True) > 0, w, plain)
            with np.errstate(invalid="ignore", divide="ignore"):
                est = (use_w * np.nan_to_num(nv)).sum(axis=1) / use_w.sum(axis=1)
            out[recipients, j] = np.where(np.isfinite(est), est, self.col_mean_[j])
        return out


# --------------------------------------------------------------------------- missForest


class MissForestImputer(Imputer):
    """missForest (Stekhoven & Bühlmann 2012): iterative random forests over the columns.

    Start from column means; each round visits the columns with missing cells in order of
    increasing missingness, fits a forest (``n_estimators`` trees, ``sqrt(p)`` features per split:
    missForest's default mtry) on the column's observed rows against the current imputation of the
    other columns, and predicts its missing cells. The rounds stop as soon as the change
    ``sum((X_new - X_old)^2) / sum(X_new^2)`` grows for the first time - the previous imputation is
    kept - or after ``max_iter`` rounds. Forest ``k`` (in the order fitted) is seeded
    ``random_state + k``.

    Parameters
    ----------
    n_estimators : int
        Trees per forest (paper 002 sweeps 50, 100, 200, 400).
    max_iter : int
        Maximum imputation rounds (paper 002: 10).
    random_state : int or None
    n_jobs : int or None
        Passed to the forests.

    Attributes
    ----------
    changes_ : list of float
        The change of each round; ``n_iter_`` the rounds kept; ``converged_`` whether missForest's
        criterion stopped the rounds before ``max_iter``.
    """

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        max_iter: int = 10,
        random_state: Any = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _forest(self, k: int) -> RandomForestRegressor:
        seed = None if self.random_state is None else int(self.random_state) + k
        return RandomForestRegressor(
            n_estimators=int(self.n_estimators), max_features="sqrt", random_state=seed, n_jobs=self.n_jobs
        )

    def _fit(self, frame: pd.DataFrame) -> np.ndarray:
        X = frame.to_numpy(dtype=float)
        missing = np.isnan(X)
        self.col_mean_ = np.nanmean(X, axis=0)
        old = np.where(missing, self.col_mean_, X)
        counts = missing.sum(axis=0)
        order = [int(j) for j in np.argsort(counts, kind="stable") if counts[j] > 0]
        self.changes_, self.forests_, k = [], {}, 0
        best, self.converged_ = old, False
        for _ in range(int(self.max_iter)):
            new = old.copy()
            forests = {}
            for j in order:
                others = np.arange(X.shape[1]) != j
                rows = ~missing[:, j]
                forests[j] = self._forest(k).fit(new[rows][:, others], X[rows, j])
                k += 1
                new[missing[:, j], j] = forests[j].predict(new[missing[:, j]][:, others])
            change = float(np.sum((new - old) ** 2) / max(np.sum(new**2), 1e-300))
            if self.changes_ and change > self.changes_[-1]:
                self.converged_ = True
                break
            self.changes_.append(change)
            best, old, self.forests_ = new, new, forests
            if change == 0.0:
                self.converged_ = True
                break
        self.n_iter_ = len(self.changes_)
        return best

    def _diagnostics(self) -> dict[str, Any]:
        return {"converged": self.converged_, "n_iter": self.n_iter_}

    def _transform(self, frame: pd.DataFrame) -> np.ndarray:
        X = frame.to_numpy(dtype=float)
        missing = np.isnan(X)
        out = np.where(missing, self.col_mean_, X)
        for j, forest in self.forests_.items():
            rows = missing[:, j]
            if rows.any():
                out[rows, j] = forest.predict(out[rows][:, np.arange(X.shape[1]) != j])
        return out
