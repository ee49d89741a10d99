"""The AA CSV helper and the paper-000 base-model rule."""

from __future__ import annotations

import doctest

import pandas as pd
import pytest

from evalhouse.analytics import aa_frames
from evalhouse.analytics.aa_frames import AA_BENCHMARKS, strip_variant_suffixes
from evalhouse.analytics.paper000 import analysis_grids


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("Grok 4.3 (Non-reasoning)", "Grok 4.3"),
        ("Grok 4.3 (high)", "Grok 4.3"),
        ("DeepSeek V4 Flash (Reasoning, Max Effort)", "DeepSeek V4 Flash"),
        ("Nova 2.0 Pro Preview (low)", "Nova 2.0 Pro Preview"),
        ("Gemini 3.1 Pro Preview", "Gemini 3.1 Pro Preview"),
        (
            "Claude Sonnet 5 (Adaptive Reasoning, Low Effort)",
            "Claude Sonnet 5 (Adaptive Reasoning, Low Effort)",
        ),
        ("GPT-5.4 (xhigh)", "GPT-5.4 (xhigh)"),
        ("DeepSeek R1 (Jan '25)", "DeepSeek R1 (Jan '25)"),
        ("Sarvam 105B high", "Sarvam 105B"),
    ],
)
def test_strip_variant_suffixes(name, base):
    assert strip_variant_suffixes(name) == base


def test_doctests():
    assert doctest.testmod(aa_frames).failed == 0


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
