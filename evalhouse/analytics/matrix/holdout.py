"""Held-out evaluation of imputers (paper 002, Appendix H) and parameter choice by held-out R2.

Per benchmark hold out ``max(1, min(floor(0.2 n_obs), n_obs - 2))`` observed cells (columns with
``n_obs > 2``), standardise with training-cell moments, ``RMSE = sqrt(mean_j MSE_j)``,
``R2 = 1 - mean_j MSE_j / mean_j base_j`` with the baseline predicting the training mean; a fit
with ``R2 < 0.2`` is flagged as not factored. Standard deviations use ``ddof=1`` (R's ``sd``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from evalhouse.analytics.checks import as_float_frame
from evalhouse.common import progress
from evalhouse.errors import InputError

R2_GATE = 0.2


def holdout_mask(X: Any, *, fraction: float = 0.2, random_state: Any = None) -> np.ndarray:
    """Column-stratified hold-out mask of observed cells (paper 002, Appendix H.1).

    Column ``j`` with ``n_obs > 2`` observed cells contributes
    ``max(1, min(floor(fraction * n_obs), n_obs - 2))`` cells, so it keeps at least two
    training observations; sparser columns contribute none.
    """
    values = as_float_frame(X).to_numpy(dtype=float)
    rng = np.random.default_rng(random_state)
    mask = np.zeros(values.shape, dtype=bool)
    for j in range(values.shape[1]):
        observed = np.flatnonzero(~np.isnan(values[:, j]))
        n_obs = observed.size
        if n_obs <= 2:
            continue
        n_hold = max(1, min(int(np.floor(fraction * n_obs)), n_obs - 2))
        mask[rng.choice(observed, size=n_hold, replace=False), j] = True
    return mask


@dataclass(frozen=True)
class HoldoutScore:
    """Held-out accuracy of one imputation."""

    rmse: float
    r2: float
    mse: pd.Series
    base: pd.Series
    n_held: pd.Series
    params: dict[str, Any] = field(default_factory=dict)
    gate: float = R2_GATE

    @property
    def factored(self) -> bool:
        """False when ``r2`` is below the gate: paper 002 does not factor such fits."""
        return bool(self.r2 >= self.gate)


def heldout_score(X: Any, mask: np.ndarray, completed: Any, *, gate: float = R2_GATE) -> HoldoutScore:
    """Score ``completed`` on the cells of ``X`` flagged by ``mask`` (training = the rest)."""
    truth = as_float_frame(X)
    pred = as_float_frame(completed).reindex(index=truth.index, columns=truth.columns)
    train = truth.mask(mask)
    mu = train.mean()
    sd = train.std(ddof=1).replace(0.0, 1.0)
    z_true = ((truth - mu) / sd).to_numpy()
    z_pred = ((pred - mu) / sd).to_numpy()
    held_cols = mask.any(axis=0)
    if not held_cols.any():
        raise InputError("the hold-out mask is empty (every column has <= 2 observations)")
    err = np.where(mask, (z_pred - z_true) ** 2, np.nan)
    if np.isnan(err[mask]).any():
        raise InputError("the imputation left held-out cells missing")
    base = np.where(mask, z_true**2, np.nan)
    cols = truth.columns[held_cols]
    mse_j = pd.Series(np.nanmean(err[:, held_cols], axis=0), index=cols)
    base_j = pd.Series(np.nanmean(base[:, held_cols], axis=0), index=cols)
    return HoldoutScore(
        rmse=float(np.sqrt(mse_j.mean())),
        r2=float(1.0 - mse_j.mean() / base_j.mean()),
        mse=mse_j,
        base=base_j,
        n_held=pd.Series(mask[:, held_cols].sum(axis=0), index=cols),
        gate=gate,
    )


def evaluate_imputer(  # noqa: PLR0913 - keyword-only settings of one analysis
    imputer: Any,
    X: Any,
    *,
    fraction: float = 0.2,
    random_state: Any = None,
    gate: float = R2_GATE,
    mask: np.ndarray | None = None,
) -> HoldoutScore:
    """Hold out cells of ``X``, impute the rest with a clone of ``imputer``, score the held cells."""
    frame = as_float_frame(X)
    if mask is None:
        mask = holdout_mask(frame, fraction=fraction, random_state=random_state)
    completed = clone(imputer).fit_transform(frame.mask(mask))
    score = heldout_score(frame, mask, completed, gate=gate)
    return HoldoutScore(**{**score.__dict__, "params": dict(imputer.get_params(deep=False))})


def select_imputer(  # noqa: PLR0913 - keyword-only settings of one analysis
    imputer: Any,
    param_grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]],
    X: Any,
    *,
    fraction: float = 0.2,
    random_state: Any = None,
    gate: float = R2_GATE,
) -> tuple[Any, HoldoutScore, pd.DataFrame]:
    """Pick the parameters with the best held-out R2 on one shared mask.

    Returns the unfitted best estimator, its score and a table of every candidate.
    """
    frame = as_float_frame(X)
    mask = holdout_mask(frame, fraction=fraction, random_state=random_state)
    rows, best, best_est = [], None, None
    candidates = list(ParameterGrid(param_grid))
    label = f"{type(imputer).__name__}: parameters"
    for params in progress.each(candidates, label, note=lambda p: ", ".join(f"{k}={v}" for k, v in p.items())):
        est = clone(imputer).set_params(**params)
        score = evaluate_imputer(est, frame, mask=mask, gate=gate)
        rows.append({**params, "r2": score.r2, "rmse": score.rmse})
        if best is None or score.r2 > best.r2:
            best, best_est = score, est
    if best is None:
        raise InputError("param_grid is empty")
    return best_est, best, pd.DataFrame(rows)
