"""Leave-one-benchmark-out (LOBO) prediction ladder of paper 000 (Section 4.2, Appendix B).

For each target benchmark, the other columns are the predictor pool. An outer K-fold split over
models (``KFold(5, shuffle=True, random_state)``, the same split for every target) supplies
out-of-fold predictions. Inside each training fold only: predictors are z-scored (ddof = 0),
the mean index is the row mean of the z-scores, an ML EFA with oblimin rotation is fitted and
the pattern-form Thurstone weights ``W = R^-1 Lambda`` score both folds; factors are oriented to
correlate positively with the training mean index. The target is z-scored with the training
fold's moments, so errors are in z-units of that fold.

Rungs: (i) release timing (z-scored days; with ``timing_scale=True`` also log10 parameters and
a missing-parameters indicator), (ii) mean index, (iii) one factor (a single ML factor fitted in the
fold), (iv) k factors, (v) k
factors + covariates (reasoning flag, open weights, log10 parameters filled with the training
mean, parameters-missing indicator). Paper 000 describes rung (i) as "timing and scale"; the
authors' notebook feeds it the date only, which is our default.

Learners and the paired bootstrap: :mod:`evalhouse.analytics.factor.learners`.

Per rung the best learner is the one with the lowest pooled out-of-fold RMSE. The H4 contrast
``dMSE = MSE(ii) - MSE(iv)`` uses ``delta_learner`` (ridge, as in the paper's Table 1) for both
rungs; its 95% interval is a percentile bootstrap of the paired squared-error differences with
models as the resampling unit (``bootstrap_unit="model"``; the authors' notebook resampled the
pooled target x model cells, ``"cell"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.model_selection import KFold

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.checks import as_float_frame, check_choice, check_matrix
from evalhouse.analytics.factor.efa import EFA
from evalhouse.analytics.factor.learners import BOOTSTRAP_UNITS, LEARNERS, paired_bootstrap, tuned
from evalhouse.errors import InputError

RUNGS = ("i", "ii", "iii", "iv", "v")
RUNG_LABELS = {
    "i": "timing / scale",
    "ii": "mean index",
    "iii": "one factor",
    "iv": "k factors",
    "v": "k factors + covariates",
}
META_COLUMNS = ("release_date", "is_reasoning", "is_open_weights", "total_parameters")


def _zscore(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu, sd = train.mean(axis=0), train.std(axis=0)
    sd = np.where(sd == 0, 1.0, sd)
    return (train - mu) / sd, (test - mu) / sd


def _covariates(meta: pd.DataFrame) -> np.ndarray:
    logp = np.log10(meta["total_parameters"].to_numpy(dtype=float))
    return np.column_stack(
        [
            meta["is_reasoning"].to_numpy(dtype=float),
            meta["is_open_weights"].to_numpy(dtype=float),
            logp,
            np.isnan(logp).astype(float),
        ]
    )


def _fill_logparams(tr: np.ndarray, te: np.ndarray, col: int) -> tuple[np.ndarray, np.ndarray]:
    tr, te = tr.copy(), te.copy()
    fill = np.nanmean(tr[:, col]) if np.isfinite(tr[:, col]).any() else 0.0
    tr[np.isnan(tr[:, col]), col] = fill
    te[np.isnan(te[:, col]), col] = fill
    return tr, te


def _fold_features(
    Ztr: np.ndarray,
    Zte: np.ndarray,
    *,
    days_tr: np.ndarray | None,
    days_te: np.ndarray | None,
    cov_tr: np.ndarray | None,
    cov_te: np.ndarray | None,
    rungs: Sequence[str],
    k: int,
    timing_scale: bool,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    Ztr_s, Zte_s = _zscore(Ztr, Zte)
    feats: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if "ii" in rungs:
        feats["ii"] = (Ztr_s.mean(axis=1, keepdims=True), Zte_s.mean(axis=1, keepdims=True))
    if {"iii", "iv", "v"} & set(rungs):
        efa = EFA(k, method="ml", rotation="oblimin", score_form="pattern").fit(Ztr_s)
        W = efa.weights_.to_numpy()
        # Ztr_s is already z-scored, so the EFA's own training moments are (0, 1): apply W directly.
        Ftr, Fte = Ztr_s @ W, Zte_s @ W
        if "iii" in rungs:
            # Rung (iii): a single ML factor fitted inside the fold (the first column of the k-factor
            # pattern weights R^-1 Lambda would be a partialled score, not "the" first factor).
            one = EFA(1, method="ml", rotation="none", score_form="pattern").fit(Ztr_s).weights_.to_numpy()
            feats["iii"] = (Ztr_s @ one, Zte_s @ one)
        feats["iv"] = (Ftr, Fte)
        if "v" in rungs:
            tr, te = _fill_logparams(cov_tr, cov_te, 2)
            feats["v"] = (np.hstack([Ftr, tr]), np.hstack([Fte, te]))
    if "i" in rungs:
        dtr, dte = _zscore(days_tr[:, None], days_te[:, None])
        if timing_scale:
            tr, te = _fill_logparams(cov_tr[:, 2:], cov_te[:, 2:], 0)
            dtr, dte = np.hstack([dtr, tr]), np.hstack([dte, te])
        feats["i"] = (dtr, dte)
    return {r: feats[r] for r in rungs}


def _run_target(
    t: int,
    *,
    Z: np.ndarray,
    days: np.ndarray | None,
    cov: np.ndarray | None,
    folds: list[tuple[np.ndarray, np.ndarray]],
    rungs: Sequence[str],
    learners: Sequence[str],
    k: int,
    inner: int,
    timing_scale: bool,
    random_state: int | None,
) -> list[dict[str, Any]]:
    y = Z[:, t]
    X = np.delete(Z, t, axis=1)
    out = []
    for f, (tr, te) in enumerate(folds):
        ymu, ysd = y[tr].mean(), y[tr].std() or 1.0
        ytr, yte = (y[tr] - ymu) / ysd, (y[te] - ymu) / ysd
        feats = _fold_features(
            X[tr],
            X[te],
            days_tr=None if days is None else days[tr],
            days_te=None if days is None else days[te],
            cov_tr=None if cov is None else cov[tr],
            cov_te=None if cov is None else cov[te],
            rungs=rungs,
            k=k,
            timing_scale=timing_scale,
        )
        for rung, (Xtr, Xte) in feats.items():
            for name in learners:
                model = tuned(name, Xtr, ytr, inner, random_state)
                out.append(
                    {
                        "target": t,
                        "rung": rung,
                        "learner": name,
                        "fold": f,
                        "test_idx": te,
                        "y_true": yte,
                        "y_pred": model.predict(Xte),
                        "train_se": float(((model.predict(Xtr) - ytr) ** 2).sum()),
                        "n_train": len(tr),
                        "params": dict(model.best_params_),
                    }
                )
    return out


class PredictionLadder(AnalysisEstimator):
    """Nested-CV LOBO prediction ladder with the H4 bootstrap.

    Parameters
    ----------
    targets : sequence of str or None
        Columns predicted in turn (None = all). Predictors are always all other columns.
    n_factors : int
        k of rungs (iii)-(v).
    rungs : sequence of {"i", "ii", "iii", "iv", "v"}
    learners : sequence of {"ridge", "elasticnet", "random_forest", "gradient_boosting"}
    outer_folds, inner_folds : int
    delta_learner : str
        Learner whose rung (ii) and (iv) errors form dMSE (must be in ``learners``).
    n_bootstrap : int
    bootstrap_unit : {"model", "cell"}
    timing_scale : bool
        Add log-parameters to rung (i).
    random_state : int
        Seed of the outer split and of the tree learners.
    bootstrap_random_state : int
        Seed of the bootstrap.
    n_jobs : int or None
        Targets run in parallel (joblib).

    Attributes
    ----------
    predictions_ : DataFrame
        Out-of-fold predictions (target, rung, learner, fold, model, y_true, y_pred), z-units.
    metrics_ : DataFrame
        Per target x rung x learner: train/test RMSE, test MSE, test R2.
    ladder_ : DataFrame
        Per rung over all targets: best learner by pooled OOF RMSE (``pooled_rmse``) and its
        target-averaged train/test RMSE and test R2 (the columns of paper 000's Table 1).
    delta_ : DataFrame
        dMSE of each baseline rung vs (iv) per target and pooled, with 95% intervals.
    best_params_ : DataFrame
        Inner-CV choices per target, rung, learner and fold.
    """

    kind = "prediction_ladder"

    def __init__(
        self,
        targets: Sequence[str] | None = None,
        *,
        n_factors: int = 3,
        rungs: Sequence[str] = RUNGS,
        learners: Sequence[str] = LEARNERS,
        outer_folds: int = 5,
        inner_folds: int = 5,
        delta_learner: str = "ridge",
        n_bootstrap: int = 2000,
        bootstrap_unit: str = "model",
        timing_scale: bool = False,
        random_state: int | None = 0,
        bootstrap_random_state: int | None = 42,
        n_jobs: int | None = None,
    ) -> None:
        self.targets = targets
        self.n_factors = n_factors
        self.rungs = rungs
        self.learners = learners
        self.outer_folds = outer_folds
        self.inner_folds = inner_folds
        self.delta_learner = delta_learner
        self.n_bootstrap = n_bootstrap
        self.bootstrap_unit = bootstrap_unit
        self.timing_scale = timing_scale
        self.random_state = random_state
        self.bootstrap_random_state = bootstrap_random_state
        self.n_jobs = n_jobs

    def _check(self, frame: pd.DataFrame, meta: pd.DataFrame | None) -> list[str]:
        for r in self.rungs:
            check_choice("rung", r, RUNGS)
        for name in self.learners:
            check_choice("learner", name, LEARNERS)
        check_choice("delta_learner", self.delta_learner, tuple(self.learners))
        check_choice("bootstrap_unit", self.bootstrap_unit, BOOTSTRAP_UNITS)
        targets = list(frame.columns) if self.targets is None else list(self.targets)
        unknown = [t for t in targets if t not in frame.columns]
        if unknown:
            raise InputError(f"targets not in X: {unknown}")
        if not 1 <= self.n_factors < frame.shape[1] - 1:
            raise InputError(f"n_factors={self.n_factors!r} must be in [1, n_predictors - 1]")
        if {"i", "v"} & set(self.rungs):
            if meta is None:
                raise InputError("rungs (i) and (v) need meta with columns " + ", ".join(META_COLUMNS))
            missing = [c for c in META_COLUMNS if c not in meta.columns]
            if missing:
                raise InputError(f"meta lacks columns {missing}")
        return targets

    def fit(self, X: Any, meta: pd.DataFrame | None = None) -> PredictionLadder:
        """Run the ladder on complete ``X``; ``meta`` is aligned by index (or row order)."""
        self._start()
        frame = as_float_frame(X)
        check_matrix(frame)
        targets = self._check(frame, meta)
        Z = frame.to_numpy(dtype=float)
        days = cov = None
        if meta is not None and {"i", "v"} & set(self.rungs):
            m = meta.loc[frame.index] if isinstance(X, pd.DataFrame) else meta
            dates = pd.to_datetime(m["release_date"])
            if dates.isna().any():
                raise InputError("rung (i) needs a release date for every model")
            days = (dates - dates.min()).dt.days.to_numpy(dtype=float)
            cov = _covariates(m)
        folds = list(KFold(self.outer_folds, shuffle=True, random_state=self.random_state).split(Z))
        cols = list(frame.columns)
        jobs = Parallel(n_jobs=self.n_jobs)(
            delayed(_run_target)(
                cols.index(t),
                Z=Z,
                days=days,
                cov=cov,
                folds=folds,
                rungs=tuple(self.rungs),
                learners=tuple(self.learners),
                k=int(self.n_factors),
                inner=int(self.inner_folds),
                timing_scale=bool(self.timing_scale),
                random_state=self.random_state,
            )
            for t in targets
        )
        self._collect([rec for job in jobs for rec in job], cols, frame.index)
        self._finish(
            X,
            targets=targets,
            dmse_pooled=self.dmse_pooled_,
            ci=[self.dmse_ci_[0], self.dmse_ci_[1]],
        )
        return self

    def _collect(self, records: list[dict[str, Any]], cols: list[str], index: pd.Index) -> None:
        rows, params, train = [], [], {}
        for rec in records:
            target = cols[rec["target"]]
            key = (target, rec["rung"], rec["learner"])
            for i, yt, yp in zip(rec["test_idx"], rec["y_true"], rec["y_pred"], strict=True):
                rows.append((*key, rec["fold"], index[i], yt, yp))
            params.append(
                {
                    "target": target,
                    "rung": rec["rung"],
                    "learner": rec["learner"],
                    "fold": rec["fold"],
                    **rec["params"],
                }
            )
            se, n = train.get(key, (0.0, 0))
            train[key] = (se + rec["train_se"], n + rec["n_train"])
        pred = pd.DataFrame(rows, columns=["target", "rung", "learner", "fold", "model", "y_true", "y_pred"])
        self.predictions_ = pred
        self.best_params_ = pd.DataFrame(params)
        err = (pred["y_true"] - pred["y_pred"]) ** 2
        g = pred.assign(se=err).groupby(["target", "rung", "learner"], sort=False)
        metrics = g.agg(test_mse=("se", "mean"), n=("se", "size")).reset_index()
        var = g["y_true"].apply(lambda s: ((s - s.mean()) ** 2).mean()).to_numpy()
        metrics["test_rmse"] = np.sqrt(metrics["test_mse"])
        metrics["test_r2"] = 1.0 - metrics["test_mse"] / var
        metrics["train_rmse"] = [
            np.sqrt(train[(r.target, r.rung, r.learner)][0] / train[(r.target, r.rung, r.learner)][1])
            for r in metrics.itertuples()
        ]
        self.metrics_ = metrics
        ladder = []
        for rung in self.rungs:
            sub = metrics[metrics["rung"] == rung]
            pooled = sub.groupby("learner")["test_mse"].mean().pow(0.5).sort_values()
            best = sub[sub["learner"] == pooled.index[0]]
            ladder.append(
                {
                    "rung": rung,
                    "label": RUNG_LABELS[rung],
                    "learner": pooled.index[0],
                    # Table 1 of paper 000 prints target-averaged RMSE and R2; the learner is
                    # chosen on the pooled RMSE, sqrt(mean MSE).
                    "train_rmse": float(best["train_rmse"].mean()),
                    "test_rmse": float(best["test_rmse"].mean()),
                    "test_r2": float(best["test_r2"].mean()),
                    "pooled_rmse": float(pooled.iloc[0]),
                }
            )
        self.ladder_ = pd.DataFrame(ladder).set_index("rung")
        self._deltas(pred)

    def _deltas(self, pred: pd.DataFrame) -> None:
        sub = pred[pred["learner"] == self.delta_learner]
        se = sub.assign(se=(sub["y_true"] - sub["y_pred"]) ** 2).pivot_table(
            index="model", columns=["rung", "target"], values="se", sort=False
        )
        rows = []
        if "iv" in self.rungs:
            seed = self.bootstrap_random_state
            targets = list(dict.fromkeys(pred["target"]))
            for base in [r for r in self.rungs if r in ("i", "ii", "iii")]:
                diff = se[base][targets].to_numpy() - se["iv"][targets].to_numpy()
                est, lo, hi = paired_bootstrap(
                    diff, n_bootstrap=self.n_bootstrap, random_state=seed, unit=self.bootstrap_unit
                )
                rows.append({"baseline": base, "target": "pooled", "dmse": est, "ci_low": lo, "ci_high": hi})
                for j, t in enumerate(targets):
                    est, lo, hi = paired_bootstrap(diff[:, j], n_bootstrap=self.n_bootstrap, random_state=seed)
                    rows.append({"baseline": base, "target": t, "dmse": est, "ci_low": lo, "ci_high": hi})
        delta = pd.DataFrame(rows, columns=["baseline", "target", "dmse", "ci_low", "ci_high"])
        delta["excludes_zero"] = (delta["ci_low"] > 0) | (delta["ci_high"] < 0)
        self.delta_ = delta
        main = delta[(delta["baseline"] == "ii") & (delta["target"] == "pooled")]
        self.dmse_pooled_ = float(main["dmse"].iloc[0]) if len(main) else float("nan")
        self.dmse_ci_ = (
            (float(main["ci_low"].iloc[0]), float(main["ci_high"].iloc[0])) if len(main) else (np.nan, np.nan)
        )


def ridge_contrast(targets: Sequence[str], *, n_factors: int, **params: Any) -> PredictionLadder:
    """The ladder behind paper 000's H4 statistic: rungs (ii) and (iv), ridge on both (unfitted)."""
    return PredictionLadder(targets, n_factors=n_factors, rungs=("ii", "iv"), learners=("ridge",), **params)


def k_sweep(
    X: Any,
    targets: Sequence[str],
    ks: Sequence[int] = (2, 3, 4, 5),
    *,
    random_state: int | None = 0,
    bootstrap_random_state: int | None = 42,
    n_bootstrap: int = 2000,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """Pooled ridge dMSE (ii) - (iv) and rung-(iv) pooled test R2 for each k (paper 000, C7)."""
    rows = []
    for k in ks:
        lad = ridge_contrast(
            targets,
            n_factors=int(k),
            n_bootstrap=n_bootstrap,
            random_state=random_state,
            bootstrap_random_state=bootstrap_random_state,
            n_jobs=n_jobs,
        ).fit(X)
        m = lad.metrics_
        r2 = float(m[m["rung"] == "iv"]["test_r2"].mean())
        rows.append(
            {
                "k": int(k),
                "dmse": lad.dmse_pooled_,
                "ci_low": lad.dmse_ci_[0],
                "ci_high": lad.dmse_ci_[1],
                "test_r2_iv": r2,
            }
        )
    return pd.DataFrame(rows).set_index("k")
