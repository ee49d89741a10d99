"""Grid builders on a small hand-checkable matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalhouse.analytics.data import grids

NA = np.nan
WIDE = pd.DataFrame(
    {
        "a": [0.1, 0.2, 0.3, 0.4, NA],
        "b": [0.5, NA, 0.7, 0.8, 0.9],
        "c": [NA, NA, 0.1, 0.2, NA],
    },
    index=pd.Index(["m1", "m2", "m3", "m4", "m5"], name="model"),
)
META = pd.DataFrame(
    {
        "base": ["x", "x", "y", "y", "z"],
        "rank": [2.0, 5.0, NA, 1.0, 3.0],
        "compute": [1e24, NA, 3e24, NA, NA],
    },
    index=WIDE.index,
)


def test_floors_are_counted_not_scored() -> None:
    assert grids.covered(WIDE, 3) == ["a", "b"]
    assert grids.covered(WIDE, 3, candidates=["c", "b"]) == ["b"]
    assert list(grids.retained(WIDE, ["a", "b"], 2).index) == ["m1", "m3", "m4"]


def test_complete_and_dense() -> None:
    assert list(grids.complete_case(WIDE).index) == ["m3", "m4"]
    dense = grids.dense(WIDE, 0.8)  # a and b are observed for 4 of 5 rows, c for 2
    assert list(dense.columns) == ["a", "b"] and list(dense.index) == ["m1", "m3", "m4"]


def test_one_row_per_base_model_keeps_the_best_ranked_configuration() -> None:
    best = grids.one_per_base_model(WIDE, META["base"], META["rank"])
    assert list(best.index) == ["m2", "m4", "m5"]  # x: rank 5 beats 2; y: a NaN rank loses to 1
    combined = grids.one_per_base_model(WIDE, META["base"], META["rank"], combine=True)
    # x takes b from m1 (m2 has none); rows are labelled by the best configuration
    assert combined.loc["m2", "a"] == 0.2 and combined.loc["m2", "b"] == 0.5
    assert list(combined.index) == ["m2", "m4", "m5"]


def test_subsample_with_a_covariate_present() -> None:
    assert list(grids.with_covariate(WIDE, META, "compute").index) == ["m1", "m3"]
