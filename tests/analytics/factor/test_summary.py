"""JSON entry point for `evalhouse analyze efa`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalhouse.analytics.base import frame_records
from evalhouse.analytics.factor.grid import factor_grid
from evalhouse.analytics.factor.summary import efa_summary, read_matrix_csv
from evalhouse.analytics.matrix.correlation import CorrelationImputer
from evalhouse.analytics.matrix.densify import Densifier


def test_efa_of_a_csv_shape_and_order(three_factor, tmp_path):
    X, _, _ = three_factor
    X = X[list(reversed(X.columns))]
    X.index = [f"model-{i}" for i in range(len(X))]
    X.index.name = "id"
    path = tmp_path / "scores.csv"
    X.to_csv(path)
    out = efa_summary(read_matrix_csv(path), n_simulations=200)
    json.dumps(out)  # plain Python types only
    assert out["items"] == list(X.columns)
    assert out["n_factors"] == out["n_factors_parallel"] == 3
    k, p = out["n_factors"], len(out["items"])
    assert np.asarray(out["loadings"]).shape == (p, k)
    assert np.asarray(out["sl_loadings"]).shape == (p, k + 1)
    assert np.asarray(out["phi"]).shape == (k, k)
    assert len(out["uniquenesses"]) == p and len(out["ssl"]) == k
    assert 0 < out["omega_h"] < 1


def test_efa_summary_fixed_k_and_complete_rows(three_factor):
    X, _, _ = three_factor
    X = X.copy()
    X.iloc[:5, 0] = np.nan
    out = efa_summary(X, n_factors=2, method="ml", rotation="promax")
    assert out["n_models"] == len(X) - 5 and out["n_factors_parallel"] is None
    assert out["rotation"] == "promax"
    with pytest.raises(ValueError, match="rotation"):
        efa_summary(X, n_factors=2, rotation="quartimax")


def test_factor_grid_of_a_csv_and_frame_records(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.standard_normal((40, 1)) @ np.full((1, 6), 0.8) + 0.5 * rng.standard_normal((40, 6)))
    X.columns = [f"b{j}" for j in range(6)]
    X[rng.random(X.shape) < 0.2] = np.nan
    X.index = [f"m{i}" for i in range(40)]
    path = tmp_path / "sparse.csv"
    X.to_csv(path)
    table = factor_grid(
        read_matrix_csv(path),
        densifiers={"C": Densifier("C")},
        imputers={"corr_zero": CorrelationImputer("zero")},
        random_state=0,
    )
    rows = frame_records(table)
    json.dumps(rows, allow_nan=False)
    assert rows[0]["densifier"] == "C" and rows[0]["n_benchmarks"] == 6
    payload = frame_records(pd.DataFrame({"x": [1.0, np.nan]}, index=pd.Index(["a", "b"], name="m")))
    assert payload == [{"m": "a", "x": 1.0}, {"m": "b", "x": None}]
