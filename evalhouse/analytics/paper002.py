"""The paper-002 "factor grid": densifier x imputer x (parallel analysis, EFA, Schmid-Leiman).

For each densified matrix and imputer: held-out R2 (parameters chosen by R2 on one shared
column-stratified mask); cells below the R2 gate (0.2) are recorded as not factored. Otherwise
the completed matrix is factored - its correlation matrix, or for a correlation-level imputer
the repaired correlation surrogate itself - with parallel analysis (100 simulations, PC
flavour), ``k = max(k_pa, 2)`` capped at 20 and at ``min(p - 1, n - 1, rank(R) - 1)``, MINRES
with promax (no rotation for one factor), decrementing k until the fit succeeds, then the
Schmid-Leiman transformation. The columns mirror paper 002's Table 3: k, AVE, omega_h,
phi_avg and R2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from evalhouse.analytics._validate import as_float_frame
from evalhouse.analytics.densify import Densifier
from evalhouse.analytics.efa import EFA, FactorFitError
from evalhouse.analytics.impute import R2_GATE, CorrelationImputer, evaluate_imputer, select_imputer
from evalhouse.analytics.omega import OmegaResult, schmid_leiman
from evalhouse.analytics.parallel import ParallelAnalysis, bounded_n_factors

ImputerSpec = Any | tuple[Any, Mapping[str, list[Any]]]


def factor_correlation(
    corr: np.ndarray,
    n_samples: int,
    *,
    n_simulations: int = 100,
    random_state: Any = None,
    min_factors: int = 2,
    max_factors: int = 20,
    method: str = "minres",
    rotation: str = "promax",
    count_rule: str = "count",
) -> tuple[dict[str, Any], OmegaResult | None]:
    """Parallel analysis, bounded k, EFA with decrement on failure, Schmid-Leiman.

    ``count_rule="count"`` is paper 002's ``n_f = #{i: l_obs > l_cut}``.
    """
    R = np.asarray(corr, dtype=float)
    pa = ParallelAnalysis(n_simulations, random_state=random_state, count_rule=count_rule).fit_correlation(R, n_samples)
    rank = int(np.linalg.matrix_rank(R))
    k = bounded_n_factors(
        pa.n_factors_,
        n_samples=n_samples,
        n_features=R.shape[0],
        rank=rank,
        min_factors=min_factors,
        max_factors=max_factors,
    )
    info: dict[str, Any] = {"k_parallel": pa.n_factors_, "k": None, "error": None}
    while k >= 1:
        try:
            efa = EFA(k, method=method, rotation=rotation if k > 1 else "none").fit_correlation(R, n_samples)
            result = schmid_leiman(efa.loadings_, efa.phi_, R)
        except (FactorFitError, np.linalg.LinAlgError, ValueError) as err:
            # Paper 002: "if the fit still fails, we decrement the count until it succeeds".
            info["error"] = f"k={k}: {err}"
            k -= 1
            continue
        info.update(k=k, start=efa.start_, converged=efa.converged_)
        return info, result
    return info, None


def factor_grid(
    wide: pd.DataFrame,
    densifiers: Mapping[str, Densifier] | None = None,
    imputers: Mapping[str, ImputerSpec] | None = None,
    *,
    random_state: int = 0,
    n_simulations: int = 100,
    gate: float = R2_GATE,
    min_factors: int = 2,
    max_factors: int = 20,
    return_solutions: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, dict[tuple[str, str], OmegaResult]]:
    """Run every densifier x imputer cell and summarise its factor solution.

    Parameters
    ----------
    wide : DataFrame
        Sparse wide matrix (rows = models, columns = benchmarks).
    densifiers : mapping name -> Densifier, optional
        Default: C, R and S at tau = 0.10 with the floor of 3.
    imputers : mapping name -> imputer or (imputer, param_grid)
        With a grid, parameters are chosen by held-out R2. Default: SoftImpute (rank 1-10),
        Gower kNN (k 1-10) and zero-filled correlations.
    random_state : int
        Seed of the hold-out masks, the imputers that draw randomness and parallel analysis.
    return_solutions : bool
        Also return the Schmid-Leiman solutions keyed by ``(densifier, imputer)``.

    Returns
    -------
    DataFrame
        One row per cell: shape, density, R2, RMSE, chosen parameters, factored flag,
        ``k_parallel``, ``k``, ``ave``, ``omega_h``, ``omega_total``, ``phi_avg``, ``error``.
    """
    from evalhouse.analytics.impute import GowerKNNImputer, SoftImpute

    densifiers = densifiers or {m: Densifier(m) for m in ("C", "R", "S")}
    if imputers is None:
        imputers = {
            "softimpute": (SoftImpute(random_state=random_state), {"rank": list(range(1, 11))}),
            "knn": (GowerKNNImputer(), {"n_neighbors": list(range(1, 11))}),
            "corr_zero": CorrelationImputer("zero"),
        }
    frame = as_float_frame(wide)
    rows, solutions = [], {}
    for dname, densifier in densifiers.items():
        dense = densifier.fit(frame).transform(frame)
        n, p = dense.shape
        for iname, spec in imputers.items():
            imputer, grid = spec if isinstance(spec, tuple) else (spec, None)
            row: dict[str, Any] = {
                "densifier": dname,
                "imputer": iname,
                "n_models": n,
                "n_benchmarks": p,
                "density": densifier.density_,
            }
            if grid:
                best, score, _ = select_imputer(imputer, grid, dense, random_state=random_state, gate=gate)
                row["params"] = {k: best.get_params()[k] for k in grid}
            else:
                best, score = imputer, evaluate_imputer(imputer, dense, random_state=random_state, gate=gate)
                row["params"] = {}
            row.update(r2=score.r2, rmse=score.rmse, factored=score.factored)
            if not score.factored:
                rows.append(row)
                continue
            fitted = best.fit(dense)
            if isinstance(fitted, CorrelationImputer):
                corr = fitted.correlation_.to_numpy()
            else:
                corr = np.corrcoef(fitted.completed_.to_numpy(dtype=float), rowvar=False)
            info, result = factor_correlation(
                corr,
                n,
                n_simulations=n_simulations,
                random_state=random_state,
                min_factors=min_factors,
                max_factors=max_factors,
            )
            row.update(info)
            if result is not None:
                row.update(
                    ave=result.ave,
                    omega_h=result.omega_h,
                    omega_total=result.omega_total,
                    phi_avg=result.phi_mean_offdiag,
                )
                solutions[(dname, iname)] = result
            rows.append(row)
    table = pd.DataFrame(rows)
    return (table, solutions) if return_solutions else table
