"""Input checks shared by the estimators (every failure is an :class:`~evalhouse.errors.InputError`).

Every estimator takes the wide matrix convention (rows = models, columns = benchmark ids, float
with NaN for missing). These helpers turn whatever came in into a float ``DataFrame`` and fail
early, naming the offending rows or columns, instead of letting a linear-algebra routine fail
later with a message nobody can act on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalhouse.errors import InputError


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> None:
    """Raise :class:`~evalhouse.errors.InputError` listing the valid ``choices`` when ``value`` is not one of them."""
    if value not in choices:
        raise InputError(f"{name}={value!r} is not valid; choose one of {list(choices)}")


def as_float_frame(X: Any, *, name: str = "X") -> pd.DataFrame:
    """Return ``X`` as a float ``DataFrame``; non-numeric cells raise an :class:`~evalhouse.errors.InputError`.

    Arrays get ``x0, x1, ...`` column names and a ``RangeIndex``.
    """
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise InputError(f"{name} must be 2-D (rows = models, columns = benchmarks); got {arr.ndim}-D")
        frame = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])
    if all(pd.api.types.is_numeric_dtype(t) for t in frame.dtypes):  # nothing to parse: one cast
        return frame.astype(float)
    bad = []
    out = {}
    for col in frame.columns:
        converted = pd.to_numeric(frame[col], errors="coerce")
        # A cell that was present but did not parse as a number is a data error, not missingness.
        if (converted.isna() & frame[col].notna()).any():
            bad.append(col)
        out[col] = converted.astype(float)
    if bad:
        raise InputError(f"{name} has non-numeric cells in columns {bad[:10]}")
    result = pd.DataFrame(out, index=frame.index)
    result.columns = frame.columns
    return result


def check_matrix(
    frame: pd.DataFrame,
    *,
    name: str = "X",
    allow_missing: bool = False,
    min_rows: int = 3,
) -> None:
    """Fail on empty rows, constant columns, too few rows and (unless allowed) missing cells."""
    if frame.shape[1] < 2:
        raise InputError(f"{name} needs at least 2 columns; got {frame.shape[1]}")
    if frame.shape[0] < min_rows:
        raise InputError(f"{name} needs at least {min_rows} rows; got {frame.shape[0]}")
    values = frame.to_numpy(dtype=float)
    if np.isinf(values).any():
        raise InputError(f"{name} contains infinite values")
    empty = frame.index[np.isnan(values).all(axis=1)]
    if len(empty):
        raise InputError(f"{name} has {len(empty)} all-missing rows, e.g. {list(empty[:5])}")
    if not allow_missing and np.isnan(values).any():
        n_bad = int(np.isnan(values).any(axis=1).sum())
        raise InputError(
            f"{name} has missing cells in {n_bad} rows; pass complete cases "
            "(or impute first with evalhouse.analytics.matrix.impute)"
        )
    with np.errstate(invalid="ignore"):
        spread = np.nanmax(values, axis=0) - np.nanmin(values, axis=0)
    constant = frame.columns[~(spread > 0)]
    if len(constant):
        raise InputError(f"{name} has constant columns (zero variance): {list(constant[:10])}")
