"""One EFA as plain JSON: :func:`efa_summary` (what ``evalhouse analyze efa`` prints and records).

Fits an EFA (factor count by parallel analysis unless given) plus the Schmid-Leiman
transformation on a wide matrix and returns plain Python lists and floats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalhouse.analytics.checks import as_float_frame
from evalhouse.analytics.data.defaults import finite
from evalhouse.analytics.factor.efa import EFA
from evalhouse.analytics.factor.omega import schmid_leiman
from evalhouse.analytics.factor.parallel import ParallelAnalysis
from evalhouse.errors import InputError


def efa_summary(  # noqa: PLR0913 - keyword-only settings of one analysis
    wide: pd.DataFrame,
    *,
    n_factors: int | None = None,
    method: str = "minres",
    rotation: str = "oblimin",
    n_simulations: int = 2000,
    random_state: int | None = 0,
) -> dict[str, Any]:
    """EFA + Schmid-Leiman of the complete rows of ``wide`` as a JSON-ready dict.

    Returns
    -------
    dict
        ``items`` (input column order), ``n_models`` (complete rows used), ``n_factors``,
        ``n_factors_parallel`` (None when ``n_factors`` was given), ``method``, ``rotation``,
        ``loadings`` (one list of k values per item), ``uniquenesses``, ``ssl``, ``s1``,
        ``phi`` (k x k), ``omega_h``, ``omega_total``, ``sl_loadings`` (``[g, group...]`` per
        item), ``start`` (``"smc"``, or ``"unity"`` after the unity-diagonal retry on a
        singular correlation matrix), ``converged`` and ``heywood`` (items at the uniqueness
        bound).
    """
    frame = as_float_frame(wide).dropna()
    k_pa = None
    if n_factors is None:
        pa = ParallelAnalysis(n_simulations, random_state=random_state).fit(frame)
        k_pa = pa.n_factors_
        n_factors = max(1, min(k_pa, frame.shape[1] - 1))
    efa = EFA(int(n_factors), method=method, rotation=rotation).fit(frame)
    sl = schmid_leiman(efa.loadings_, efa.phi_, efa.correlation_)
    return {
        "items": [str(c) for c in frame.columns],
        "n_models": int(frame.shape[0]),
        "n_factors": int(n_factors),
        "n_factors_parallel": k_pa,
        "method": method,
        "rotation": rotation,
        "loadings": efa.loadings_.to_numpy().tolist(),
        "uniquenesses": efa.uniquenesses_.tolist(),
        "ssl": efa.ssl_.tolist(),
        "s1": efa.s1_,
        "phi": efa.phi_.to_numpy().tolist(),
        "omega_h": sl.omega_h,
        "omega_total": sl.omega_total,
        "sl_loadings": sl.sl_loadings.to_numpy().tolist(),
        "start": efa.start_,
        "converged": bool(efa.converged_),
        "heywood": [str(item) for item in efa.heywood_],
    }


EFA_METHODS = ("ml", "minres")
EFA_ROTATIONS = ("oblimin", "promax", "none")


def read_matrix_csv(path: str | Path) -> pd.DataFrame:
    """A models x benchmarks CSV (first column = model id) as a float frame, or an :class:`InputError`.

    Empty cells (and pandas' NA spellings) are missing values. Refused, with the offending ids:
    unreadable files, fewer than two benchmark columns, duplicate model ids, non-numeric cells,
    rows or columns with no value at all.
    """
    try:
        frame = pd.read_csv(path, index_col=0)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path} as CSV: {exc}") from exc
    if frame.shape[1] < 2:
        raise InputError(
            f"{path} has {frame.shape[1]} benchmark column(s); "
            "expected a model id column and at least 2 benchmark columns"
        )
    dup = frame.index[frame.index.duplicated()]
    if len(dup):
        raise InputError(f"{path} has duplicate model ids in the first column: {sorted(map(str, dup.unique()))[:5]}")
    out = {}
    for col in frame.columns:
        converted = pd.to_numeric(frame[col], errors="coerce")
        bad = converted.isna() & frame[col].notna()
        if bad.any():
            first = bad[bad].index[0]
            raise InputError(
                f"{path}: non-numeric cell at model {first!r}, column {col!r}: {frame.at[first, col]!r} "
                f"({int(bad.sum())} such cell(s) in that column); leave missing values empty"
            )
        out[col] = converted.astype(float)
    values = pd.DataFrame(out, index=frame.index)
    values.columns = frame.columns
    empty_rows = values.index[values.isna().all(axis=1)]
    if len(empty_rows):
        raise InputError(
            f"{path}: {len(empty_rows)} row(s) have no value at all, e.g. {list(map(str, empty_rows[:5]))}"
        )
    empty_cols = values.columns[values.isna().all(axis=0)]
    if len(empty_cols):
        raise InputError(f"{path}: column(s) with no value at all: {list(map(str, empty_cols[:10]))}")
    if np.isinf(values.to_numpy()).any():
        raise InputError(f"{path} contains infinite values")
    return values


def check_efa_input(frame: pd.DataFrame, *, method: str, n_factors: int | None) -> pd.DataFrame:
    """The complete rows an EFA will use, or an :class:`InputError` saying what is wrong."""
    if method not in EFA_METHODS:
        raise InputError(f"method must be one of {EFA_METHODS}, got {method!r}")
    complete = frame.dropna()
    n, p = complete.shape
    dropped = len(frame) - n
    why = f" ({dropped} of {len(frame)} rows have missing cells and are left out)" if dropped else ""
    if n < 3:
        raise InputError(
            f"only {n} complete row(s){why}; an EFA needs at least 3 (impute first, or drop sparse columns)"
        )
    spread = complete.max() - complete.min()
    constant = list(map(str, complete.columns[~(spread > 0)]))
    if constant:
        raise InputError(
            f"constant column(s) over the {n} complete rows{why}: {constant[:10]}; "
            "a benchmark with no variance has no correlations - drop it"
        )
    if n_factors is not None and not 1 <= n_factors <= p - 1:
        raise InputError(f"--factors {n_factors} must be between 1 and {p - 1} (the number of columns - 1)")
    if n <= p:
        raise InputError(
            f"only {n} complete rows for {p} columns{why}: an EFA of a CSV needs more models than benchmarks "
            "(with n <= p the correlation matrix is singular and the solution arbitrary); drop columns or "
            "impute first (paper 002's grid: evalhouse analyze factor-grid)"
        )
    corr = np.corrcoef(complete.to_numpy(dtype=float), rowvar=False)
    if method == "ml" and 1.0 / np.linalg.cond(corr) < np.finfo(float).eps:
        raise InputError(
            "the correlation matrix of the complete rows is singular (collinear columns): ML cannot fit it; "
            "--method minres fits it, retrying from a unity diagonal (paper 002, Appendix I.1)"
        )
    return complete


def efa_results(summary: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Result rows of an EFA: pattern and Schmid-Leiman loadings (``loading``), s1 and the omegas (``quantity``)."""
    k = summary["n_factors"]
    factors = [f"F{m + 1}" for m in range(k)]
    groups = ["g", *[f"G{m + 1}" for m in range(len(summary["sl_loadings"][0]) - 1)]]
    loadings = [
        {"solution": "pattern", "item": item, "factor": f, "loading": finite(v)}
        for item, row in zip(summary["items"], summary["loadings"], strict=True)
        for f, v in zip(factors, row, strict=True)
    ] + [
        {"solution": "schmid_leiman", "item": item, "factor": f, "loading": finite(v)}
        for item, row in zip(summary["items"], summary["sl_loadings"], strict=True)
        for f, v in zip(groups, row, strict=True)
    ]
    quantities = [
        {"name": name, "ours": finite(summary[name]), "paper": None, "tolerance": None, "ok": None, "note": None}
        for name in ("s1", "omega_h", "omega_total")
    ]
    return {"quantity": quantities, "loading": loadings}
