"""The AA frames (the CSV test helper) and the paper-000 grids built from them."""

from __future__ import annotations

import pandas as pd
import pytest

from evalhouse.analytics.data.aa import AA_BENCHMARKS
from evalhouse.analytics.reproduce.paper000 import analysis_grids


def test_frames_from_csv(aa_frames):
    wide, meta = aa_frames
    assert wide.shape == (548, 14) and tuple(wide.columns) == AA_BENCHMARKS
    assert wide.index.equals(meta.index) and wide.index.is_unique
    assert list(meta.columns) == [
        "name",
        "base_model",
        "release_date",
        "is_reasoning",
        "is_open_weights",
        "total_parameters",
        "intelligence_index",
        "developer",
    ]
    assert pd.api.types.is_datetime64_any_dtype(meta["release_date"])
    assert meta["is_reasoning"].dtype == bool and wide.dtypes.eq(float).all()
    assert wide["gdpval"].notna().sum() == 117 and wide["apex_agents"].notna().sum() == 26


def test_r1_grid_sizes(aa_frames):
    wide, meta = aa_frames
    grids = analysis_grids(wide, meta)
    assert {k: len(v) for k, v in grids.items()} == {
        "retained": 421,
        "complete_case": 96,
        "dense": 409,
        "dedup": 89,
    }
    assert grids["dense"].shape[1] == 9
    assert len(analysis_grids(wide, meta, dedup_rule="best_row")["dedup"]) == 86
    with pytest.raises(ValueError, match=r"\['column_first', 'best_row'\]"):
        analysis_grids(wide, meta, dedup_rule="first")
