"""The paper-002 "factor grid": densifier x imputer x (parallel analysis, EFA, Schmid-Leiman).

Densifiers raw, C, R, S (Appendix F); imputers as the paper's Tables A2-A3: SoftImpute (rank
1..10), kNN (k 1..10), missForest (50, 100, 200, 400 trees), and at the correlation level zero and
mean fill, SoftImpute on the correlation matrix (rank 1..10), one-sided matrix completion (rank
1..10) and USVT (eta = 0.01). Every threshold is chosen on training cells only: SoftImpute's lambda
and the correlation repair's eigenvalue floor on an internal mask of the cells the imputer is fitted
on, the swept parameters on an inner mask.

For each densified matrix and imputer: held-out R2 on a column-stratified outer mask, with the
imputer's parameters chosen on an inner mask of the training cells (never on the scored cells);
cells below the R2 gate (0.2) are recorded as not factored. The factor count from parallel analysis
is reported next to SoftImpute's rank and flagged when they are equal (a rank-r completion has r
dominant eigenvalues by construction). Otherwise
the completed matrix is factored - its correlation matrix, or for a correlation-level imputer
the repaired correlation surrogate itself - with parallel analysis (100 simulations, PC
flavour), ``k = max(k_pa, 2)`` capped at 20 and at ``min(p - 1, n - 1, rank(R) - 1)``, MINRES
with promax (no rotation for one factor), decrementing k until the fit succeeds, then the
Schmid-Leiman transformation. The columns mirror paper 002's Table 3: k, AVE, omega_h,
phi_avg and R2.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from evalhouse.analytics.base import AnalysisRecord, Timer, make_record
from evalhouse.analytics.checks import as_float_frame
from evalhouse.analytics.data.defaults import finite
from evalhouse.analytics.factor.efa import EFA, FactorFitError
from evalhouse.analytics.factor.omega import OmegaResult, schmid_leiman
from evalhouse.analytics.factor.parallel import ParallelAnalysis, bounded_n_factors
from evalhouse.analytics.matrix.correlation import CorrelationImputer
from evalhouse.analytics.matrix.densify import Densifier
from evalhouse.analytics.matrix.holdout import R2_GATE, evaluate_imputer, holdout_mask, select_imputer
from evalhouse.analytics.matrix.impute import GowerKNNImputer, MissForestImputer, SoftImpute
from evalhouse.analytics.matrix.osmc import OneSidedMC
from evalhouse.common import progress
from evalhouse.errors import InputError

ImputerSpec = Any | tuple[Any, Mapping[str, list[Any]]]


def factor_correlation(  # noqa: PLR0913 - keyword-only settings of one analysis
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


def choose_and_score(
    imputer: Any, grid: Mapping[str, list[Any]] | None, dense: pd.DataFrame, *, random_state: int, gate: float
) -> tuple[Any, Any]:
    """The imputer's parameters chosen on an inner mask, its R2 reported on a separate outer mask.

    The outer mask (column-stratified, paper 002 App. H) holds out the cells that are scored; the
    parameters are chosen by held-out R2 on a second mask drawn from the remaining training cells
    only, so the reported R2 never saw the cells it is computed on.
    """
    outer = holdout_mask(dense, random_state=random_state)
    best = imputer
    if grid:
        best, _, _ = select_imputer(imputer, grid, dense.mask(outer), random_state=random_state + 1, gate=gate)
    return best, evaluate_imputer(best, dense, mask=outer, gate=gate)


def factor_grid(  # noqa: PLR0913 - keyword-only settings of one analysis
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
        Default: raw, C, R and S (tau = 0.10, floor of 3), as :func:`grid_spec`.
    imputers : mapping name -> imputer or (imputer, param_grid)
        With a grid, parameters are chosen by held-out R2. Default: every imputer of
        :func:`grid_spec`.
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
    if densifiers is None or imputers is None:
        dens, imps = grid_spec(random_state=random_state)
        densifiers, imputers = densifiers or dens, imputers or imps
    frame = as_float_frame(wide)
    rows, solutions = [], {}
    # Densifiers often keep the same models and benchmarks (paper 002's C and S on a dense hub):
    # a cell of a matrix already fitted is copied from the first densifier that produced it.
    done: dict[tuple[str, str], tuple[dict[str, Any], OmegaResult | None]] = {}
    first_of: dict[str, str] = {}
    # The matrices are small: BLAS threads only contend on a shared machine (SoftImpute 6x the CPU).
    with threadpool_limits(1), progress.task("factor grid: cells", total=len(densifiers) * len(imputers)) as step:
        for dname, densifier in densifiers.items():
            try:
                dense = densifier.fit(frame).transform(frame)
            except InputError as err:  # e.g. the floor empties the matrix: say so, run the others
                for iname in imputers:
                    rows.append(_empty_cell(dname, iname, str(err)))
                    step.advance()
                continue
            twin = first_of.setdefault(_matrix_key(dense), dname)
            for iname, spec in imputers.items():
                step.note(f"{dname} x {iname}")
                if twin != dname:
                    row, result = done[(twin, iname)]
                    row = {**row, "densifier": dname, "density": densifier.density_, "same_matrix_as": twin}
                else:
                    try:
                        row, result = _grid_cell(
                            dense,
                            cell={"densifier": dname, "imputer": iname, "density": densifier.density_},
                            spec=spec,
                            random_state=random_state,
                            gate=gate,
                            factoring={
                                "n_simulations": n_simulations,
                                "min_factors": min_factors,
                                "max_factors": max_factors,
                            },
                        )
                    except (InputError, np.linalg.LinAlgError, ValueError) as err:
                        # an imputer that fails on this matrix is a finding of the cell (paper 002:
                        # "USVT yielded no valid solutions or crashes mid-estimation"), not of the grid
                        row = {**_empty_cell(dname, iname, f"{type(err).__name__}: {err}")}
                        row.update(n_models=dense.shape[0], n_benchmarks=dense.shape[1], density=densifier.density_)
                        result = None
                    done[(dname, iname)] = (row, result)
                rows.append(row)
                if result is not None:
                    solutions[(dname, iname)] = result
                step.advance()
    table = pd.DataFrame(rows)
    return (table, solutions) if return_solutions else table


def _empty_cell(densifier: str, imputer: str, error: str) -> dict[str, Any]:
    return {
        "densifier": densifier,
        "imputer": imputer,
        "n_models": 0,
        "n_benchmarks": 0,
        "density": np.nan,
        "params": {},
        "r2": np.nan,
        "rmse": np.nan,
        "factored": False,
        "error": error,
    }


def _matrix_key(dense: pd.DataFrame) -> str:
    """Identity of a densified matrix: its rows, columns and every value (NaN included)."""
    digest = hashlib.sha256()
    for part in (list(map(str, dense.index)), list(map(str, dense.columns))):
        digest.update("\x1f".join(part).encode() + b"\x1e")
    digest.update(np.ascontiguousarray(dense.to_numpy(dtype=float)).tobytes())
    return digest.hexdigest()


def _grid_cell(  # noqa: PLR0913 - keyword-only settings of one cell
    dense: pd.DataFrame,
    *,
    cell: dict[str, Any],
    spec: Any,
    random_state: int,
    gate: float,
    factoring: dict[str, int],
) -> tuple[dict[str, Any], OmegaResult | None]:
    """One densifier x imputer cell: the held-out score, then (when factored) the bifactor solution."""
    n, p = dense.shape
    imputer, grid = spec if isinstance(spec, tuple) else (spec, None)
    row: dict[str, Any] = {
        "densifier": cell["densifier"],
        "imputer": cell["imputer"],
        "n_models": n,
        "n_benchmarks": p,
        "density": cell["density"],
    }
    best, score = choose_and_score(imputer, grid, dense, random_state=random_state, gate=gate)
    row["params"] = {k: best.get_params()[k] for k in grid} if grid else {}
    row.update(r2=score.r2, rmse=score.rmse, factored=score.factored)
    if not score.factored:
        return row, None
    fitted = best.fit(dense)
    if isinstance(fitted, CorrelationImputer | OneSidedMC):  # correlation level: factor the surrogate
        corr = fitted.correlation_.to_numpy()
    else:
        corr = np.corrcoef(fitted.completed_.to_numpy(dtype=float), rowvar=False)
    info, result = factor_correlation(corr, n, random_state=random_state, **factoring)
    row.update(info)
    rank = best.get_params().get("rank") if isinstance(best, SoftImpute | OneSidedMC) else None
    row["imputer_rank"] = rank
    # Parallel analysis of a low-rank completion tends to return the completion's own rank.
    row["k_parallel_is_imputer_rank"] = bool(rank is not None and info["k_parallel"] == rank)
    if result is not None:
        row.update(
            ave=result.ave,
            omega_h=result.omega_h,
            omega_total=result.omega_total,
            phi_avg=result.phi_mean_offdiag,
        )
    return row, result


DENSIFIER_CHOICES = ("raw", "C", "R", "S")
#: Paper 002's imputers (Tables A2, A3), in its order: cell level, then correlation level.
IMPUTER_CHOICES = ("softimpute", "knn", "missforest", "corr_zero", "corr_mean", "corr_softimpute", "osmc", "usvt")
DEFAULT_DENSIFIERS = DENSIFIER_CHOICES
DEFAULT_IMPUTERS = IMPUTER_CHOICES
#: missForest's swept forest sizes (paper 002).
MISSFOREST_TREES = (50, 100, 200, 400)


def grid_spec(  # noqa: PLR0913 - keyword-only settings of one analysis
    densifiers: tuple[str, ...] = DEFAULT_DENSIFIERS,
    imputers: tuple[str, ...] = DEFAULT_IMPUTERS,
    *,
    target_density: float = 0.10,
    min_obs: int = 3,
    max_rank: int = 10,
    max_neighbors: int = 10,
    trees: tuple[int, ...] = MISSFOREST_TREES,
    random_state: int = 0,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The densifier and imputer mappings :func:`~evalhouse.analytics.factor.grid.factor_grid` takes.

    As paper 002 sweeps them, chosen by held-out R2 per cell: SoftImpute's, SoftImpute-on-the-
    correlation's and one-sided MC's rank (1..``max_rank``), kNN's k (1..``max_neighbors``),
    missForest's forest size (``trees``); zero fill, mean fill and USVT (eta = 0.01) have no swept
    parameter (their eigenvalue floor is chosen inside, on training cells).
    """
    if "all" in imputers:
        imputers = IMPUTER_CHOICES
    if "all" in densifiers:
        densifiers = DENSIFIER_CHOICES
    bad = [d for d in densifiers if d not in DENSIFIER_CHOICES] + [i for i in imputers if i not in IMPUTER_CHOICES]
    if bad:
        raise InputError(
            f"unknown densifier/imputer {bad}; densifiers {DENSIFIER_CHOICES}, imputers {IMPUTER_CHOICES} (or all)"
        )
    if not densifiers or not imputers:
        raise InputError("the grid needs at least one densifier and one imputer")
    if max_rank < 1 or max_neighbors < 1 or not trees or min(trees) < 1:
        raise InputError("max_rank, max_neighbors and every forest size must be >= 1")
    ranks = list(range(1, max_rank + 1))
    make = {
        "softimpute": lambda: (SoftImpute(random_state=random_state), {"rank": ranks}),
        "knn": lambda: (GowerKNNImputer(), {"n_neighbors": list(range(1, max_neighbors + 1))}),
        "missforest": lambda: (MissForestImputer(random_state=random_state), {"n_estimators": list(trees)}),
        "corr_zero": lambda: CorrelationImputer("zero", random_state=random_state),
        "corr_mean": lambda: CorrelationImputer("mean", random_state=random_state),
        "corr_softimpute": lambda: (CorrelationImputer("softimpute", random_state=random_state), {"rank": ranks}),
        "osmc": lambda: (OneSidedMC(), {"rank": ranks}),
        "usvt": lambda: CorrelationImputer("usvt", eta=0.01, random_state=random_state),
    }
    dens = {d: Densifier(d, target_density=target_density, min_obs=min_obs) for d in dict.fromkeys(densifiers)}
    return dens, {name: make[name]() for name in dict.fromkeys(imputers)}


def run_grid(
    wide: pd.DataFrame,
    *,
    dataset: str,
    n_simulations: int = 100,
    gate: float | None = None,
    **spec: Any,
) -> tuple[pd.DataFrame, AnalysisRecord]:
    """Paper 002's grid (Table 3) on ``wide``: one row per densifier x imputer cell.

    ``spec``: ``densifiers``, ``imputers`` and their settings (:func:`grid_spec`). Columns:
    ``densifier, imputer, n_models, n_benchmarks, density, params, r2, rmse, factored, k_parallel,
    k, ave, omega_h, omega_total, phi_avg, error``; a cell whose held-out R2 is below the gate
    (paper 002: 0.2) is not factored. ``dataset`` names the matrix in the record.
    """
    timer = Timer()
    gate = R2_GATE if gate is None else gate
    spec = {"densifiers": DEFAULT_DENSIFIERS, "imputers": DEFAULT_IMPUTERS, **spec}
    dens, imps = grid_spec(**spec)
    if wide.shape[1] < 3 or wide.shape[0] < 3:
        raise InputError(f"the matrix {dataset} is {wide.shape[0]} x {wide.shape[1]}; the grid needs at least 3 x 3")
    seed = int(spec.get("random_state", 0))
    table = factor_grid(wide, dens, imps, random_state=seed, n_simulations=n_simulations, gate=gate)
    for col in ("k_parallel", "imputer_rank", "k", "ave", "omega_h", "omega_total", "phi_avg", "error"):
        if col not in table.columns:
            table[col] = None if col == "error" else np.nan
    defaults = {"target_density": 0.10, "min_obs": 3, "max_rank": 10, "max_neighbors": 10, "random_state": 0}
    defaults["trees"] = list(MISSFOREST_TREES)
    params = {"dataset": dataset, **defaults, **spec, "n_simulations": n_simulations, "gate": gate}
    params["densifiers"], params["imputers"] = list(dens), list(imps)
    record = make_record(
        kind="factor_grid",
        estimator="evalhouse.analytics.factor.grid.factor_grid",
        params=params,
        inputs=[wide],
        timer=timer,
        diagnostics={
            "n_cells": len(table),
            "n_factored": int(table["factored"].sum()),
            "density": float(wide.notna().to_numpy().mean()),
        },
    )
    return table, record


def _cell_note(row: dict[str, Any], gate: float) -> str:
    parts = []
    if row.get("params"):
        parts.append(", ".join(f"{k}={v}" for k, v in row["params"].items()))
    if not row["factored"]:
        r2 = finite(row.get("r2"))
        parts.append(f"not factored: held-out R2 {r2:.3f} < {gate}" if r2 is not None else "not factored")
    if isinstance(row.get("error"), str) and row["error"]:
        parts.append(f"fit: {row['error']}")
    if row.get("k_parallel_is_imputer_rank") is True:
        parts.append(f"parallel analysis returned the imputer's rank ({int(row['imputer_rank'])})")
    twin = row.get("same_matrix_as")
    if isinstance(twin, str) and twin:
        parts.append(f"densified matrix identical to {twin}'s: fitted once, copied")
    return "; ".join(parts)


def factor_grid_rows(table: pd.DataFrame, *, gate: float) -> list[dict[str, Any]]:
    """JSON-ready rows of a grid table, in paper 002's Table 3 order (omega_h descending)."""
    rows = []
    for row in table.to_dict("records"):
        k = finite(row.get("k"))
        rows.append(
            {
                "densifier": row["densifier"],
                "imputer": row["imputer"],
                "n_models": int(row["n_models"]),
                "n_benchmarks": int(row["n_benchmarks"]),
                "density": finite(row["density"]),
                "params": row.get("params") or {},
                "heldout_r2": finite(row.get("r2")),
                "rmse": finite(row.get("rmse")),
                "factored": bool(row["factored"]),
                "k_parallel": None if finite(row.get("k_parallel")) is None else int(row["k_parallel"]),
                "imputer_rank": None if finite(row.get("imputer_rank")) is None else int(row["imputer_rank"]),
                "k_parallel_is_imputer_rank": row.get("k_parallel_is_imputer_rank") is True,
                "k": None if k is None else int(k),
                "ave": finite(row.get("ave")),
                "omega_h": finite(row.get("omega_h")),
                "omega_total": finite(row.get("omega_total")),
                "phi_avg": finite(row.get("phi_avg")),
                "note": _cell_note(row, gate),
            }
        )
    rows.sort(key=lambda r: (r["omega_h"] is None, -(r["omega_h"] or 0.0)))
    return rows


def grid_cells(table: pd.DataFrame, *, dataset: str, gate: float) -> list[dict[str, Any]]:
    """``analysis_factor_grid`` rows: one per densifier x imputer cell."""
    cells = [
        {
            "dataset": dataset,
            "densifier": r["densifier"],
            "imputer": r["imputer"],
            "n_models": r["n_models"],
            "n_benchmarks": r["n_benchmarks"],
            "density": r["density"],
            "k": r["k"],
            "ave": r["ave"],
            "omega_h": r["omega_h"],
            "phi_avg": r["phi_avg"],
            "heldout_r2": r["heldout_r2"],
            "factored": r["factored"],
            "note": r["note"] or None,
        }
        for r in factor_grid_rows(table, gate=gate)
    ]
    return cells
