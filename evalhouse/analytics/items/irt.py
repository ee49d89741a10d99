"""Item response theory for benchmark builders: a 2PL model and tinyBenchmarks-style anchors.

``TwoPL`` fits P(correct | checkpoint i, item j) = sigmoid(a_j (theta_i - b_j)) on the
item-response table (checkpoints as respondents, ``p_correct`` as a fractional outcome, NaN for a
missing response) by joint maximum likelihood with small Gaussian priors (theta ~ N(0, 1),
log a ~ N(0, 1), b ~ N(0, 2^2)) that keep the scale identified — one vectorised L-BFGS over all
parameters, no loop over items.

``AnchorSubset`` picks ~100 items that stand for a benchmark (Polo et al., tinyBenchmarks): items
are clustered (k-means, k = the subset size) on their IRT representation (a_j, a_j * b_j) and the
item nearest each centre becomes an anchor weighted by its cluster's share of items; a new
checkpoint's benchmark score is estimated as the weighted mean of its anchor scores. ``evaluate``
reports the error on held-out checkpoints next to a random subset of the same size.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from sklearn.cluster import KMeans

from evalhouse.analytics.base import AnalysisEstimator


def response_matrix(responses: pd.DataFrame) -> pd.DataFrame:
    """checkpoint x item matrix of mean p_correct (over seeds' epochs of one checkpoint id)."""
    return responses.pivot_table(index="checkpoint_id", columns="item_id", values="p_correct", aggfunc="mean")


class TwoPL(AnalysisEstimator):
    kind = "irt_2pl"

    def __init__(self, *, max_iter: int = 500, prior_b_sd: float = 2.0, random_state: int = 0) -> None:
        self.max_iter = max_iter
        self.prior_b_sd = prior_b_sd
        self.random_state = random_state

    def fit(self, Y: pd.DataFrame) -> TwoPL:
        self._start()
        y = Y.to_numpy(dtype=float)
        mask = ~np.isnan(y)
        y0 = np.where(mask, y, 0.0)
        n, m = y.shape
        p_item = np.clip(np.nanmean(y, axis=0), 0.02, 0.98)
        x0 = np.concatenate([np.zeros(n), np.zeros(m), -np.log(p_item / (1 - p_item))])
        vb = self.prior_b_sd**2

        def loss(x: np.ndarray) -> tuple[float, np.ndarray]:
            theta, loga, b = x[:n], x[n : n + m], x[n + m :]
            a = np.exp(loga)
            z = a[None, :] * (theta[:, None] - b[None, :])
            p = 1.0 / (1.0 + np.exp(-z))
            nll = -np.sum(mask * (y0 * np.log(p + 1e-12) + (1 - y0) * np.log(1 - p + 1e-12)))
            resid = mask * (p - y0)  # d nll / dz
            g_theta = (resid * a[None, :]).sum(axis=1) + theta
            g_loga = (resid * (theta[:, None] - b[None, :])).sum(axis=0) * a + loga
            g_b = -(resid * a[None, :]).sum(axis=0) + b / vb
            penalty = 0.5 * (theta @ theta + loga @ loga + b @ b / vb)
            return nll + penalty, np.concatenate([g_theta, g_loga, g_b])

        res = minimize(loss, x0, jac=True, method="L-BFGS-B", options={"maxiter": self.max_iter})
        self.theta_ = pd.Series(res.x[:n], index=Y.index, name="theta")
        self.items_ = pd.DataFrame({"a": np.exp(res.x[n : n + m]), "b": res.x[n + m :]}, index=Y.columns)
        self.converged_ = bool(res.success)
        self._finish(Y, converged=self.converged_, n_iter=int(res.nit), nll=float(res.fun))
        return self

    def predict_proba(self, theta: np.ndarray) -> np.ndarray:
        a, b = self.items_["a"].to_numpy(), self.items_["b"].to_numpy()
        return 1.0 / (1.0 + np.exp(-a[None, :] * (np.asarray(theta)[:, None] - b[None, :])))


def _theta_mle(y: np.ndarray, a: np.ndarray, b: np.ndarray, n_iter: int = 50) -> np.ndarray:
    """Per row, theta maximising the 2PL likelihood of ``y`` (N(0, 1) prior), by Newton steps."""
    mask = ~np.isnan(y)
    y0 = np.where(mask, y, 0.0)
    theta = np.zeros(len(y))
    for _ in range(n_iter):
        p = 1.0 / (1.0 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
        grad = (mask * (y0 - p) * a[None, :]).sum(axis=1) - theta
        hess = -(mask * p * (1 - p) * (a[None, :] ** 2)).sum(axis=1) - 1.0
        theta = theta - grad / hess
    return theta


class AnchorSubset(AnalysisEstimator):
    kind = "irt_anchors"

    def __init__(self, *, n_anchors: int = 100, random_state: int = 0) -> None:
        self.n_anchors = n_anchors
        self.random_state = random_state

    def fit(self, Y: pd.DataFrame) -> AnchorSubset:
        """Fit the 2PL on the training checkpoints ``Y`` and choose the anchors."""
        self._start()
        irt = TwoPL(random_state=self.random_state).fit(Y)
        emb = np.column_stack([irt.items_["a"], irt.items_["a"] * irt.items_["b"]])
        k = min(self.n_anchors, len(emb))
        km = KMeans(n_clusters=k, n_init=4, random_state=self.random_state).fit(emb)
        anchors, weights = [], []
        for c in range(k):
            members = np.flatnonzero(km.labels_ == c)
            d = np.linalg.norm(emb[members] - km.cluster_centers_[c], axis=1)
            anchors.append(Y.columns[members[np.argmin(d)]])
            weights.append(len(members) / len(emb))
        self.irt_ = irt
        self.anchors_ = pd.Series(weights, index=pd.Index(anchors, name="item_id"), name="weight")
        self._finish(Y, n_anchors=k)
        return self

    def estimate(self, Y: pd.DataFrame, method: str = "pirt") -> pd.Series:
        """Estimated benchmark mean per checkpoint from its anchor responses only.

        ``weighted``: the cluster-weighted mean of the anchors. ``pirt`` (tinyBenchmarks' p-IRT):
        theta is fitted to the anchor responses with the items' (a, b) fixed, and the score is the
        anchors' observed responses plus the model's P(correct | theta) for every other item.
        """
        sub = Y[self.anchors_.index].to_numpy(dtype=float)
        w = self.anchors_.to_numpy()
        weighted = np.nansum(sub * w, axis=1) / np.sum(w * ~np.isnan(sub), axis=1)
        if method == "weighted":
            return pd.Series(weighted, index=Y.index)
        items = self.irt_.items_
        a_all, b_all = items["a"].to_numpy(), items["b"].to_numpy()
        pos = items.index.get_indexer(self.anchors_.index)
        theta = _theta_mle(sub, a_all[pos], b_all[pos])
        p_all = 1.0 / (1.0 + np.exp(-a_all[None, :] * (theta[:, None] - b_all[None, :])))
        p_all[:, pos] = np.where(np.isnan(sub), p_all[:, pos], sub)
        return pd.Series(p_all.mean(axis=1), index=Y.index)

    def evaluate(self, Y_test: pd.DataFrame) -> dict[str, float]:
        """Mean absolute error on held-out checkpoints: anchors vs a random subset of equal size."""
        truth = Y_test.mean(axis=1)
        est = self.estimate(Y_test)
        rng = np.random.default_rng(self.random_state)
        pick = rng.choice(Y_test.columns.to_numpy(), size=len(self.anchors_), replace=False)
        rand = Y_test[pick].mean(axis=1)
        return {
            "mae_anchors": float(np.mean(np.abs(est - truth))),
            "mae_random": float(np.mean(np.abs(rand - truth))),
            "n_test_checkpoints": len(Y_test),
            "n_anchors": len(self.anchors_),
        }
