"""JSON-shaped entry points for the CLI (``evalhouse analyze efa``) and reports.

:func:`efa_summary` fits an EFA (factor count by parallel analysis unless given) plus the
Schmid-Leiman transformation on a wide matrix and returns plain Python lists and floats;
:func:`efa_from_csv` does the same for a CSV whose first column is the model id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalhouse.analytics._validate import as_float_frame
from evalhouse.analytics.efa import EFA
from evalhouse.analytics.omega import schmid_leiman
from evalhouse.analytics.parallel import ParallelAnalysis


def efa_summary(
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


def efa_from_csv(path: str | Path, **kwargs: Any) -> dict[str, Any]:
    """:func:`efa_summary` of a CSV: first column = model id, other columns = benchmarks."""
    frame = pd.read_csv(path, index_col=0)
    return efa_summary(frame, **kwargs)


def factor_grid_from_csv(path: str | Path, **kwargs: Any) -> list[dict[str, Any]]:
    """:func:`~evalhouse.analytics.paper002.factor_grid` of a sparse CSV (first column = id),
    one JSON-ready dict per densifier x imputer cell."""
    from evalhouse.analytics.paper002 import factor_grid

    table = factor_grid(pd.read_csv(path, index_col=0), **kwargs)
    return jsonable(table)


def jsonable(value: Any) -> Any:
    """DataFrames, Series and numpy scalars of an analysis result as plain JSON types.

    Use on the dict returned by :func:`~evalhouse.analytics.paper000.reproduce_paper000`.
    """
    if isinstance(value, pd.DataFrame):
        frame = value.reset_index() if not isinstance(value.index, pd.RangeIndex) else value
        return [jsonable(row) for row in frame.to_dict(orient="records")]
    if isinstance(value, pd.Series):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value
