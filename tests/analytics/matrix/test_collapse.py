"""Paper 002's Std and Aggr name collapses as matrix rows (Appendix E)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalhouse.analytics.matrix.collapse import collapse_keys, collapsed_matrix

# (config id, name) pairs; the keys the paper's rules give them are spelled out in Appendix E's
# examples: dated snapshots, instruction tuning and dates in parentheses collapse at the variant
# level; the family level keeps the first alphabetic token of the family or the name.
NAMES = {
    "c1": "claude-3-5-sonnet-20241022",
    "c2": "claude-3-5-sonnet-20240620",
    "g1": "gpt-4o-2024-05-13",
    "g2": "GPT-4o (May '24)",
    "l1": "Meta-Llama-3-8B-Instruct",
    "l2": "Meta-Llama-3-8B",
}


@pytest.fixture
def meta() -> pd.DataFrame:
    return pd.DataFrame(
        {"name": NAMES, "family_name": None, "total_parameters": np.nan, "developer": None},
    )


@pytest.fixture
def long() -> pd.DataFrame:
    rows = [
        ("c1", "mmlu", 0.80), ("c2", "mmlu", 0.70), ("c1", "gpqa", 0.50),
        ("g1", "mmlu", 0.75), ("g2", "mmlu", 0.85), ("g2", "gpqa", 0.40),
        ("l1", "mmlu", 0.60), ("l2", "gpqa", 0.20),
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["config_id", "benchmark_id", "value"])
    frame.attrs["snapshot_id"] = "s1"
    return frame


def test_standard_collapse_averages_the_variants_of_one_model(meta: pd.DataFrame, long: pd.DataFrame) -> None:
    keys = collapse_keys(meta, "std")
    assert keys["c1"] == keys["c2"] and keys["g1"] == keys["g2"] and keys["l1"] == keys["l2"]
    assert len(set(keys)) == 3
    wide = collapsed_matrix(long, keys)
    assert wide.shape == (3, 2) and wide.attrs["snapshot_id"] == "s1"
    assert wide.loc[keys["c1"], "mmlu"] == pytest.approx(0.75)  # mean of 0.80 and 0.70
    assert wide.loc[keys["g1"], "mmlu"] == pytest.approx(0.80) and wide.loc[keys["g1"], "gpqa"] == 0.40
    assert wide.loc[keys["l1"], "mmlu"] == 0.60 and wide.loc[keys["l1"], "gpqa"] == 0.20


def test_aggressive_collapse_is_the_family(meta: pd.DataFrame, long: pd.DataFrame) -> None:
    keys = collapse_keys(meta, "aggr")
    assert keys.to_dict() == {"c1": "claude", "c2": "claude", "g1": "gpt", "g2": "gpt", "l1": "llama", "l2": "llama"}
    wide = collapsed_matrix(long, keys)
    assert wide.loc["gpt", "mmlu"] == pytest.approx(0.80)
    with pytest.raises(ValueError, match="collapse"):
        collapse_keys(meta, "family")


def test_a_name_without_a_key_keeps_its_own_row() -> None:
    meta = pd.DataFrame({"name": {"x9": "(...)"}, "family_name": None, "total_parameters": np.nan, "developer": None})
    assert collapse_keys(meta, "aggr").to_dict() == {"x9": "x9"}
