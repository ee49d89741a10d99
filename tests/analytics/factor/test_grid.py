"""The paper-002 factor grid on a small synthetic sparse matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalhouse.analytics.factor import grid as grid_mod
from evalhouse.analytics.factor.grid import factor_correlation, factor_grid
from evalhouse.analytics.matrix.correlation import CorrelationImputer
from evalhouse.analytics.matrix.densify import Densifier
from evalhouse.analytics.matrix.impute import SoftImpute


def sparse_two_factor(n: int = 90, p: int = 14, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    L = np.zeros((p, 2))
    L[: p // 2, 0] = 0.8
    L[p // 2 :, 1] = 0.8
    F = rng.standard_normal((n, 2)) @ np.linalg.cholesky([[1, 0.5], [0.5, 1]]).T
    X = F @ L.T + 0.6 * rng.standard_normal((n, p))
    X[rng.random((n, p)) < 0.45] = np.nan
    return pd.DataFrame(X, columns=[f"b{j}" for j in range(p)])


def test_factor_grid_rows_and_columns():
    X = sparse_two_factor()
    noise = X.copy()
    noise.loc[:, :] = np.where(noise.notna(), np.random.default_rng(1).standard_normal(noise.shape), np.nan)
    table, solutions = factor_grid(
        X,
        {"C": Densifier("C", target_density=0.5), "S": Densifier("S", target_density=0.5)},
        {
            "softimpute": (SoftImpute(random_state=0), {"rank": [1, 2, 3]}),
            "corr_zero": CorrelationImputer("zero"),
        },
        random_state=0,
        return_solutions=True,
    )
    assert len(table) == 4
    assert {"k", "ave", "omega_h", "phi_avg", "r2", "factored", "k_parallel"} <= set(table.columns)
    done = table[table["factored"]]
    assert len(done) >= 2
    assert done["k"].between(1, 20).all() and done["omega_h"].between(0, 1).all()
    assert set(solutions) == set(zip(done["densifier"], done["imputer"], strict=True))
    noise_table = factor_grid(noise, {"C": Densifier("C")}, {"corr_zero": CorrelationImputer("zero")}, random_state=0)
    assert not noise_table["factored"].iloc[0]
    assert "k" not in noise_table.columns or pd.isna(noise_table["k"].iloc[0])


def test_factor_count_bounds_and_decrement():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 12))  # n << p: rank(R) <= 4 caps k at 3
    R = np.corrcoef(X, rowvar=False)
    info, result = factor_correlation(R, 5, random_state=0)
    assert info["k"] is not None and info["k"] <= 3
    assert result is not None and np.isfinite(result.omega_h)


def test_parameters_are_chosen_on_an_inner_mask_and_rank_is_flagged(monkeypatch) -> None:
    """The reported R2 is scored on cells the parameter choice never saw; k is set beside the rank."""
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.standard_normal((80, 2)) @ rng.standard_normal((2, 10)) + 0.3 * rng.standard_normal((80, 10)))
    X.columns = [f"b{j}" for j in range(10)]
    X = X.mask(rng.random(X.shape) < 0.3)
    seen: list[np.ndarray] = []
    real = grid_mod.select_imputer

    def spy(imputer, grid, frame, **kw):
        seen.append(frame.isna().to_numpy())
        return real(imputer, grid, frame, **kw)

    monkeypatch.setattr(grid_mod, "select_imputer", spy)
    table = factor_grid(X, {"C": Densifier("C")}, {"si": (SoftImpute(random_state=0), {"rank": [1, 2, 3]})})
    outer = grid_mod.holdout_mask(Densifier("C").fit(X).transform(X), random_state=0)
    # Every cell of the outer mask is missing in what the selection was given.
    assert seen and seen[0][outer].all()
    row = table.iloc[0]
    assert row["imputer_rank"] == row["params"]["rank"]
    assert row["k_parallel_is_imputer_rank"] == (row["k_parallel"] == row["imputer_rank"])


def test_identical_densified_matrices_are_fitted_once(monkeypatch) -> None:
    X = sparse_two_factor(seed=2)
    calls: list[tuple[int, int]] = []
    real = grid_mod._grid_cell

    def counting(dense, **kw):
        calls.append(dense.shape)
        return real(dense, **kw)

    monkeypatch.setattr(grid_mod, "_grid_cell", counting)
    # two densifiers that keep the same models and benchmarks: the same matrix, fitted once
    same = {"C": Densifier("C", target_density=0.5), "C2": Densifier("C", target_density=0.5)}
    table = factor_grid(X, same, {"softimpute": (SoftImpute(random_state=0), {"rank": [1, 2]})}, random_state=0)
    assert len(calls) == 1 and len(table) == 2
    a, b = table.iloc[0], table.iloc[1]
    assert a["densifier"] == "C" and b["densifier"] == "C2" and b["same_matrix_as"] == "C"
    assert a["factored"]  # a factored cell, so the copied solution is a real one
    for col in ("n_models", "n_benchmarks", "r2", "factored", "k", "omega_h"):
        assert a[col] == b[col], col
    rows = {r["densifier"]: r for r in grid_mod.factor_grid_rows(table, gate=0.2)}
    assert "identical to C's" in rows["C2"]["note"]
    # different matrices are each fitted
    calls.clear()
    factor_grid(X, {"C": Densifier("C", target_density=0.5), "R": Densifier("R", target_density=0.7)},
                {"corr_zero": CorrelationImputer("zero")}, random_state=0)  # fmt: skip
    assert len(calls) == 2 and calls[0] != calls[1]


def test_the_papers_whole_grid_runs_and_keeps_failures_as_cells() -> None:
    """raw x every imputer of paper 002 on a small matrix: one row per cell, swept parameters
    chosen, correlation-level cells factored from their surrogate; an imputer that fails on its
    matrix is a cell with the error, not a crash of the grid."""
    X = sparse_two_factor(n=60, p=8, seed=4)
    small = {"target_density": 0.5, "max_rank": 3, "max_neighbors": 3, "trees": (10,)}
    dens, imps = grid_mod.grid_spec(("raw",), ("all",), **small)
    assert list(imps) == list(grid_mod.IMPUTER_CHOICES)
    table = factor_grid(X, dens, imps, random_state=0, n_simulations=20)
    assert len(table) == 8
    swept = {"softimpute": "rank", "knn": "n_neighbors", "missforest": "n_estimators", "osmc": "rank"}
    for row in table.to_dict("records"):
        if row.get("error") and not np.isfinite(row["r2"]):
            continue  # a failed cell carries its error
        if row["imputer"] in swept:
            assert set(row["params"]) == {swept[row["imputer"]]}
    raw = table[table["densifier"] == "raw"]
    assert (raw["n_models"] == 60).all() and (raw["n_benchmarks"] == 8).all()
    assert table["factored"].any()


def test_a_failing_imputer_is_recorded_not_raised(monkeypatch) -> None:
    X = sparse_two_factor(n=50, p=8, seed=5)

    def boom(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(grid_mod, "choose_and_score", boom)
    table = factor_grid(X, {"C": Densifier("C")}, {"usvt": CorrelationImputer("usvt")}, random_state=0)
    row = table.iloc[0]
    assert not row["factored"] and "SVD did not converge" in row["error"] and row["n_models"] > 0
    note = grid_mod.factor_grid_rows(table, gate=0.2)[0]["note"]
    assert "fit: LinAlgError: SVD did not converge" in note


def test_grid_spec_refuses_unknown_names_and_defaults_to_the_papers_grid() -> None:
    dens, imps = grid_mod.grid_spec()
    assert list(dens) == ["raw", "C", "R", "S"] and len(imps) == 8
    assert list(grid_mod.grid_spec(("all",), ("knn",))[0]) == ["raw", "C", "R", "S"]
    _, grid = imps["softimpute"]
    assert grid["rank"] == list(range(1, 11))  # paper 002: rank 1..10
    assert imps["missforest"][1]["n_estimators"] == [50, 100, 200, 400]
    assert imps["corr_zero"].eig_floor is None  # chosen on training cells
    with pytest.raises(ValueError, match="unknown densifier/imputer"):
        grid_mod.grid_spec(("C",), ("mice",))
